import { EXIT_CODES, type ExitCode } from './exit-codes';

const brand = Symbol.for('ca.error.CliError');

/** Stable codes of {@link CliError}. */
export type CliErrorCode =
  | 'CLI_USAGE'
  | 'CLI_CONFIG_INVALID'
  | 'CLI_CONFIG_NOT_FOUND'
  | 'CLI_PLAN_INVALID'
  | 'CLI_PLAN_NOT_FOUND'
  | 'CLI_PLAN_CHECK_FAILED'
  | 'CLI_INPUT_INVALID'
  | 'CLI_MODULE_INVALID'
  | 'CLI_STATE_UNSAFE';

/** Options of {@link CliError}. */
export interface CliErrorOptions {
  readonly code: CliErrorCode;
  readonly message: string;
  readonly exitCode?: ExitCode;
  readonly cause?: unknown;
}

/**
 * A problem with what the user gave the command: arguments, configuration,
 * plan file, input. Printed on stderr with its code; the process exits with
 * `exitCode` (2 by default).
 */
export class CliError extends Error {
  readonly code: CliErrorCode;
  readonly exitCode: ExitCode;

  constructor(options: CliErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    Object.defineProperty(this, brand, { value: true });
    this.name = 'CliError';
    this.code = options.code;
    this.exitCode = options.exitCode ?? EXIT_CODES.usage;
  }

  /** True for a CliError from any copy of this package. */
  static isInstance(value: unknown): value is CliError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}
