import { TOOL_SOURCE } from '@ca/tool-lifecycle';
import type { DependencyContainer } from 'tsyringe';
import { invalidOption } from './support';
import { createWrappedAdapter, type WrappedAdapterSettings, type WrappedToolSource } from './wrapped-tool-source';

/**
 * Creates a {@link WrappedToolSource} and registers it under `TOOL_SOURCE`
 * (multi-registration) in `container`.
 *
 * @example
 * const child = container.createChildContainer();
 * registerWrappedAdapter(child, { tools: [fromFunction(add, { … })] });
 * registerToolRuntime(child);
 * const runtime = child.resolve(TOOL_RUNTIME);
 *
 * @returns The registered source.
 * @throws WrappedToolError when `container` is not a tsyringe container, or the settings are invalid.
 */
export function registerWrappedAdapter(container: DependencyContainer, settings: WrappedAdapterSettings): WrappedToolSource {
  if (typeof container?.register !== 'function') {
    invalidOption({ call: 'registerWrappedAdapter' }, 'container', 'a tsyringe DependencyContainer (e.g. container.createChildContainer())', container);
  }
  const source = createWrappedAdapter(settings);
  container.register(TOOL_SOURCE, { useValue: source });
  return source;
}
