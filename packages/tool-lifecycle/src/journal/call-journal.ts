import type { Change, ToolExecutionTraceApproval } from '@ca/tool-context';

/**
 * A call as it is decided, written to the journal before the tool runs: after
 * the policy, the input check, the hooks before the call and the approval,
 * right before the call.
 */
export interface JournalEntry {
  readonly planId: string;
  /** The caller's step or tool-call id (`execute(…, { step })`): with the plan id, what names the call in every process. */
  readonly step: string;
  /**
   * Where the call is recorded: its idempotency key (SHA-256 of the plan id,
   * the tool, the step and the canonical arguments; see the README's
   * "Effects that happen once"), the same in every process. The tool got the
   * same key as `ctx.idempotencyKey`.
   */
  readonly key: string;
  readonly toolName: string;
  /** SHA-256 (base64url) of the canonical JSON of the arguments: the arguments themselves are not journaled. */
  readonly argumentsHash: string;
  /** The tool's definition fingerprint (`fingerprintTool`) when the call was decided. */
  readonly fingerprint: string;
  /** What the approval step decided, when the call needed approval. */
  readonly approval?: ToolExecutionTraceApproval;
  /** The execution that decided the call (its trace's `executionId`). */
  readonly executionId: string;
  /** 1, 2, …: a run again of a call whose outcome was unknown, that a person (or the tool's reconciliation) let run again. */
  readonly rerun?: number;
  /**
   * True when the resume rules would run this call again, with the same key,
   * if it were interrupted (the service's `options.resume` says `retry`, or the
   * tool has no reconciliation and is idempotent or writes nothing). A journal
   * may then record the call once, with its outcome, instead of writing the
   * entry before it: the only use of the entry alone — telling an interrupted
   * call from a new one — would lead to the same run again. The definition
   * check of an interrupted call (its fingerprint) is then not made.
   */
  readonly retrySafe?: boolean;
}

/** A failure as the journal keeps it: the error's identity and its message, redacted and capped as in traces. */
export interface JournaledError {
  readonly name: string;
  readonly code: string;
  readonly message: string;
  /** `retryable` of the original, when it said. */
  readonly retryable?: boolean;
  /** For a `ToolExecutionError`: how the tool failed (`threw`, `reported`, …) and its cause, as a journaled error. */
  readonly failure?: string;
  readonly cause?: JournaledError;
  /** For a `ToolCancelledError`: the reason. */
  readonly reason?: string;
  /** For a `ToolOutcomeUnknownError`: its step, idempotency key, host, who decided and why. */
  readonly fields?: Readonly<Record<string, string>>;
}

/**
 * How a journaled call ended, as the caller got it — after the hooks after the
 * call, the output check and the output budget (an output over it is
 * journaled as its handle and preview, which a replay gives back: give durable
 * plans a result store every host reaches, such as `RedisResultStore`):
 * - `result`: a `ToolResult` (`ok` or not), with the tool's output as the
 *   caller saw it (a hook's redaction is kept, so nothing a guardrail withheld
 *   is journaled);
 * - `thrown`: `execute` threw (the tool threw, the call was cancelled or timed out), the
 *   error as the caller got it (a tool's own exception as `ToolExecutionError`);
 * - `unknown`: the call was in flight when its host stopped, and the resume
 *   rules could not tell what happened: the runtime asks a person next.
 *
 * `changes` are what the call recorded in the plan, `undo` data included, so
 * that a plan resumed in another process can still roll back (`createCheckpoint`,
 * `rollback` of `@ca/adapters-builtin`).
 */
export type JournalOutcome =
  | {
      readonly kind: 'result';
      readonly executionId: string;
      readonly ok: boolean;
      readonly output?: unknown;
      readonly content?: unknown;
      readonly metadata?: unknown;
      /** The handle the output is kept under, when it was over the budget (`output` is then its preview). */
      readonly handle?: unknown;
      readonly error?: JournaledError;
      readonly sizeBytes: number;
      readonly changes?: readonly Change[];
    }
  | { readonly kind: 'thrown'; readonly executionId: string; readonly error: JournaledError; readonly changes?: readonly Change[] }
  | { readonly kind: 'unknown'; readonly executionId: string; readonly host?: string };

/** A call whose entry the journal holds without an outcome: it was in flight when its host (process) stopped. */
export interface InterruptedCall {
  /** The entry as it was first recorded. */
  readonly entry: JournalEntry;
  /** Where it was in flight, as the journal knows it (`host-a pid 4242`). */
  readonly host?: string;
  /** When it was begun, ISO-8601, when the journal knows. */
  readonly begunAt?: string;
}

/**
 * Makes the call, or decides what to do about one that was interrupted: given
 * by the runtime to {@link CallJournal.record}. With `interrupted`, the
 * runtime applies its resume rules (retry an idempotent tool with the same
 * key, ask the tool's reconciliation, or end as `unknown` without calling).
 * Never rejects: every outcome, a thrown error included, is a {@link JournalOutcome}.
 */
export type JournalCall = (interrupted: InterruptedCall | undefined) => Promise<JournalOutcome>;

/** What {@link CallJournal.record} answers. */
export interface JournalReply {
  readonly outcome: JournalOutcome;
  /** True when the outcome was recorded before and `call` was not run for it. */
  readonly replayed: boolean;
}

/**
 * Where a plan's calls are recorded, so that a plan made again — in this
 * process, or resumed in another after its host died — does not run a step
 * twice. The runtime consults it for every call made with a step id
 * (`execute(…, { step })`): the call is recorded when it is decided (the
 * {@link JournalEntry}) and when it ends (the {@link JournalOutcome}).
 *
 * The runtime's default is an in-memory journal per plan (`MemoryCallJournal`):
 * a plan's records last as long as its context. A durable journal — on an
 * engine such as Restate (`@ca/plan-restate`), or a store of the service's own —
 * is given per plan (`createPlan({ journal })`) or per runtime
 * (`new ToolRuntime({ journal })`). In a plan with such a journal, every call
 * must carry a step id: a counter of this process would not name the same call
 * after a restart.
 *
 * Contract of {@link CallJournal.record}:
 * - no record under `entry.key`: write the entry (durably, before anything
 *   else: the tool runs next), run `call(undefined)`, write its outcome, answer
 *   `{ outcome, replayed: false }`;
 * - a record with an outcome: answer `{ outcome, replayed: true }` without
 *   running `call`;
 * - an entry without an outcome (the call was in flight when a process
 *   stopped): run `call(interrupted)`, write its outcome, answer it.
 *
 * An `unknown` outcome is an ending like any other: a journal records it, and
 * the runtime then asks a person whether to run the call again — as a new
 * entry with `rerun: n` and a key of its own — or to fail the step with
 * `ToolOutcomeUnknownError`.
 *
 * A journal may throw; the call then fails with `ToolJournalError`
 * (`TOOL_JOURNAL_FAILED`, or `TOOL_JOURNAL_MISMATCH` for a journal that replays
 * by position and holds another call at this place).
 *
 * What it holds: no arguments (their hash), outputs as the caller got them
 * (after the hooks: a secret a guardrail redacted is not in it), error messages
 * redacted and capped as in traces, and changes with their undo data. Outputs
 * and undo data are the tool's data: keep the journal where that data may be,
 * or encrypt it (see `@ca/plan-restate`'s `journalKey`).
 */
export interface CallJournal {
  /** Names the journal in errors and logs: `memory`, `restate workflow plans/nightly`. Never a credential. */
  readonly description: string;
  /**
   * Optional fast path: the outcome recorded under `key`, answered before the
   * approval step, so that a replayed call is not asked about again. A journal
   * that replays by position (an engine) leaves it out; the runtime then asks
   * (the engine answers the approval from its own journal) and calls `record`.
   */
  find?(planId: string, key: string): JournalOutcome | undefined | Promise<JournalOutcome | undefined>;
  /** Records and makes one call (see the interface's contract). */
  record(entry: JournalEntry, call: JournalCall): Promise<JournalReply>;
}
