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

/** An interrupted call, as a tool's {@link ToolInstance.reconcile} is told of it. */
export interface InterruptedToolCall {
  /** The call's idempotency key (also `ctx.idempotencyKey`): what the other side may know it by. */
  readonly idempotencyKey: string;
  /** Where it was in flight when its host stopped, when the journal knows. */
  readonly host?: string;
  /** When it was begun, ISO-8601, when the journal knows. */
  readonly begunAt?: string;
}

/**
 * What a tool's reconciliation found out about an interrupted call:
 * `done` — it happened, and `result` is what it gave (the runtime records it
 * as the call's result, the tool is not called); `not-done` — it did not
 * happen: the runtime calls the tool (with the same idempotency key);
 * `unknown` — it cannot tell: a person is asked.
 */
export type ToolReconciliation<O = unknown> =
  { readonly outcome: 'done'; readonly result: ToolResult<O> } | { readonly outcome: 'not-done' } | { readonly outcome: 'unknown' };

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
  /**
   * Finds out whether a call that was in flight when its plan's host stopped
   * did its effect (ask the other side by `call.idempotencyKey`, look for the
   * record it would have made). Asked only for such calls of a plan with a
   * journal, before the call would be made again, unless the service's
   * `options.resume` decides for the tool. A tool without one is run again
   * when it is idempotent or writes nothing, and asked about otherwise.
   * @throws anything — the outcome then counts as `unknown` (a person is asked).
   */
  reconcile?(input: I, ctx: ToolExecutionContext, call: InterruptedToolCall): Promise<ToolReconciliation<O>>;
}
