import { ToolCancelledError } from '@ca/tool-context';
import type { RegisteredTool } from '../catalog';
import type { ToolInstance, ToolResult } from '../tool';
import type { CallAttempts } from './call-attempts';
import type { RetryPlan, ToolCallPlan } from './call-settings';
import type { ExecuteOptions } from './execute-options';
import { extraOf, type Execution } from '../observability';
import { takeTurns } from './limits';
import { sleep } from './until-cancelled';

/**
 * Step 5 for a tool with retries or limits: each attempt takes a turn of
 * every limit (given back when the tool's own promise settles), and a
 * failure the tool marks retryable is tried again after a backoff, with the
 * same idempotency key, while attempts are left.
 */
export async function callWithSettings(
  runner: CallAttempts,
  execution: Execution,
  tool: RegisteredTool,
  instance: ToolInstance,
  input: unknown,
  options: ExecuteOptions | undefined,
  callPlan: ToolCallPlan,
): Promise<ToolResult> {
  const { ctx, toolName } = execution;
  const retry = callPlan.retry;
  for (let attempt = 1; ; attempt++) {
    const release = callPlan.limits.length === 0 ? undefined : await takeTurns(runner, execution, callPlan);
    let result: ToolResult | undefined;
    let thrown: unknown;
    let failed = false;
    try {
      result = await runner.call(execution, tool, instance, input, options, release);
    } catch (error) {
      failed = true;
      thrown = error;
    }
    const failure = failed ? thrown : result?.ok === false ? result.error : undefined;
    if (attempt > 1 || (retry !== undefined && isRetryable(failure))) extraOf(execution).attempts = attempt;
    if (retry === undefined || attempt >= retry.attempts || !isRetryable(failure) || ctx.cancellationToken.isCancelled) {
      if (failed) throw thrown;
      return result as ToolResult;
    }
    // What a failed attempt changed still happened: keep it for rollback.
    if (!failed) runner.recordChanges(execution, result?.changes);
    const delayMs = backoffOf(retry, attempt, failure);
    runner.logger.debug(
      `Tool '${toolName}' in plan '${ctx.planId}' failed with a retryable error (attempt ${attempt} of ${retry.attempts}); trying again in ${Math.round(delayMs)} ms.`,
      {
        toolName,
        planId: ctx.planId,
        executionId: execution.executionId,
      },
    );
    await sleep(delayMs, ctx.cancellationToken, toolName, ctx.planId);
  }
}

/**
 * A failure the tool marks retryable: a thrown error, or the error of a
 * failed result, whose `retryable` is `true`. A cancellation never is.
 */
function isRetryable(failure: unknown): boolean {
  if (typeof failure !== 'object' || failure === null || ToolCancelledError.isInstance(failure)) return false;
  try {
    return (failure as { retryable?: unknown }).retryable === true;
  } catch {
    return false;
  }
}

/** The wait before retry `attempt` (1-based): exponential, at most `maxBackoffMs`, between half and all of it; at least the failure's `retryAfterMs`, up to the same cap. */
function backoffOf(retry: RetryPlan, attempt: number, failure: unknown): number {
  const full = Math.min(retry.maxBackoffMs, retry.backoffMs * retry.multiplier ** (attempt - 1));
  const delay = full / 2 + Math.random() * (full / 2);
  const asked = (failure as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof asked === 'number' && Number.isFinite(asked) && asked > 0 ? Math.max(delay, Math.min(asked, retry.maxBackoffMs)) : delay;
}
