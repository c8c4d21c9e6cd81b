import { McpAdapterError } from './mcp-adapter-error';

/** Options of {@link McpConfigError}. */
export interface McpConfigErrorOptions {
  /** What is wrong and how to fix it. */
  readonly message: string;
  /** Where the configuration came from: a file path, or `'settings'`. */
  readonly source: string;
  /** The server entry concerned, when the problem is inside one. */
  readonly server?: string;
  /** The key concerned (`'args'`, `'env.TOKEN'`, `'capabilities.write_file.writes'`). */
  readonly key?: string;
  /** The underlying error (a JSON syntax error, a file system error). */
  readonly cause?: unknown;
}

/**
 * The `mcpServers` configuration is invalid or cannot be read. Code
 * `MCP_CONFIG_INVALID`; `server` and `key` name the offending entry.
 */
export class McpConfigError extends McpAdapterError {
  declare readonly code: 'MCP_CONFIG_INVALID';
  /** Where the configuration came from: a file path, or `'settings'`. */
  readonly source: string;
  /** The key concerned, when known. */
  declare readonly key?: string;

  /**
   * @param options - Message, source, server, key and cause.
   * @throws Never.
   */
  constructor(options: McpConfigErrorOptions) {
    super('MCP_CONFIG_INVALID', options);
    this.source = options.source;
    if (options.key !== undefined) this.key = options.key;
  }
}
