const BRAND = Symbol.for('ca.error.WrappedToolError');

/**
 * Stable codes of {@link WrappedToolError}. None is thrown while a tool
 * executes: most are raised when a wrapper, foreign tool or source is built,
 * `WRAP_FACTORY_FAILED` by `discover`, `WRAP_TOOL_NOT_FOUND` by `get`, and
 * `WRAP_INPUT_NOT_OBJECT` is returned as a failed result:
 * - `WRAP_INVALID_OPTIONS`: an option has the wrong type or value (name, namespace, retry, …);
 * - `WRAP_CAPABILITY_LOOSENED`: the wrapper would claim less than the tool
 *   does (e.g. `writes: false` for a tool that writes);
 * - `WRAP_RETRY_NOT_IDEMPOTENT`: `retry` on a tool whose capability is not `idempotent`;
 * - `WRAP_SCHEMA_INVALID`: a schema (given, derived or converted) does not compile;
 * - `WRAP_SCHEMA_UNCONVERTIBLE`: a foreign tool's schema cannot be turned into JSON Schema;
 * - `WRAP_FOREIGN_TOOL_INVALID`: a foreign tool lacks what it needs (execute, invoke, a name, a description);
 * - `WRAP_DUPLICATE_TOOL`: a wrapped source already holds a tool of that name;
 * - `WRAP_TOOL_NOT_FOUND`: `source.get(name)` for a name the source does not hold;
 * - `WRAP_FACTORY_FAILED`: a tool factory of a wrapped source threw (raised by `discover`);
 * - `WRAP_INPUT_NOT_OBJECT`: at call time, fixed or default arguments cannot be
 *   merged because the input is not an object; returned as a failed result.
 */
export type WrappedToolErrorCode =
  | 'WRAP_INVALID_OPTIONS'
  | 'WRAP_CAPABILITY_LOOSENED'
  | 'WRAP_RETRY_NOT_IDEMPOTENT'
  | 'WRAP_SCHEMA_INVALID'
  | 'WRAP_SCHEMA_UNCONVERTIBLE'
  | 'WRAP_FOREIGN_TOOL_INVALID'
  | 'WRAP_DUPLICATE_TOOL'
  | 'WRAP_TOOL_NOT_FOUND'
  | 'WRAP_FACTORY_FAILED'
  | 'WRAP_INPUT_NOT_OBJECT';

/** Options of {@link WrappedToolError}. */
export interface WrappedToolErrorOptions {
  /** What went wrong, as a stable code. */
  readonly code: WrappedToolErrorCode;
  /** The full message: which tool, what is wrong, what to do. */
  readonly message: string;
  /** The tool concerned (the wrapper's name, or the foreign tool's), when known. */
  readonly toolName?: string;
  /** The plan, for errors raised during a call. */
  readonly planId?: string;
  /** The underlying error, per ES2022. */
  readonly cause?: unknown;
}

/**
 * A wrapper, a foreign-tool adapter or a wrapped source cannot be built as
 * asked (or, for `WRAP_INPUT_NOT_OBJECT`, one call's input cannot be merged).
 *
 * Tell it apart with {@link WrappedToolError.isInstance} or `code`; both work
 * across two installed copies of this package.
 */
export class WrappedToolError extends Error {
  /** Stable code; see {@link WrappedToolErrorCode}. */
  readonly code: WrappedToolErrorCode;
  /** The tool concerned, when known. */
  declare readonly toolName?: string;
  /** The plan, when the error was raised during a call. */
  declare readonly planId?: string;

  /**
   * @param options - Code, message, tool, plan and cause.
   * @throws Never.
   */
  constructor(options: WrappedToolErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WrappedToolError';
    this.code = options.code;
    if (options.toolName !== undefined) this.toolName = options.toolName;
    if (options.planId !== undefined) this.planId = options.planId;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /**
   * True when `value` is a {@link WrappedToolError} from any copy of this
   * package (checks the `Symbol.for('ca.error.WrappedToolError')` brand).
   *
   * @throws Never.
   */
  static isInstance(value: unknown): value is WrappedToolError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}
