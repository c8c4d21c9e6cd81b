import { describeValue } from '@ca/domain';
import { ToolRuntimeError } from './tool-runtime-error';

/** Options of {@link ToolInvalidArgumentError}. */
export interface ToolInvalidArgumentErrorOptions {
  /** The argument or option, as the caller wrote it: `'defaultTimeoutMs'`, `'ctx'`, `'sources[2]'`. */
  readonly argument: string;
  /** What it must be: `'a positive number of milliseconds'`. */
  readonly expected: string;
  /** What was given (described, never printed whole). */
  readonly received: unknown;
  /** What to do, when more than "pass what is expected" helps. */
  readonly advice?: string;
  readonly toolName?: string;
  readonly planId?: string;
}

/**
 * A public entry point of the runtime was called with an argument of the
 * wrong shape (not a tool's input: that gives a failed result).
 *
 * Code: `TOOL_INVALID_ARGUMENT`.
 */
export class ToolInvalidArgumentError extends ToolRuntimeError {
  declare readonly code: 'TOOL_INVALID_ARGUMENT';
  /** The argument or option concerned. */
  readonly argument: string;

  constructor(options: ToolInvalidArgumentErrorOptions) {
    const { argument, expected, received, advice, toolName } = options;
    const subject = toolName === undefined ? '' : `Tool '${toolName}': `;
    super(
      'TOOL_INVALID_ARGUMENT',
      `${subject}${argument} must be ${expected}; got ${describeValue(received)}.${advice === undefined ? '' : ` ${advice}`}`,
      options,
    );
    this.argument = argument;
  }
}
