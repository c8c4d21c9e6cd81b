import type { PlanContext } from '@ca/tool-context';
import type { FrameworkApproval, FrameworkApprovals } from '../approval/framework-approvals';
import { inputKeyOf, type PendingProgramCall } from '../approval/program-calls';
import type { ModelToolCallOutcome, ModelTools, RunOptions } from '../calls/model-tools';

/** The code `@ca/code-mode` ends a run with when an inner call waits for a person (`suspend`). */
const PENDING_CODE = 'CODE_APPROVAL_PENDING';

/**
 * How a framework adapter asks about and runs the program tool (`code.run`)
 * when the runtime's approval handler is a {@link FrameworkApprovals}: the
 * framework's approval request is about the program's first inner call that
 * needs a person, not about the program.
 */
export interface ProgramGate {
  /**
   * The framework's question before it runs the call: runs the program up to
   * its first inner call that needs a person (the calls before it run, as
   * they would in any run). True when it stopped there — the framework then
   * asks, and `FrameworkApprovals.pendingProgramCall(plan, callId)` says
   * about what. A program that needed nobody ran to its end: its outcome is
   * kept for {@link run}. A call the framework asks about again is answered
   * from what was found, without running anything.
   */
  needsApproval(input: unknown, callId: string | undefined, options?: RunOptions): Promise<boolean>;
  /**
   * The framework's execution of the call: the kept outcome of a program that
   * needed nobody; a program that waited, resumed under its resume step with
   * the person's answer granted for that inner call only (the calls it had
   * made are answered from the plan's journal); else an ordinary run.
   */
  run(input: unknown, callId: string | undefined, approval: FrameworkApproval | undefined, options?: RunOptions): Promise<ModelToolCallOutcome>;
  /** The inner call this framework call waits at, when it does. */
  pending(callId: string | undefined): PendingProgramCall | undefined;
}

/**
 * The gate of the program tool, or `undefined` for any other tool, without
 * approvals, or when the tool is the one `ModelTools.programToolName` names
 * but the plan refuses it.
 */
export function programGate(
  modelTools: ModelTools,
  plan: PlanContext,
  approvals: FrameworkApprovals | undefined,
  name: string,
  providerName: string,
): ProgramGate | undefined {
  if (approvals === undefined || name !== modelTools.programToolName) return undefined;
  const { programs } = approvals;
  const planId = plan.planId;

  // What ties the framework's execution to its question: the arguments as the runtime will take them (repaired, strict nulls out).
  const keyOf = async (input: unknown, options: RunOptions | undefined): Promise<string> =>
    inputKeyOf((await modelTools.prepare(name, { value: input }, { strictNulls: options?.strictNulls === true }))?.value ?? input);

  const runOptions = (callId: string | undefined, options: RunOptions | undefined, step?: string): RunOptions => ({
    ...options,
    providerName,
    ...(callId === undefined ? {} : { callId }),
    ...(step === undefined ? {} : { step }),
  });

  return {
    async needsApproval(input, callId, options) {
      // A call id that cannot be the run's step would make the framework's execution a new run: every inner call twice.
      if (typeof callId !== 'string' || modelTools.stepOfCall(name, callId, providerName) === undefined) return false;
      const inputKey = await keyOf(input, options);
      const known = programs.get(planId, callId);
      if (known !== undefined && known.inputKey === inputKey) return known.kind === 'pending';
      // The same program again after its resumed run stopped at a further inner call: that call is what this one asks about.
      const continued = programs.takeContinuation(planId, inputKey);
      if (continued !== undefined) {
        programs.set(planId, callId, { kind: 'pending', inputKey, pending: continued });
        return true;
      }
      if (!approvals.mayAsk(plan)) return false;
      const outcome = await modelTools.run(plan, name, { value: input }, runOptions(callId, options));
      const pending = pendingOf(outcome);
      programs.set(planId, callId, pending === undefined ? { kind: 'done', inputKey, outcome } : { kind: 'pending', inputKey, pending });
      return pending !== undefined;
    },

    async run(input, callId, approval, options) {
      const inputKey = await keyOf(input, options);
      const entry = callId === undefined ? undefined : programs.take(planId, callId);
      if (entry === undefined || entry.inputKey !== inputKey) return modelTools.run(plan, name, { value: input }, runOptions(callId, options));
      if (entry.kind === 'done') return entry.outcome as ModelToolCallOutcome;
      const { pending } = entry;
      const release = approval === undefined ? undefined : approvals.grant(plan, pending.toolName, pending.input, approval);
      let outcome: ModelToolCallOutcome;
      try {
        outcome = await modelTools.run(plan, name, { value: input }, runOptions(callId, options, pending.resumeStep));
      } finally {
        release?.();
      }
      // Stopped at a further inner call: the framework asked once for this call; the same program called again asks about that one.
      const next = pendingOf(outcome);
      if (next !== undefined) programs.setContinuation(planId, inputKey, next);
      return outcome;
    },

    pending(callId) {
      return callId === undefined ? undefined : approvals.pendingProgramCall(plan, callId);
    },
  };
}

/** The inner call a program's outcome waits at (`CODE_APPROVAL_PENDING` of `@ca/code-mode`), read without loading it. */
function pendingOf(outcome: ModelToolCallOutcome): PendingProgramCall | undefined {
  if (outcome.ok || outcome.error?.code !== PENDING_CODE) return undefined;
  const pending = (outcome.error as { pending?: Partial<PendingProgramCall> }).pending;
  if (typeof pending !== 'object' || pending === null) return undefined;
  const { toolName, input, step, resumeStep, parentExecutionId } = pending;
  if (typeof toolName !== 'string' || typeof step !== 'string' || typeof resumeStep !== 'string') return undefined;
  return Object.freeze({ toolName, input, step, resumeStep, ...(typeof parentExecutionId === 'string' ? { parentExecutionId } : {}) });
}
