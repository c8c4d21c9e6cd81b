import { TOOL_SOURCE } from '@ca/tool-lifecycle';
import type { DependencyContainer } from 'tsyringe';
import { CustomToolRegistrationError } from './custom-tool-registration-error';
import { createCustomAdapter, type CustomAdapterSettings, type CustomToolSource } from './custom-tool-source';

/**
 * Creates a {@link CustomToolSource} serving `settings.tools` plus every class
 * registered under `CUSTOM_TOOL` in `container` (resolved on the first
 * discovery, so register them before or after this call, but before the
 * runtime lists its tools), and registers it under `TOOL_SOURCE`
 * (multi-registration).
 *
 * @example
 * const child = container.createChildContainer();
 * child.register(CUSTOM_TOOL, { useClass: WeatherTool });
 * registerCustomAdapter(child, { tools: [greet] });
 * registerToolRuntime(child);
 * const runtime = child.resolve(TOOL_RUNTIME);
 *
 * @returns The registered source.
 * @throws CustomToolRegistrationError when `container` is not a tsyringe
 *   container, or for an invalid or duplicated tool in `settings.tools`.
 */
export function registerCustomAdapter(container: DependencyContainer, settings: CustomAdapterSettings = {}): CustomToolSource {
  if (typeof container?.register !== 'function' || typeof container.resolveAll !== 'function') {
    throw new CustomToolRegistrationError({ problem: 'invalid-setting', setting: 'container', received: container });
  }
  const source = createCustomAdapter({ ...settings, container: settings.container ?? container });
  container.register(TOOL_SOURCE, { useValue: source });
  return source;
}
