import type { InjectionToken } from 'tsyringe';
import type { SchemaValidator } from '@ca/schema';
import type { RuntimeClock, RuntimeLogger } from './observability';
import type { ToolLifecycleCache } from './plan';
import type { PlanRegistry } from './plan-registry';
import type { ToolRuntime, ToolRuntimeOptions } from './tool-runtime';
import type { ToolSource } from './tool';

/** Every registered {@link ToolSource} (multi-registration: adapters add one each). */
export const TOOL_SOURCE: InjectionToken<ToolSource> = Symbol.for('ca.tool-lifecycle.ToolSource');
/** The JSON Schema service used to validate inputs and outputs. */
export const SCHEMA_VALIDATOR: InjectionToken<SchemaValidator> = Symbol.for('ca.tool-lifecycle.SchemaValidator');
/** Where the runtime and adapters log. */
export const RUNTIME_LOGGER: InjectionToken<RuntimeLogger> = Symbol.for('ca.tool-lifecycle.RuntimeLogger');
/** Wall-clock and monotonic time. */
export const RUNTIME_CLOCK: InjectionToken<RuntimeClock> = Symbol.for('ca.tool-lifecycle.RuntimeClock');
/** Options of the runtime (timeouts, grace period, auto-activation). */
export const TOOL_RUNTIME_OPTIONS: InjectionToken<ToolRuntimeOptions> = Symbol.for('ca.tool-lifecycle.ToolRuntimeOptions');
/** The per-plan activation cache. */
export const TOOL_LIFECYCLE_CACHE: InjectionToken<ToolLifecycleCache> = Symbol.for('ca.tool-lifecycle.ToolLifecycleCache');
/** The runtime itself. */
export const TOOL_RUNTIME: InjectionToken<ToolRuntime> = Symbol.for('ca.tool-lifecycle.ToolRuntime');
/** Where the runtime announces its plans (optional: register one before resolving the runtime). */
export const PLAN_REGISTRY: InjectionToken<PlanRegistry> = Symbol.for('ca.tool-lifecycle.PlanRegistry');
