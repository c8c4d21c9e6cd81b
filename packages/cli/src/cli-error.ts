import { CaError } from '@ca/domain';
import { EXIT_CODES, type ExitCode } from './exit-codes';

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
  | 'CLI_STATE_UNSAFE'
  | 'CLI_APPROVAL_NOT_FOUND'
  | 'CLI_DURABLE_UNAVAILABLE';

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
 * `exitCode` (2 by default). On the `@ca/domain` error base: `CliError.isInstance`
 * recognises one from any copy of this package.
 */
export class CliError extends CaError {
  declare readonly code: CliErrorCode;
  readonly exitCode: ExitCode;

  constructor(options: CliErrorOptions) {
    super(options.code, options.message, options);
    this.exitCode = options.exitCode ?? EXIT_CODES.usage;
  }
}
