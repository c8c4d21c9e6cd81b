import { ToolRuntimeError } from '../errors';

/** What went wrong with a stored result. */
export type ToolResultProblem =
  /** No result of the plan has this handle: never made, made by another plan, or the plan ended. */
  | 'not-found'
  /** A range, a line number, a JSON pointer or a pattern that does not fit the stored result. */
  | 'invalid-read'
  /** The store could not keep or give back the result. */
  | 'store-failed';

/** Options of {@link ToolResultError}. */
export interface ToolResultErrorOptions {
  readonly problem: ToolResultProblem;
  /** The handle concerned (as given; described, never trusted). */
  readonly handle: string;
  /** What is wrong, as a sentence without the handle: `'line 900 is past its last line, 120'`. */
  readonly detail: string;
  /** What to do about it. */
  readonly advice: string;
  readonly toolName?: string;
  readonly planId?: string;
  readonly cause?: unknown;
}

const CODES = {
  'not-found': 'TOOL_RESULT_NOT_FOUND',
  'invalid-read': 'TOOL_RESULT_READ_INVALID',
  'store-failed': 'TOOL_RESULT_STORE_FAILED',
} as const;

/**
 * A stored result (an output over the budget, kept behind a handle) could not
 * be read: the handle is not one of the plan's (`TOOL_RESULT_NOT_FOUND`), the
 * range, pointer or pattern does not fit it (`TOOL_RESULT_READ_INVALID`), or
 * the store failed (`TOOL_RESULT_STORE_FAILED`).
 */
export class ToolResultError extends ToolRuntimeError {
  declare readonly code: (typeof CODES)[ToolResultProblem];
  readonly problem: ToolResultProblem;
  /** The handle as it was given (at most 80 characters of it). */
  readonly handle: string;
  /** What is wrong, without the handle. */
  readonly detail: string;
  /** What to do about it. */
  readonly advice: string;

  constructor(options: ToolResultErrorOptions) {
    const handle = String(options.handle).slice(0, 80);
    const plan = options.planId === undefined ? '' : ` of plan '${options.planId}'`;
    const tool = options.toolName === undefined ? '' : `${options.toolName}: `;
    super(CODES[options.problem], `${tool}Stored result '${handle}'${plan}: ${options.detail}. ${options.advice}`, options);
    this.problem = options.problem;
    this.handle = handle;
    this.detail = options.detail;
    this.advice = options.advice;
  }

  /** The same error, naming the tool that met it. */
  forTool(toolName: string): ToolResultError {
    return new ToolResultError({
      problem: this.problem,
      handle: this.handle,
      detail: this.detail,
      advice: this.advice,
      toolName,
      ...(this.planId === undefined ? {} : { planId: this.planId }),
      ...(this.cause === undefined ? {} : { cause: this.cause }),
    });
  }
}
