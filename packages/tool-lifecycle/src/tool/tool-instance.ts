import type { ToolExecutionContext } from '@ca/tool-context';
import type { ToolDescriptor } from './tool-descriptor';
import type { ToolResult } from './tool-result';

/**
 * Progress a tool reports during one execution (MCP progress notifications,
 * a long download, …). `total` is absent when unknown.
 */
export interface ToolProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/**
 * Per-execution options a tool may use besides its context: where to report
 * progress. Passed as the third argument of `execute`.
 */
export interface ToolCallOptions {
  readonly onProgress?: (progress: ToolProgress) => void;
}

/**
 * A tool that can run. Instances are plan-independent: whatever a tool holds
 * for a plan (a session, a loaded body) it keys by `ctx.planId` between
 * `activate` and `deactivate`, which the runtime calls at most once and
 * exactly once respectively per (plan, tool).
 */
export interface ToolInstance<I = unknown, O = unknown> {
  readonly descriptor: ToolDescriptor;
  /**
   * Prepares the tool for one plan. Called at most once per (plan, tool),
   * before the first execution in that plan.
   * @throws anything — the runtime wraps it in `ToolActivationError`.
   */
  activate?(ctx: ToolExecutionContext): Promise<void>;
  /**
   * Runs the tool once. `ctx` is a per-execution view: `ctx.cancellationToken`
   * fires on plan cancellation and on this execution's deadline;
   * `ctx.executionId` and `ctx.toolName` are set.
   * @throws anything — the runtime wraps it in `ToolExecutionError`.
   */
  execute(input: I, ctx: ToolExecutionContext, options?: ToolCallOptions): Promise<ToolResult<O>>;
  /**
   * Releases what `activate` acquired for the plan. Called exactly once per
   * successful activation, after the plan's executions settled.
   * @throws anything — the runtime wraps it in `ToolDeactivationError`.
   */
  deactivate?(ctx: ToolExecutionContext): Promise<void>;
}
