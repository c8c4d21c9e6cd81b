import { McpAdapterError, type McpAdapterErrorOptions } from './mcp-adapter-error';

/**
 * Stable codes of {@link McpServerError}:
 * - `MCP_SERVER_START_FAILED`: the server could not be started or did not
 *   complete the MCP handshake (command not found, exited at start, connect
 *   timeout, HTTP error);
 * - `MCP_SERVER_EXITED`: the session ended while it was in use (the process
 *   died, the HTTP session was lost);
 * - `MCP_MESSAGE_TOO_LARGE`: a stdio server wrote a message (a stdout line)
 *   longer than the adapter reads (10 MiB); the message was dropped and the
 *   session ended with the server's processes;
 * - `MCP_LIST_TOOLS_FAILED`: `tools/list` failed or paginated without end;
 * - `MCP_SESSION_NOT_ACTIVE`: a tool was executed in a plan without being
 *   activated first (call it through `ToolRuntime`);
 * - `MCP_SOURCE_DISPOSED`: the source was disposed;
 * - `MCP_AUTH_REQUIRED`: the server wants an OAuth authorization that nobody
 *   could give (no interaction handler to take a person to the sign-in page,
 *   the person declined, or the configuration has no `oauth`);
 * - `MCP_AUTH_FAILED`: the server or its authorization server refused the
 *   credentials (HTTP 401 or 403, with `status`), or the OAuth flow failed.
 */
export type McpServerErrorCode =
  | 'MCP_SERVER_START_FAILED'
  | 'MCP_SERVER_EXITED'
  | 'MCP_MESSAGE_TOO_LARGE'
  | 'MCP_LIST_TOOLS_FAILED'
  | 'MCP_SESSION_NOT_ACTIVE'
  | 'MCP_SOURCE_DISPOSED'
  | 'MCP_AUTH_REQUIRED'
  | 'MCP_AUTH_FAILED';

/** Options of {@link McpServerError}. */
export interface McpServerErrorOptions extends McpAdapterErrorOptions {
  /** The stable code. */
  readonly code: McpServerErrorCode;
  /** The configured server. */
  readonly server: string;
  /** The last lines the server wrote to stderr (stdio servers). */
  readonly stderr?: string;
  /** The exit code of the server process, when it exited. */
  readonly exitCode?: number | null;
  /** The signal that ended the server process, when one did. */
  readonly signal?: string | null;
  /** The HTTP status the server answered with (`MCP_AUTH_FAILED`: 401 or 403). */
  readonly status?: number;
}

/**
 * An MCP server as a whole failed: it did not start, it died, or it could
 * not list its tools. The message names the server and quotes the tail of
 * its stderr.
 */
export class McpServerError extends McpAdapterError {
  declare readonly code: McpServerErrorCode;
  declare readonly server: string;
  /** The last lines the server wrote to stderr, when captured. */
  declare readonly stderr?: string;
  /** The exit code of the server process, when it exited. */
  declare readonly exitCode?: number | null;
  /** The signal that ended the server process, when one did. */
  declare readonly signal?: string | null;
  /** The HTTP status the server answered with, when that is the failure. */
  declare readonly status?: number;

  /**
   * @param options - Code, server, message and the process details.
   * @throws Never.
   */
  constructor(options: McpServerErrorOptions) {
    super(options.code, options);
    if (options.stderr !== undefined) this.stderr = options.stderr;
    if (options.exitCode !== undefined) this.exitCode = options.exitCode;
    if (options.signal !== undefined) this.signal = options.signal;
    if (options.status !== undefined) this.status = options.status;
  }
}
