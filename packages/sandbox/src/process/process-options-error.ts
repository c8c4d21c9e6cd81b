import { describeValue } from '@ca/domain';
import { describeCaller, ProcessError } from './process-error';

/** Options of {@link ProcessOptionsError}. */
export interface ProcessOptionsErrorOptions {
  /** The option, as the caller wrote it: `'args[2]'`, `'env.PATH'`, `'timeoutMs'`. */
  readonly option: string;
  /** What it must be: `'a string without NUL characters'`. */
  readonly expected: string;
  /** What was given (described, never printed whole). */
  readonly received: unknown;
  readonly toolName?: string;
  readonly planId?: string;
}

/**
 * `runProcess`, `startProcess`, `buildProcessEnvironment` or
 * `RunningProcess.close` was called with an option of the wrong shape;
 * `runProcess` and `startProcess` started nothing.
 *
 * Code: `PROCESS_INVALID_OPTIONS`.
 */
export class ProcessOptionsError extends ProcessError {
  declare readonly code: 'PROCESS_INVALID_OPTIONS';
  /** The option concerned. */
  readonly option: string;

  /** @throws Never. */
  constructor(options: ProcessOptionsErrorOptions) {
    const { option, expected, received, toolName, planId } = options;
    super('PROCESS_INVALID_OPTIONS', `${describeCaller(toolName, planId)}the process option ${option} must be ${expected}; got ${describeValue(received)}.`, {
      ...(toolName === undefined ? {} : { toolName }),
      ...(planId === undefined ? {} : { planId }),
    });
    this.option = option;
  }
}
