import { ToolRuntimeError } from '../errors';

/** Options of {@link ToolSearchError}. */
export interface ToolSearchErrorOptions {
  /** What went wrong, as a sentence: `'the reranker threw'`. */
  readonly problem: string;
  /** What to do about it. */
  readonly advice: string;
  /** The plan the search was made for, when it was made for one. */
  readonly planId?: string;
  readonly cause?: unknown;
}

/**
 * A tool search could not be completed for a reason of the service's own
 * making: its reranker threw, or answered something other than one finite
 * score per candidate. (A bad query or option is a `ToolInvalidArgumentError`.)
 *
 * Code: `TOOL_SEARCH_FAILED`.
 */
export class ToolSearchError extends ToolRuntimeError {
  declare readonly code: 'TOOL_SEARCH_FAILED';

  constructor(options: ToolSearchErrorOptions) {
    const plan = options.planId === undefined ? '' : ` in plan '${options.planId}'`;
    super('TOOL_SEARCH_FAILED', `Tool search${plan} failed: ${options.problem}. ${options.advice}`, options);
  }
}
