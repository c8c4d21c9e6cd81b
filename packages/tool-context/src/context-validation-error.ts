const BRAND = Symbol.for('ca.error.ContextValidationError');

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
 * Something given to a {@link ToolExecutionContext} — its options, a bound
 * resource, a change, a trace, a token option — is not valid.
 *
 * A programming error rather than a runtime condition, so it extends
 * `TypeError` (and therefore `Error`). The message names the field and the
 * plan and says what to pass instead.
 *
 * Tell it apart with {@link ContextValidationError.isInstance} or `code`,
 * which keep working when two copies of this package are installed.
 */
export class ContextValidationError extends TypeError {
  /** Stable code of this error. */
  readonly code = 'CONTEXT_INVALID' as const;
  /** The offending field, e.g. `'resources[2].uri'`. */
  readonly field: string;
  /** The plan concerned, when known. */
  declare readonly planId?: string;

  /**
   * @param options - Field, message, plan and cause.
   * @throws Never.
   */
  constructor(options: ContextValidationErrorOptions) {
    const where = options.planId === undefined ? '' : ` (plan "${options.planId}")`;
    super(
      `Invalid ${options.field}${where}: ${options.message}`,
      'cause' in options ? { cause: options.cause } : undefined,
    );
    this.name = 'ContextValidationError';
    this.field = options.field;
    if (options.planId !== undefined) this.planId = options.planId;
  }

  /**
   * True when `value` is a {@link ContextValidationError}, from this or any
   * other installed copy of the package (checks the
   * `Symbol.for('ca.error.ContextValidationError')` brand, not `instanceof`).
   *
   * @throws Never.
   */
  static isInstance(value: unknown): value is ContextValidationError {
    try {
      return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
    } catch {
      // A hostile value (a Proxy whose traps throw) is not one of ours.
      return false;
    }
  }
}

Object.defineProperty(ContextValidationError.prototype, BRAND, { value: true });
