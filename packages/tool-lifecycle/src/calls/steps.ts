import { ToolInvalidArgumentError } from '../errors';
import type { PlanCallRecords } from './plan-calls';
import type { ExecutionResult, ToolResult } from '../tool';
import { extraOf, type Execution } from '../observability';
import { idempotencyKeyOf } from './idempotency';
import { untilCancelled } from './until-cancelled';

/** Longest step id a call may give. */
const MAX_STEP_LENGTH = 1_000;

/** A successful result of the same step recorded in the plan, returned instead of calling. */
export interface ReplayedStep {
  readonly result: ToolResult;
  readonly sizeBytes: number;
}

/**
 * A call with the caller's step id: the result recorded for its key in the
 * plan, or — after any call of the same key in flight has settled — the
 * function that ends this one's turn (call it once the call has settled).
 * @throws ToolInvalidArgumentError for a step that is not a string of 1–1,000 characters.
 */
export async function reserveStep(plans: PlanCallRecords, execution: Execution, input: unknown, step: unknown): Promise<(() => void) | ReplayedStep> {
  const { toolName, ctx } = execution;
  if (typeof step !== 'string' || step.length === 0 || step.length > MAX_STEP_LENGTH) {
    throw new ToolInvalidArgumentError({
      argument: 'options.step',
      expected: `a string of 1–${MAX_STEP_LENGTH} characters`,
      received: step,
      toolName,
      planId: ctx.planId,
    });
  }
  const key = idempotencyKeyOf(plans, execution, input, step);
  const plan = plans.planCalls(ctx);
  for (;;) {
    const recorded = plan.results.get(key);
    if (recorded !== undefined) {
      extraOf(execution).replayedFrom = recorded.executionId;
      return { result: recorded.result, sizeBytes: recorded.sizeBytes };
    }
    const inFlight = plan.inFlight.get(key);
    if (inFlight === undefined) break;
    await untilCancelled(inFlight, ctx.cancellationToken, toolName, ctx.planId);
  }
  let done!: () => void;
  plan.inFlight.set(key, new Promise<void>((resolve) => (done = resolve)));
  return () => {
    plan.inFlight.delete(key);
    done();
  };
}

/** Keeps a successful result of an explicit step, without its changes (they were recorded once, by this execution). */
export function recordStep(plans: PlanCallRecords, execution: Execution, result: ExecutionResult<never>): void {
  const idempotencyKey = execution.extra?.idempotencyKey;
  if (idempotencyKey === undefined || !result.ok) return;
  const kept: { ok: true; output: unknown; content?: unknown; metadata?: unknown } = { ok: true, output: result.output };
  if (result.content !== undefined) kept.content = result.content;
  if (result.metadata !== undefined) kept.metadata = result.metadata;
  plans
    .planCalls(execution.ctx)
    .record(idempotencyKey, { executionId: execution.executionId, result: kept as ToolResult, sizeBytes: result.trace.resultSizeBytes });
}
