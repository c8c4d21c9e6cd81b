import type { RegisteredTool } from '../catalog';
import type { Execution, RuntimeLogger, TraceClock } from '../observability';
import type { ToolInstance, ToolResult } from '../tool';
import type { CallLimiter } from './call-limiter';
import type { ExecuteOptions } from './execute-options';
import type { PlanCallRecords } from './plan-calls';

/**
 * What the retries, the limits and the outcome of a call use of the
 * `CallRunner`: one attempt of the call, the recording of its changes, and
 * the state they share. Declared apart so that they need not import the
 * runner that calls them.
 */
export interface CallAttempts {
  readonly logger: RuntimeLogger;
  readonly clock: TraceClock;
  readonly plans: PlanCallRecords;
  /** Limiters of the `runtime` scope, by settings entry and tool. */
  readonly runtimeLimiters: Map<string, CallLimiter>;
  /** One attempt: the tool runs with its own view of the plan and a token that carries its deadline; `onSettled` when its own promise settles. */
  call(
    execution: Execution,
    tool: RegisteredTool,
    instance: ToolInstance,
    input: unknown,
    options: ExecuteOptions | undefined,
    onSettled?: () => void,
  ): Promise<ToolResult>;
  /** Step 7: the tool's changes, through its view. */
  recordChanges(execution: Execution, changes: unknown): void;
}
