import * as restate from '@restatedev/restate-sdk';
import { ToolJournalError, type CallJournal, type JournalCall, type JournalEntry, type JournalOutcome, type JournalReply } from '@ca/tool-lifecycle';

/** What the journal writes before a call: the entry, where and when it was decided, and in which attempt. */
interface Decided {
  readonly entry: JournalEntry;
  readonly host: string;
  readonly begunAt: string;
  readonly attempt: string;
}

/**
 * Awaits a Restate operation, and on the invocation's cancellation tells
 * `onCancel` (which cancels the plan, so that a running tool sees its signal)
 * and goes on waiting for the operation: a call ends as a cancelled call
 * rather than being abandoned while it runs.
 */
export async function untilSettled<T>(ctx: restate.Context, operation: restate.RestatePromise<T>, onCancel: () => void): Promise<T> {
  const cancelled = Symbol('cancelled');
  const internal = ctx as unknown as restate.internal.ContextInternal;
  const first = await restate.RestatePromise.race([operation, internal.cancellation().map(() => cancelled)]);
  if (first !== cancelled) return first as T;
  onCancel();
  return await operation;
}

/**
 * The call journal of one durable plan, on its Restate workflow: each call is
 * one journaled step when the resume rules would run it again anyway
 * (`entry.retrySafe`: idempotent, or writes nothing), else two journaled steps — `decide <step>` (the entry, the host, the attempt),
 * written before the tool runs, then `call <step>`, whose result is the
 * call's outcome. A replay answers both from Restate's journal. When the
 * `call` step runs in an attempt after the one that decided it, the call was
 * in flight when a host died: it is handed to the runtime's resume rules
 * (`call(interrupted)`) instead of being run blindly.
 */
export class RestateCallJournal implements CallJournal {
  readonly description: string;

  constructor(
    private readonly ctx: restate.WorkflowContext,
    private readonly attempt: string,
    private readonly host: string,
    private readonly onCancel: () => void,
  ) {
    this.description = `restate workflow ${ctx.key}`;
  }

  async record(entry: JournalEntry, call: JournalCall): Promise<JournalReply> {
    const name = entry.rerun === undefined ? entry.step : `${entry.step} (run again ${entry.rerun})`;
    if (entry.retrySafe === true) return this.recordOnce(entry, name, call);
    const decided = await untilSettled(
      this.ctx,
      this.ctx.run<Decided>(`decide ${name}`, () => ({ entry, host: this.host, begunAt: new Date().toISOString(), attempt: this.attempt })),
      this.onCancel,
    );
    if (decided.entry.key !== entry.key) {
      throw new ToolJournalError({
        problem: 'mismatch',
        toolName: entry.toolName,
        planId: entry.planId,
        step: entry.step,
        journal: this.description,
        recorded: `tool '${decided.entry.toolName}', step '${decided.entry.step}'${decided.entry.key === entry.key ? '' : ' with other arguments'}`,
      });
    }
    let ran = false;
    const outcome = await untilSettled(
      this.ctx,
      this.ctx.run<JournalOutcome>(`call ${name}`, async () => {
        ran = true;
        return call(decided.attempt === this.attempt ? undefined : { entry: decided.entry, host: decided.host, begunAt: decided.begunAt });
      }),
      this.onCancel,
    );
    return { outcome, replayed: !ran };
  }

  /**
   * A call the resume rules would run again if it were interrupted (`entry.retrySafe`):
   * one journaled step, `call <step>`, holding its key and its outcome. An
   * attempt that dies inside it leaves nothing, and the next runs it again
   * with the same idempotency key — what the rules would decide. Half the
   * round trips to Restate of a call that needs the entry first.
   */
  private async recordOnce(entry: JournalEntry, name: string, call: JournalCall): Promise<JournalReply> {
    let ran = false;
    const recorded = await untilSettled(
      this.ctx,
      this.ctx.run<Once>(`call ${name}`, async () => {
        ran = true;
        return { key: entry.key, toolName: entry.toolName, outcome: await call(undefined) };
      }),
      this.onCancel,
    );
    if (recorded.key !== entry.key) {
      throw new ToolJournalError({
        problem: 'mismatch',
        toolName: entry.toolName,
        planId: entry.planId,
        step: entry.step,
        journal: this.description,
        recorded: `tool '${recorded.toolName}', step '${entry.step}'${recorded.toolName === entry.toolName ? ' with other arguments' : ''}`,
      });
    }
    return { outcome: recorded.outcome, replayed: !ran };
  }
}

/** What the one step of a retry-safe call holds. */
interface Once {
  readonly key: string;
  readonly toolName: string;
  readonly outcome: JournalOutcome;
}
