import { createSchemaValidator } from '@ca/schema';
import { instanceCachingFactory, type DependencyContainer, type FactoryFunction } from 'tsyringe';
import { APPROVAL_HANDLER, APPROVAL_KEY, APPROVAL_STORE } from './approval';
import { ToolInvalidArgumentError } from './errors';
import { INTERACTION_HANDLER, approvalThroughInteraction } from './interaction';
import { ToolLifecycleCache } from './plan';
import { createConsoleLogger, systemClock } from './observability';
import {
  PLAN_REGISTRY,
  RUNTIME_CLOCK,
  RUNTIME_LOGGER,
  SCHEMA_VALIDATOR,
  TOOL_LIFECYCLE_CACHE,
  TOOL_RUNTIME,
  TOOL_RUNTIME_OPTIONS,
  TOOL_SOURCE,
} from './tokens';
import { cacheOptionsOf, type ToolRuntimeOptions, type ToolRuntimeSettings } from './runtime-options';
import { RESULT_STORE } from './results';
import { TOOL_SEARCH_RERANKER } from './search';
import { ToolRuntime } from './tool-runtime';

type Resolver = Parameters<FactoryFunction<unknown>>[0];

/** The approval handler, store and key the service registered; approvals through its interaction handler when it has no approval handler. */
function approvalSettingsOf(resolver: Resolver): Pick<ToolRuntimeSettings, 'approvalHandler' | 'approvalStore' | 'approvalKey'> {
  const approvalHandler = resolver.isRegistered(APPROVAL_HANDLER, true)
    ? resolver.resolve(APPROVAL_HANDLER)
    : resolver.isRegistered(INTERACTION_HANDLER, true)
      ? approvalThroughInteraction(resolver.resolve(INTERACTION_HANDLER))
      : undefined;
  return {
    ...(approvalHandler === undefined ? {} : { approvalHandler }),
    ...(resolver.isRegistered(APPROVAL_STORE, true) ? { approvalStore: resolver.resolve(APPROVAL_STORE) } : {}),
    ...(resolver.isRegistered(APPROVAL_KEY, true) ? { approvalKey: resolver.resolve(APPROVAL_KEY) } : {}),
  };
}

/**
 * Registers the core of the runtime in `container`: the logger, clock and
 * schema validator (each only when not registered already, so a service can
 * register its own first), the options, the lifecycle cache and the
 * `ToolRuntime` itself under `TOOL_RUNTIME` (one instance per container that
 * resolves it). Sources are registered by the adapters, under `TOOL_SOURCE`,
 * and a plan registry, when the service has one, under `PLAN_REGISTRY`; both
 * are read when the runtime is first resolved, so register them before
 * resolving.
 *
 * Approval requests go to the `APPROVAL_HANDLER` the service registered; when
 * it registered none but has an `INTERACTION_HANDLER` (the one that answers
 * MCP elicitation), requests are asked through that one, as a form
 * (`approvalThroughInteraction`), so one handler answers every question the
 * runtime and its sources put to a person. `APPROVAL_STORE` and
 * `APPROVAL_KEY` are read when registered, and so is `RESULT_STORE` (where
 * outputs over `outputBudget` are kept).
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
    useFactory: instanceCachingFactory((resolver) => new ToolLifecycleCache(resolver.resolve(RUNTIME_LOGGER), cacheOptionsOf(options))),
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
          ...approvalSettingsOf(resolver),
          ...(resolver.isRegistered(PLAN_REGISTRY, true) ? { planRegistry: resolver.resolve(PLAN_REGISTRY) } : {}),
          ...(resolver.isRegistered(TOOL_SEARCH_RERANKER, true) ? { searchReranker: resolver.resolve(TOOL_SEARCH_RERANKER) } : {}),
          ...(resolver.isRegistered(RESULT_STORE, true) ? { resultStore: resolver.resolve(RESULT_STORE) } : {}),
        }),
    ),
  });
  return container;
}
