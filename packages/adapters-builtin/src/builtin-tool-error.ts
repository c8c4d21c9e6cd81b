import { CaError } from '@ca/domain';

/** Stable codes of {@link BuiltinToolError}. */
export type BuiltinToolErrorCode =
  | 'BUILTIN_INVALID_SETTINGS'
  | 'BUILTIN_INVALID_INPUT'
  | 'BUILTIN_NO_RESOURCE'
  | 'BUILTIN_PATH_OUTSIDE_RESOURCES'
  | 'BUILTIN_RESOURCE_READ_ONLY'
  | 'BUILTIN_NOT_FOUND'
  | 'BUILTIN_WRONG_TYPE'
  | 'BUILTIN_NOT_REGULAR_FILE'
  | 'BUILTIN_HARD_LINKED_FILE'
  | 'BUILTIN_PATH_CHANGED'
  | 'BUILTIN_ALREADY_EXISTS'
  | 'BUILTIN_TOO_LARGE'
  | 'BUILTIN_EDIT_NO_MATCH'
  | 'BUILTIN_EDIT_AMBIGUOUS'
  | 'BUILTIN_IO_FAILED'
  | 'BUILTIN_COMMAND_NOT_ALLOWED'
  | 'BUILTIN_COMMAND_ENV_NOT_ALLOWED'
  | 'BUILTIN_COMMAND_START_FAILED'
  | 'BUILTIN_COMMAND_TIMED_OUT'
  | 'BUILTIN_COMMAND_SANDBOX_FAILED'
  | 'BUILTIN_HTTP_URL_NOT_ALLOWED'
  | 'BUILTIN_HTTP_ADDRESS_NOT_ALLOWED'
  | 'BUILTIN_HTTP_STATUS'
  | 'BUILTIN_HTTP_FAILED'
  | 'BUILTIN_HTTP_TIMED_OUT'
  | 'BUILTIN_ROLLBACK_FAILED';

/** Options of {@link BuiltinToolError}. */
export interface BuiltinToolErrorOptions {
  /** Stable code, see {@link BuiltinToolErrorCode}. */
  readonly code: BuiltinToolErrorCode;
  /** What went wrong and what to do about it. */
  readonly message: string;
  /** The tool that failed, when known. */
  readonly toolName?: string;
  /** The plan the tool ran in, when known. */
  readonly planId?: string;
  /** The path or URL concerned, when there is one. */
  readonly target?: string;
  /** The underlying error, per ES2022 `cause`. */
  readonly cause?: unknown;
  /** The same call may succeed if made again (a 503, a reset connection): the runtime retries it where the tool's retry settings allow. */
  readonly retryable?: boolean;
  /** How long to wait before trying again, in ms, when the other side said (`Retry-After`). */
  readonly retryAfterMs?: number;
}

/**
 * An expected failure of a built-in tool: a path outside the bound resources,
 * a write to a read-only resource, a missing file, a refused command or URL,
 * an HTTP error status, a failed rollback.
 *
 * Inside `execute` these are returned as failed results (`toolFailure`), never
 * thrown; `rollback()` and `createBuiltinAdapter()` throw them. Tell them apart
 * by `code` or with {@link BuiltinToolError.isInstance}, which works across
 * installed copies of the package.
 */
export class BuiltinToolError extends CaError {
  declare readonly code: BuiltinToolErrorCode;
  /** The path or URL concerned, when there is one. */
  declare readonly target?: string;
  /** True when the same call may succeed if made again; the runtime's retries act on it. */
  declare readonly retryable?: boolean;
  /** How long to wait before trying again, in ms, when the other side said. */
  declare readonly retryAfterMs?: number;

  /**
   * @param options - Code, message and optional tool, plan, target and cause.
   * @throws Never.
   */
  constructor(options: BuiltinToolErrorOptions) {
    super(options.code, options.message, options);
    if (options.target !== undefined) this.target = options.target;
    if (options.retryable === true) this.retryable = true;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}
