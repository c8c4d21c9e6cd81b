import { CaError } from '@ca/domain';

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
 * Base of the errors of `@ca/adapters-mcp`, on the `@ca/domain` error base.
 * Tell them apart by `code`, or by the static `isInstance` guards every
 * subclass inherits from `CaError`: they keep working when two copies of the
 * package are installed, and recognise errors of earlier releases (same
 * `Symbol.for('ca.error.<ClassName>')` brands).
 */
export class McpAdapterError extends CaError {
  /** The configured MCP server concerned, when known. */
  declare readonly server?: string;

  /**
   * @param code - The stable code of the error.
   * @param options - Message, server, tool, plan and cause.
   * @throws Never.
   */
  constructor(code: string, options: McpAdapterErrorOptions) {
    super(code, options.message, options);
    if (options.server !== undefined) this.server = options.server;
  }
}
