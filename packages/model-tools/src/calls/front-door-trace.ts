import { safeMessage } from '@ca/domain';
import {
  createExecutionId,
  toTraceError,
  type PlanContext,
  type ToolExecutionTrace,
  type ToolExecutionTraceApproval,
  type ToolExecutionTraceError,
} from '@ca/tool-context';

/** When a call that the front door refuses began: wall time and a monotonic reading, taken as it arrived. */
export interface CallStart {
  readonly wallMs: number;
  readonly monotonicMs: number;
}

/** Now, as a {@link CallStart}. */
export function callStart(): CallStart {
  return { wallMs: Date.now(), monotonicMs: performance.now() };
}

/** What a front-door refusal's trace says besides the plan and the time. */
export interface FrontDoorRefusal {
  /** The runtime's name of the tool, or the name the model used when no tool has it. */
  readonly toolName: string;
  /** Why: built from the error's fields, never from the arguments. */
  readonly error: ToolExecutionTraceError;
  /** The decision, when the call was refused by a person through the framework's approval flow. */
  readonly approval?: Omit<ToolExecutionTraceApproval, 'waitedMs'> & { readonly waitedMs?: number };
}

// A name the model wrote is a label: longer ones are not kept whole.
const MAX_NAME_LENGTH = 200;

/** A name the model wrote, as a trace or a message may show it: redacted, at most 200 characters. */
export function nameLabel(name: string): string {
  return safeMessage(name, MAX_NAME_LENGTH);
}

/**
 * Appends the trace of a call the front door refused before `runtime.execute`
 * (a name no tool has, arguments that are not JSON, a call a person rejected
 * in the framework's approval flow) to the plan, through the context's
 * `recordTrace` — the same record as any execution's, with an execution id
 * of its own, no result and the error's code. Returns it; never throws (a
 * plan whose context refuses the record gets none).
 */
export function recordFrontDoorTrace(plan: PlanContext, start: CallStart, refusal: FrontDoorRefusal): ToolExecutionTrace | undefined {
  const durationMs = Math.max(0, performance.now() - start.monotonicMs);
  const name = refusal.toolName.length === 0 ? '(no name)' : nameLabel(refusal.toolName);
  const trace: { -readonly [K in keyof ToolExecutionTrace]: ToolExecutionTrace[K] } = {
    executionId: createExecutionId(),
    planId: plan.planId,
    toolName: name,
    startedAt: new Date(start.wallMs).toISOString(),
    endedAt: new Date(start.wallMs + durationMs).toISOString(),
    durationMs,
    resultSizeBytes: 0,
    success: false,
    // Redacted and capped as the runtime's own traces are (a name or a reason the model or a person wrote may be anything).
    error: toTraceError(refusal.error) as ToolExecutionTraceError,
  };
  const approval = refusal.approval;
  if (approval !== undefined) {
    trace.approval = Object.freeze({
      decision: approval.decision,
      decidedBy: safeMessage(approval.decidedBy, MAX_NAME_LENGTH),
      waitedMs: approval.waitedMs ?? 0,
      ...(approval.reason === undefined ? {} : { reason: safeMessage(approval.reason) }),
    });
  }
  const frozen = Object.freeze(trace);
  try {
    plan.recordTrace(frozen);
    return frozen;
  } catch {
    return undefined;
  }
}
