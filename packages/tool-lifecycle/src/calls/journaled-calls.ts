import { ToolCancelledError } from '@ca/tool-context';
import { fingerprintTool, type ApprovalGate } from '../approval';
import type { RegisteredTool } from '../catalog';
import { ToolApprovalDeniedError, ToolInvalidArgumentError, ToolJournalError, ToolOutcomeUnknownError, ToolRuntimeError } from '../errors';
import {
  MemoryCallJournal,
  changesOf,
  replayedResult,
  restoreChanges,
  resultOutcome,
  reviveError,
  thrownOutcome,
  type CallJournal,
  type InterruptedCall,
  type JournalCall,
  type JournalEntry,
  type JournalOutcome,
  type JournalReply,
} from '../journal';
import { codedError, extraOf, type Execution, type ExecutionRecorder } from '../observability';
import { capabilityInPlan, type ExecutionResult, type ToolDescriptor, type ToolInstance, type ToolResult } from '../tool';
import { settleCall } from './call-outcome';
import type { CallRunner } from './call-runner';
import type { ExecuteOptions } from './execute-options';
import { idempotencyKeyOf } from './idempotency';
import type { PlanCallRecords, PlanCalls } from './plan-calls';
import type { ResumeRules } from './resume-rules';
import { untilCancelled } from './until-cancelled';

/** Definition fingerprints, computed once per descriptor (descriptors do not change; a changed definition is a new descriptor). */
const fingerprints = new WeakMap<ToolDescriptor, string>();

function fingerprintOf(descriptor: ToolDescriptor): string {
  let fingerprint = fingerprints.get(descriptor);
  if (fingerprint === undefined) {
    fingerprint = fingerprintTool(descriptor);
    fingerprints.set(descriptor, fingerprint);
  }
  return fingerprint;
}

/** Longest step id a call may give. */
const MAX_STEP_LENGTH = 1_000;

/** What the journaled calls are made with: the runtime's parts they go through. */
export interface JournaledCallsSettings {
  readonly plans: PlanCallRecords;
  readonly recorder: ExecutionRecorder;
  readonly approvals: ApprovalGate;
  readonly calls: CallRunner;
  /** The service's hooks after the call (step 5½), when it has some. */
  readonly after: ((execution: Execution, tool: RegisteredTool, input: unknown, result: ToolResult) => ToolResult | Promise<ToolResult>) | undefined;
  /** Step 6½, the output budget, when the runtime has one: changes the result in place. */
  readonly limit: ((result: ExecutionResult<never>, ctx: Execution['ctx']) => ExecutionResult<never>) | undefined;
  /** The runtime's journal, for plans without their own; default one `MemoryCallJournal` per plan. */
  readonly journal: CallJournal | undefined;
  readonly resume: ResumeRules;
}

/** What the call made in this process gave, before the journal had it. */
type Live = { readonly result: ToolResult; readonly size: number; readonly handle?: unknown } | { readonly thrown: unknown };

/**
 * Steps 4½ to 7 of a call with the caller's step id, through the plan's call
 * journal: a call recorded as ended is answered from its record (its changes
 * put back into the plan, the trace saying `replayedFrom`); otherwise it is
 * approved, recorded as decided, made and recorded as ended. A call the journal
 * holds as begun but not ended — in flight when its host stopped — goes through
 * the resume rules: run again with the same idempotency key when that is safe
 * (the service's `options.resume`, the tool's reconciliation, its capability),
 * otherwise a person decides (approve: run it again; deny: `ToolOutcomeUnknownError`).
 */
export class JournaledCalls {
  constructor(private readonly settings: JournaledCallsSettings) {}

  /**
   * A call without a step id in a plan whose journal is its own or the
   * runtime's: refused, since nothing would name it after a restart.
   * @throws ToolInvalidArgumentError in such a plan.
   */
  refuseWithoutStep(execution: Execution, plan: PlanCalls | undefined): void {
    const journal = plan?.journal ?? this.settings.journal;
    if (journal === undefined) return;
    throw new ToolInvalidArgumentError({
      argument: 'options.step',
      expected: `a step id in plan '${execution.ctx.planId}', which keeps a journal (${journal.description})`,
      received: undefined,
      toolName: execution.toolName,
      planId: execution.ctx.planId,
      advice:
        "Give every call the caller's step or tool-call id (execute(name, input, ctx, { step })): a counter of this process would not name the same call after a restart.",
    });
  }

  /**
   * @throws ToolInvalidArgumentError for a step that is not a string of 1–1,000 characters;
   *   ToolJournalError, ToolOutcomeUnknownError, and what `execute` throws.
   */
  async execute(execution: Execution, tool: RegisteredTool, instance: ToolInstance, input: unknown, options: ExecuteOptions): Promise<ExecutionResult<never>> {
    const { toolName, ctx } = execution;
    const planId = ctx.planId;
    const step = options.step;
    if (typeof step !== 'string' || step.length === 0 || step.length > MAX_STEP_LENGTH) {
      throw new ToolInvalidArgumentError({
        argument: 'options.step',
        expected: `a string of 1–${MAX_STEP_LENGTH} characters`,
        received: step,
        toolName,
        planId,
      });
    }
    const { plans, approvals } = this.settings;
    const key = idempotencyKeyOf(plans, execution, input, step);
    extraOf(execution).step = step;
    const plan = plans.planCalls(ctx);
    const journal = plan.journal ?? this.settings.journal ?? (plan.memoryJournal ??= new MemoryCallJournal());
    // Concurrent calls of one step in this process: the first makes it, the others wait and are answered from the journal.
    for (let inFlight = plan.inFlight.get(key); inFlight !== undefined; inFlight = plan.inFlight.get(key)) {
      await untilCancelled(inFlight, ctx.cancellationToken, toolName, planId);
    }
    let done!: () => void;
    plan.inFlight.set(key, new Promise<void>((resolve) => (done = resolve)));
    try {
      if (journal.find !== undefined) {
        const found = await this.guard(journal, step, execution, () => (journal.find as NonNullable<CallJournal['find']>).call(journal, planId, key));
        if (found !== undefined && found.kind !== 'unknown') return this.replay(execution, found);
      }
      const approval = approvals.approve(execution, tool, input);
      if (approval !== undefined) await approval;
      const entry: JournalEntry = {
        planId,
        step,
        key,
        toolName,
        argumentsHash: execution.extra?.argumentsHash as string,
        fingerprint: fingerprintOf(tool.descriptor),
        ...(execution.extra?.approval === undefined ? {} : { approval: execution.extra.approval }),
        executionId: execution.executionId,
        ...(this.settings.resume.verdict(tool.descriptor, capabilityInPlan(tool.descriptor, ctx.policy), typeof instance.reconcile === 'function') === 'retry'
          ? { retrySafe: true }
          : {}),
      };
      let live: Live | undefined;
      const call: JournalCall = async (interrupted) => {
        live = undefined;
        const made = await this.call(execution, tool, instance, input, options, interrupted);
        live = made.live;
        return made.outcome;
      };
      let reply = await this.record(journal, entry, call, execution);
      // Outcome unknown: a person decides, and the decision is journaled as a run again (rerun n), made or refused.
      for (let rerun = 1; reply.outcome.kind === 'unknown'; rerun++) {
        const unknown = reply.outcome;
        const refusal = await this.askToRunAgain(execution, tool, input, unknown.host, step, key);
        live = undefined;
        const again: JournalEntry = { ...entry, executionId: execution.executionId, rerun };
        const refuse: JournalCall = async () => {
          live = { thrown: refusal };
          return thrownOutcome(execution.executionId, refusal, []);
        };
        reply = await this.record(journal, again, refusal === undefined ? call : refuse, execution);
      }
      return this.answer(execution, reply, live);
    } finally {
      plan.inFlight.delete(key);
      done();
    }
  }

  /** The call's answer: what this process made, or the recorded outcome replayed. */
  private answer(execution: Execution, reply: JournalReply, live: Live | undefined): ExecutionResult<never> {
    if (live === undefined || reply.replayed) return this.replay(execution, reply.outcome);
    if ('thrown' in live) throw live.thrown;
    return withHandle(this.settings.recorder.complete(execution, live.result, live.size), live.handle);
  }

  /** A recorded outcome as the caller's result (or thrown error), its changes back in the plan. */
  private replay(execution: Execution, outcome: JournalOutcome): ExecutionResult<never> {
    const { toolName, ctx } = execution;
    restoreChanges(ctx, outcome);
    if (outcome.kind !== 'unknown') extraOf(execution).replayedFrom = outcome.executionId;
    if (outcome.kind === 'result')
      return withHandle(this.settings.recorder.complete(execution, replayedResult(outcome, toolName, ctx.planId), outcome.sizeBytes), outcome.handle);
    if (outcome.kind === 'thrown') throw reviveError(outcome.error, toolName, ctx.planId, true);
    // A journal answering `unknown` as a replay without the decision that follows it: nothing to give back.
    throw new ToolJournalError({
      problem: 'mismatch',
      toolName,
      planId: ctx.planId,
      step: execution.extra?.step ?? '',
      journal: 'journal',
      recorded: 'an outcome still unknown',
    });
  }

  /** The call made in this process: steps 5 to 7 (or the resume rules first, for an interrupted call). Never rejects. */
  private async call(
    execution: Execution,
    tool: RegisteredTool,
    instance: ToolInstance,
    input: unknown,
    options: ExecuteOptions,
    interrupted: InterruptedCall | undefined,
  ): Promise<{ outcome: JournalOutcome; live?: Live }> {
    const { ctx, executionId } = execution;
    const from = ctx.changes.length;
    try {
      let raw: unknown;
      if (interrupted !== undefined) {
        const resumed = await this.resume(execution, tool, instance, input, interrupted);
        if (resumed === 'unknown')
          return { outcome: interrupted.host === undefined ? { kind: 'unknown', executionId } : { kind: 'unknown', executionId, host: interrupted.host } };
        raw = resumed === 'run' ? await this.settings.calls.dispatch(execution, tool, instance, input, options) : resumed.result;
      } else {
        raw = await this.settings.calls.dispatch(execution, tool, instance, input, options);
      }
      let result = raw as ToolResult;
      if (this.settings.after !== undefined) result = await this.settings.after(execution, tool, input, result);
      const settled: Live = this.limited(execution, settleCall(this.settings.calls, execution, tool, result));
      return {
        outcome: resultOutcome(
          executionId,
          { ...settled.result, ...(settled.handle === undefined ? {} : { handle: settled.handle }) },
          settled.size,
          changesOf(ctx, executionId, from),
        ),
        live: settled,
      };
    } catch (thrown) {
      // Journaled as the caller gets it: a tool's own exception as ToolExecutionError.
      return { outcome: thrownOutcome(executionId, codedError(execution, thrown), changesOf(ctx, executionId, from)), live: { thrown } };
    }
  }

  /** Step 6½ before the journal: an output over the budget kept behind a handle, so that the journal holds the handle and its preview. */
  private limited(execution: Execution, settled: { result: ToolResult; size: number }): { result: ToolResult; size: number; handle?: unknown } {
    const limit = this.settings.limit;
    if (limit === undefined || !settled.result.ok) return settled;
    const shaped = { ...settled.result, executionId: execution.executionId, toolName: execution.toolName, trace: { resultSizeBytes: settled.size } };
    const limited = limit(shaped as unknown as ExecutionResult<never>, execution.ctx) as unknown as ToolResult & { handle?: unknown };
    if (limited.handle === undefined) return settled;
    const result: Record<string, unknown> = { ok: true, output: limited.output };
    if (limited.content !== undefined) result['content'] = limited.content;
    if (limited.metadata !== undefined) result['metadata'] = limited.metadata;
    if (limited.changes !== undefined) result['changes'] = limited.changes;
    return { result: result as unknown as ToolResult, size: settled.size, handle: limited.handle };
  }

  /** The resume rules for a call in flight when its host stopped: run it again, its reconciled result, or unknown. */
  private async resume(
    execution: Execution,
    tool: RegisteredTool,
    instance: ToolInstance,
    input: unknown,
    interrupted: InterruptedCall,
  ): Promise<'run' | 'unknown' | { readonly result: unknown }> {
    const { ctx, toolName, executionId } = execution;
    // A definition that changed since the call was decided is not what was approved: a person decides.
    if (interrupted.entry.fingerprint !== fingerprintOf(tool.descriptor)) return 'unknown';
    const verdict = this.settings.resume.verdict(tool.descriptor, capabilityInPlan(tool.descriptor, ctx.policy), typeof instance.reconcile === 'function');
    if (verdict !== 'reconcile') return verdict === 'retry' ? 'run' : 'unknown';
    const idempotencyKey = execution.extra?.idempotencyKey as string;
    const view = ctx.forExecution({ executionId, toolName, cancellationToken: ctx.cancellationToken, idempotencyKey });
    execution.view = view;
    try {
      const found = await (instance.reconcile as NonNullable<ToolInstance['reconcile']>).call(instance, input, view, {
        idempotencyKey,
        ...(interrupted.host === undefined ? {} : { host: interrupted.host }),
        ...(interrupted.begunAt === undefined ? {} : { begunAt: interrupted.begunAt }),
      });
      if (found?.outcome === 'done') return { result: found.result };
      return found?.outcome === 'not-done' ? 'run' : 'unknown';
    } catch {
      return 'unknown';
    }
  }

  /** Asks a person whether a call whose outcome is unknown may run again: undefined when approved, else the error the step fails with. */
  private async askToRunAgain(
    execution: Execution,
    tool: RegisteredTool,
    input: unknown,
    host: string | undefined,
    step: string,
    key: string,
  ): Promise<ToolOutcomeUnknownError | undefined> {
    const { toolName, ctx } = execution;
    try {
      await this.settings.approvals.askToRunAgain(execution, tool.descriptor, input, host === undefined ? {} : { host });
      return undefined;
    } catch (error) {
      if (!ToolApprovalDeniedError.isInstance(error)) throw error;
      return new ToolOutcomeUnknownError({
        toolName,
        planId: ctx.planId,
        step,
        idempotencyKey: key,
        ...(host === undefined ? {} : { host }),
        decidedBy: error.denial === 'denied' ? (error.decidedBy ?? 'approval handler') : 'runtime',
        ...(error.reason === undefined ? {} : { reason: error.reason }),
        cause: error,
      });
    }
  }

  /** `journal.record`, its failures coded. */
  private record(journal: CallJournal, entry: JournalEntry, call: JournalCall, execution: Execution): Promise<JournalReply> {
    return this.guard(journal, entry.step, execution, () => journal.record(entry, call));
  }

  /** A journal operation whose failures are coded (`TOOL_JOURNAL_FAILED`), a coded error of the runtime's or a cancellation passed as it is. */
  private async guard<T>(journal: CallJournal, step: string, execution: Execution, operation: () => T | Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (ToolCancelledError.isInstance(error) || ToolRuntimeError.isInstance(error)) throw error;
      throw new ToolJournalError({
        problem: 'failed',
        toolName: execution.toolName,
        planId: execution.ctx.planId,
        step,
        journal: journal.description,
        cause: error,
      });
    }
  }
}

/** The result with the handle its output is kept under, when it has one. */
function withHandle(result: ExecutionResult<never>, handle: unknown): ExecutionResult<never> {
  if (handle !== undefined) (result as unknown as { handle: unknown }).handle = handle;
  return result;
}
