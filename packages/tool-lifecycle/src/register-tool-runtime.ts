import { createSchemaValidator } from '@ca/schema';
import { instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import { APPROVAL_HANDLER } from './approval-handler';
import { APPROVAL_KEY, APPROVAL_STORE } from './approval-store';
import { ToolInvalidArgumentError } from './errors/tool-invalid-argument-error';
import { ToolLifecycleCache } from './lifecycle-cache';
import { systemClock } from './runtime-clock';
import { createConsoleLogger } from './runtime-logger';
import {
  RUNTIME_CLOCK,
  RUNTIME_LOGGER,
  SCHEMA_VALIDATOR,
  TOOL_LIFECYCLE_CACHE,
  TOOL_RUNTIME,
  TOOL_RUNTIME_OPTIONS,
  TOOL_SOURCE,
} from './tokens';
import { ToolRuntime, cacheOptionsOf, type ToolRuntimeOptions } from './tool-runtime';

/**
 * Registers the core of the runtime in `container`: the logger, clock and
 * schema validator (each only when not registered already, so a service can
 * register its own first), the options, the lifecycle cache and the
 * `ToolRuntime` itself under `TOOL_RUNTIME` (one instance per container that
 * resolves it), with the `APPROVAL_HANDLER`, `APPROVAL_STORE` and
 * `APPROVAL_KEY` the service registered, if any. Sources are registered by the adapters, under `TOOL_SOURCE`;
 * they are read when the runtime is first resolved, so register adapters
 * before resolving.
 *
 * Never touches tsyringe's global container unless you pass it.
 * @throws ToolInvalidArgumentError when `container` is not a tsyringe container.
 */
export function registerToolRuntime(container: DependencyContainer, options: ToolRuntimeOptions = {}): DependencyContainer {
  if (typeof container?.register !== 'function' || typeof container.resolve !== 'function') {
    throw new ToolInvalidArgumentError({
      argument: 'container',
      expected: 'a tsyringe DependencyContainer',
      received: container,
      advice: 'Pass e.g. container.createChildContainer().',
    });
  }
  if (!container.isRegistered(RUNTIME_LOGGER, true)) container.register(RUNTIME_LOGGER, { useValue: createConsoleLogger() });
  if (!container.isRegistered(RUNTIME_CLOCK, true)) container.register(RUNTIME_CLOCK, { useValue: systemClock });
  if (!container.isRegistered(SCHEMA_VALIDATOR, true)) {
    container.register(SCHEMA_VALIDATOR, { useFactory: instanceCachingFactory(() => createSchemaValidator()) });
  }
  container.register(TOOL_RUNTIME_OPTIONS, { useValue: options });
  container.register(TOOL_LIFECYCLE_CACHE, {
    useFactory: instanceCachingFactory(
      (resolver) =>
        new ToolLifecycleCache(resolver.resolve(RUNTIME_LOGGER), cacheOptionsOf(options)),
    ),
  });
  container.register(TOOL_RUNTIME, {
    useFactory: instanceCachingFactory(
      (resolver) =>
        new ToolRuntime({
          sources: resolver.isRegistered(TOOL_SOURCE, true) ? resolver.resolveAll(TOOL_SOURCE) : [],
          validator: resolver.resolve(SCHEMA_VALIDATOR),
          logger: resolver.resolve(RUNTIME_LOGGER),
          clock: resolver.resolve(RUNTIME_CLOCK),
          cache: resolver.resolve(TOOL_LIFECYCLE_CACHE),
          options: resolver.resolve(TOOL_RUNTIME_OPTIONS),
          ...(resolver.isRegistered(APPROVAL_HANDLER, true) ? { approvalHandler: resolver.resolve(APPROVAL_HANDLER) } : {}),
          ...(resolver.isRegistered(APPROVAL_STORE, true) ? { approvalStore: resolver.resolve(APPROVAL_STORE) } : {}),
          ...(resolver.isRegistered(APPROVAL_KEY, true) ? { approvalKey: resolver.resolve(APPROVAL_KEY) } : {}),
        }),
    ),
  });
  return container;
}
