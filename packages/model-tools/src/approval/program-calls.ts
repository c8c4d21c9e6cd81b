import { canonicalJson } from '@ca/tool-lifecycle';

/**
 * A program's inner call waiting for a person: what a framework's approval
 * request for the program tool (`code.run`) is about. Show this, not the
 * program, to the person (`FrameworkApprovals.pendingProgramCall`).
 */
export interface PendingProgramCall {
  /** The tool the program called (the runtime's name). */
  readonly toolName: string;
  /** Its arguments. */
  readonly input: unknown;
  /** The inner call's step, `<program's step>/<n>`. */
  readonly step: string;
  /** The step the program resumes under once the person has answered. */
  readonly resumeStep: string;
  /** The `code.run` execution that stopped at it. */
  readonly parentExecutionId?: string;
}

/** What a framework's approval question about one program call found, kept until the framework runs the call. */
export type ProgramCallEntry =
  | { readonly kind: 'pending'; readonly inputKey: string; readonly pending: PendingProgramCall }
  // The call's outcome (a `ModelToolCallOutcome`; typed by the adapters that keep it, since calls/ imports approval/).
  | { readonly kind: 'done'; readonly inputKey: string; readonly outcome: unknown };

/** Entries kept per plan: a framework that never runs the calls it asked about (a run abandoned at its approval) cannot grow this. */
const MAX_ENTRIES_PER_PLAN = 256;
/** Plans kept: plans that end without `forgetPlan` cannot grow this either (the oldest is dropped). */
const MAX_PLANS = 1_000;

/** Values by plan and key, the oldest dropped past `MAX_PLANS` plans or `MAX_ENTRIES_PER_PLAN` values a plan. */
class BoundedPlanMap<V> {
  private readonly plans = new Map<string, Map<string, V>>();

  get(planId: string, key: string): V | undefined {
    return this.plans.get(planId)?.get(key);
  }

  set(planId: string, key: string, value: V): void {
    let values = this.plans.get(planId);
    if (values === undefined) {
      this.plans.set(planId, (values = new Map()));
      if (this.plans.size > MAX_PLANS) this.plans.delete(this.plans.keys().next().value as string);
    }
    values.delete(key);
    values.set(key, value);
    if (values.size > MAX_ENTRIES_PER_PLAN) values.delete(values.keys().next().value as string);
  }

  /** The value, removed. */
  take(planId: string, key: string): V | undefined {
    const values = this.plans.get(planId);
    const value = values?.get(key);
    if (value === undefined || values === undefined) return undefined;
    values.delete(key);
    if (values.size === 0) this.plans.delete(planId);
    return value;
  }

  forget(planId: string): void {
    this.plans.delete(planId);
  }
}

/**
 * @internal The program calls a framework adapter ran up to their first
 * inner call that needs a person (or to their end), by plan and the
 * framework's call id: the approval request shows the pending inner call,
 * and the framework's execution of the call resumes the program, or returns
 * the outcome of a program that needed nobody.
 */
export class ProgramCalls {
  private readonly calls = new BoundedPlanMap<ProgramCallEntry>();
  /** A resumed program that stopped at a further inner call, by plan and program: the next call of the same program asks about it. */
  private readonly continuations = new BoundedPlanMap<PendingProgramCall>();

  get(planId: string, callId: string): ProgramCallEntry | undefined {
    return this.calls.get(planId, callId);
  }

  set(planId: string, callId: string, entry: ProgramCallEntry): void {
    this.calls.set(planId, callId, entry);
  }

  /** The entry, removed: a framework runs a call once. */
  take(planId: string, callId: string): ProgramCallEntry | undefined {
    return this.calls.take(planId, callId);
  }

  setContinuation(planId: string, inputKey: string, pending: PendingProgramCall): void {
    this.continuations.set(planId, inputKey, pending);
  }

  takeContinuation(planId: string, inputKey: string): PendingProgramCall | undefined {
    return this.continuations.take(planId, inputKey);
  }

  forgetPlan(planId: string): void {
    this.calls.forget(planId);
    this.continuations.forget(planId);
  }
}

/** The key that ties a framework's execution of a program call to the question asked about it: the canonical arguments. */
export function inputKeyOf(input: unknown): string {
  try {
    return canonicalJson(input);
  } catch {
    return '<not JSON>';
  }
}
