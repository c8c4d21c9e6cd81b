import { CaError } from '@ca/domain';

/** Options of {@link ContextValidationError}. */
export interface ContextValidationErrorOptions {
  /**
   * The offending field, as a path from what the caller passed,
   * e.g. `'planId'`, `'policy.readOnly'`, `'resources[2].uri'`, `'change.kind'`.
   */
  readonly field: string;
  /** What is wrong and what to do about it; the field and plan are prepended. */
  readonly message: string;
  /** The plan whose context was being built or written, when known. */
  readonly planId?: string;
  /** The underlying error, per ES2022 `cause`. */
  readonly cause?: unknown;
}

/**
 * Something given to a plan's context — its options, a bound resource, a
 * change, a trace, a token option — is not valid. A programming error rather
 * than a runtime condition. The message names the field and the plan and
 * says what to pass instead.
 *
 * Code: `CONTEXT_INVALID`. Tell it apart with `ContextValidationError.isInstance`
 * or `code`, which keep working when two copies of this package are installed.
 */
export class ContextValidationError extends CaError {
  declare readonly code: 'CONTEXT_INVALID';
  /** The offending field, e.g. `'resources[2].uri'`. */
  readonly field: string;

  /**
   * @param options - Field, message, plan and cause.
   * @throws Never.
   */
  constructor(options: ContextValidationErrorOptions) {
    const where = options.planId === undefined ? '' : ` (plan "${options.planId}")`;
    super('CONTEXT_INVALID', `Invalid ${options.field}${where}: ${options.message}`, options);
    this.field = options.field;
  }
}
