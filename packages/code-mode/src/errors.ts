import { CaError } from '@ca/domain';

/** Stable codes of {@link CodeModeError}. */
export type CodeModeErrorCode =
  // Limits of a run: each names its limit.
  | 'CODE_TIME_LIMIT'
  | 'CODE_MEMORY_LIMIT'
  | 'CODE_STACK_LIMIT'
  | 'CODE_CALL_LIMIT'
  | 'CODE_CONCURRENCY_LIMIT'
  | 'CODE_OUTPUT_LIMIT'
  // The program.
  | 'CODE_SYNTAX_ERROR'
  | 'CODE_PROGRAM_FAILED'
  | 'CODE_RESULT_INVALID'
  | 'CODE_NEVER_SETTLED'
  | 'CODE_INPUT_INVALID'
  // The run.
  | 'CODE_APPROVAL_PENDING'
  | 'CODE_STOPPED'
  | 'CODE_SANDBOX_FAILED';

/** The limit each limit code names (the `limits` option it comes from). */
export const LIMIT_OF_CODE: Readonly<Partial<Record<CodeModeErrorCode, string>>> = Object.freeze({
  CODE_TIME_LIMIT: 'timeMs',
  CODE_MEMORY_LIMIT: 'memoryBytes',
  CODE_STACK_LIMIT: 'stackBytes',
  CODE_CALL_LIMIT: 'maxCalls',
  CODE_CONCURRENCY_LIMIT: 'maxConcurrentCalls',
  CODE_OUTPUT_LIMIT: 'maxOutputBytes',
});

/** An inner call that waits for a person: what the front door shows, and answers before running the program again. */
export interface PendingInnerCall {
  /** The tool the program called. */
  readonly toolName: string;
  /** Its arguments. */
  readonly input: unknown;
  /** The inner call's step id (`<run step>/<n>`): run the same program under the same step to resume. */
  readonly step: string;
  /** The `code.run` execution that made it. */
  readonly parentExecutionId: string;
  /**
   * The step to run the same program under once the call is answered
   * (`<run step>#resume-<n>`): a new step for the plan's call journal (the
   * pending outcome of the first step is journaled as it is), the same run for
   * the code mode — same inner steps, clock and randomness.
   */
  readonly resumeStep: string;
}

/** Options of {@link CodeModeError}. */
export interface CodeModeErrorOptions {
  readonly code: CodeModeErrorCode;
  readonly toolName?: string;
  readonly planId?: string;
  /** What happened, in words (the message adds the advice). */
  readonly detail: string;
  /** The limit's value, for a limit code. */
  readonly value?: number;
  /** What the program threw, as fields (name, message, code, toolName … of an inner call's error). */
  readonly thrown?: Readonly<Record<string, string | number | boolean>>;
  /** For `CODE_APPROVAL_PENDING`: the inner call that waits. */
  readonly pending?: PendingInnerCall;
  readonly cause?: unknown;
}

const ADVICE: Readonly<Record<CodeModeErrorCode, string>> = {
  CODE_TIME_LIMIT: 'Make the program do less work per run (fewer loops, smaller data), or raise limits.timeMs.',
  CODE_MEMORY_LIMIT: 'Keep less data in memory (filter tool results as they come), or raise limits.memoryBytes.',
  CODE_STACK_LIMIT: 'Use a loop instead of deep recursion, or raise limits.stackBytes.',
  CODE_CALL_LIMIT: 'Make fewer tool calls in one program (split the work over several runs), or raise limits.maxCalls.',
  CODE_CONCURRENCY_LIMIT: 'Await calls in batches (at most limits.maxConcurrentCalls at once), or raise the limit.',
  CODE_OUTPUT_LIMIT: 'Return and log less (a summary, not whole results), or raise limits.maxOutputBytes.',
  CODE_SYNTAX_ERROR: 'Fix the program: it is the body of an async function (use `return` for the result, `await` for tool calls).',
  CODE_PROGRAM_FAILED: 'Fix the program, or catch the error where it is thrown (a failed tool call throws an error with the fields of its coded error).',
  CODE_RESULT_INVALID: 'Return a value JSON can hold (no cycles, no BigInt, no functions).',
  CODE_NEVER_SETTLED: 'Await only tool calls and promises the program settles itself: there are no timers in the sandbox.',
  CODE_INPUT_INVALID: 'Pass the program as { code: string }.',
  CODE_APPROVAL_PENDING:
    'Show the inner call for approval; once answered, run the same program again with the step in error.pending.resumeStep: the calls already made are answered from the journal.',
  CODE_STOPPED: 'The run was cancelled (its plan or its call); run it again if still wanted.',
  CODE_SANDBOX_FAILED: 'The sandbox engine failed; run the program again (a fresh sandbox is used).',
};

/**
 * A `code.run` that did not return a result: a limit it reached, a program
 * that failed, an inner call waiting for approval. The failed result of
 * `code.run` carries it (`result.error`), with `code`, the tool and plan, and
 * the fields below.
 */
export class CodeModeError extends CaError {
  declare readonly code: CodeModeErrorCode;
  /** For a limit code: the limit's option name (`timeMs`, `maxCalls`, …). */
  readonly limit?: string;
  /** For a limit code: its value. */
  readonly value?: number;
  /** What the program threw, as fields. */
  readonly thrown?: Readonly<Record<string, string | number | boolean>>;
  /** For `CODE_APPROVAL_PENDING`: the inner call that waits. */
  readonly pending?: PendingInnerCall;

  constructor(options: CodeModeErrorOptions) {
    const { code, toolName, planId, detail, value, thrown, pending } = options;
    const where = `${toolName === undefined ? 'code.run' : `'${toolName}'`}${planId === undefined ? '' : ` in plan '${planId}'`}`;
    super(code, `${where}: ${detail}. ${ADVICE[code] ?? ''}`.trim(), { toolName, planId, cause: options.cause });
    const limit = LIMIT_OF_CODE[code];
    if (limit !== undefined) this.limit = limit;
    if (value !== undefined) this.value = value;
    if (thrown !== undefined) this.thrown = thrown;
    if (pending !== undefined) this.pending = pending;
  }
}
