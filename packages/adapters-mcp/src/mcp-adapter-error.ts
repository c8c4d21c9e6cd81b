const BRAND = Symbol.for('ca.error.McpAdapterError');

/** Options shared by every error of `@ca/adapters-mcp`. */
export interface McpAdapterErrorOptions {
  /** What went wrong and what to do about it. */
  readonly message: string;
  /** The configured MCP server concerned, when known. */
  readonly server?: string;
  /** The runtime tool name (`mcp.<server>.<tool>`), when known. */
  readonly toolName?: string;
  /** The plan, when known. */
  readonly planId?: string;
  /** The underlying error, per ES2022 `cause`. */
  readonly cause?: unknown;
}

/**
 * Base of the errors of `@ca/adapters-mcp`. Tell them apart by `code`, or by
 * the static `isInstance` guards, which keep working when two copies of the
 * package are installed (they check a `Symbol.for` brand).
 */
export class McpAdapterError extends Error {
  /** Stable code; see the subclasses for the values. */
  readonly code: string;
  /** The configured MCP server concerned, when known. */
  declare readonly server?: string;
  /** The runtime tool name, when known. */
  declare readonly toolName?: string;
  /** The plan, when known. */
  declare readonly planId?: string;
  declare readonly cause?: unknown;

  /**
   * @param code - The stable code of the error.
   * @param options - Message, server, tool, plan and cause.
   * @throws Never.
   */
  constructor(code: string, options: McpAdapterErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'McpAdapterError';
    this.code = code;
    Object.defineProperty(this, BRAND, { value: true });
    if (options.server !== undefined) this.server = options.server;
    if (options.toolName !== undefined) this.toolName = options.toolName;
    if (options.planId !== undefined) this.planId = options.planId;
  }

  /**
   * True for any error of `@ca/adapters-mcp`, from any installed copy.
   *
   * @throws Never.
   */
  static isInstance(value: unknown): value is McpAdapterError {
    return hasBrand(value, BRAND);
  }
}

/** @internal True when `value` carries the `Symbol.for` brand `symbol`. */
export function hasBrand(value: unknown, symbol: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[symbol] === true;
}
