const BRAND = Symbol.for('ca.error.CustomToolRegistrationError');

/**
 * Stable codes of {@link CustomToolRegistrationError}:
 * - `CUSTOM_TOOL_INVALID`: the definition is wrong (name, description,
 *   capability, a schema that does not compile, a missing `execute`, …);
 * - `CUSTOM_TOOL_DUPLICATE`: a source already holds a tool of that name;
 * - `CUSTOM_TOOL_NOT_FOUND`: `source.get(name)` for a name the source does not hold.
 */
export type CustomToolRegistrationErrorCode = 'CUSTOM_TOOL_INVALID' | 'CUSTOM_TOOL_DUPLICATE' | 'CUSTOM_TOOL_NOT_FOUND';

/** Options of {@link CustomToolRegistrationError}. */
export interface CustomToolRegistrationErrorOptions {
  /** What went wrong, as a stable code. */
  readonly code: CustomToolRegistrationErrorCode;
  /** The full message: which tool, what is wrong, what to do. */
  readonly message: string;
  /** The tool concerned, when it has a name. */
  readonly toolName?: string;
  /** The source the tool was registered with, when known. */
  readonly sourceId?: string;
  /** The underlying error (e.g. a `SchemaCompileError`), per ES2022. */
  readonly cause?: unknown;
}

/**
 * A custom tool cannot be registered: raised by `defineTool`, by
 * `CustomToolSource.add`, by `createCustomAdapter` and — for class-based tools
 * resolved through dependency injection — by the source's first `discover`.
 * Never raised while a tool executes.
 *
 * Tell it apart with {@link CustomToolRegistrationError.isInstance} or `code`;
 * both work across two installed copies of this package.
 */
export class CustomToolRegistrationError extends Error {
  /** Stable code; see {@link CustomToolRegistrationErrorCode}. */
  readonly code: CustomToolRegistrationErrorCode;
  /** The tool concerned, when known. */
  declare readonly toolName?: string;
  /** The source the tool was registered with, when known. */
  declare readonly sourceId?: string;

  /**
   * @param options - Code, message, tool, source and cause.
   * @throws Never.
   */
  constructor(options: CustomToolRegistrationErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CustomToolRegistrationError';
    this.code = options.code;
    if (options.toolName !== undefined) this.toolName = options.toolName;
    if (options.sourceId !== undefined) this.sourceId = options.sourceId;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /**
   * True when `value` is a {@link CustomToolRegistrationError} from any copy of
   * this package (checks the `Symbol.for('ca.error.CustomToolRegistrationError')` brand).
   *
   * @throws Never.
   */
  static isInstance(value: unknown): value is CustomToolRegistrationError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}
