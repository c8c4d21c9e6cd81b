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

/** Adds to a map of maps, dropping the oldest inner map past `MAX_PLANS`. */
function innerOf<V>(plans: Map<string, Map<string, V>>, planId: string): Map<string, V> {
  let inner = plans.get(planId);
  if (inner === undefined) {
    plans.set(planId, (inner = new Map()));
    if (plans.size > MAX_PLANS) plans.delete(plans.keys().next().value as string);
  }
  return inner;
}

/**
 * @internal The program calls a framework adapter ran up to their first
 * inner call that needs a person (or to their end), by plan and the
 * framework's call id: the approval request shows the pending inner call,
 * and the framework's execution of the call resumes the program, or returns
 * the outcome of a program that needed nobody.
 */
export class ProgramCalls {
  private readonly plans = new Map<string, Map<string, ProgramCallEntry>>();
  /** A resumed program that stopped at a further inner call, by plan and program: the next call of the same program asks about it. */
  private readonly continuations = new Map<string, Map<string, PendingProgramCall>>();

  get(planId: string, callId: string): ProgramCallEntry | undefined {
    return this.plans.get(planId)?.get(callId);
  }

  set(planId: string, callId: string, entry: ProgramCallEntry): void {
    const calls = innerOf(this.plans, planId);
    calls.delete(callId);
    calls.set(callId, entry);
    if (calls.size > MAX_ENTRIES_PER_PLAN) calls.delete(calls.keys().next().value as string);
  }

  /** The entry, removed: a framework runs a call once. */
  take(planId: string, callId: string): ProgramCallEntry | undefined {
    const calls = this.plans.get(planId);
    const entry = calls?.get(callId);
    if (entry === undefined || calls === undefined) return undefined;
    calls.delete(callId);
    if (calls.size === 0) this.plans.delete(planId);
    return entry;
  }

  setContinuation(planId: string, inputKey: string, pending: PendingProgramCall): void {
    const programs = innerOf(this.continuations, planId);
    programs.delete(inputKey);
    programs.set(inputKey, pending);
    if (programs.size > MAX_ENTRIES_PER_PLAN) programs.delete(programs.keys().next().value as string);
  }

  takeContinuation(planId: string, inputKey: string): PendingProgramCall | undefined {
    const programs = this.continuations.get(planId);
    const pending = programs?.get(inputKey);
    if (pending === undefined || programs === undefined) return undefined;
    programs.delete(inputKey);
    if (programs.size === 0) this.continuations.delete(planId);
    return pending;
  }

  forgetPlan(planId: string): void {
    this.plans.delete(planId);
    this.continuations.delete(planId);
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
