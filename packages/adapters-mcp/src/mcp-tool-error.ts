import { McpAdapterError, type McpAdapterErrorOptions } from './mcp-adapter-error';

/**
 * Stable codes of {@link McpToolError}, each carried by a failed result:
 * - `MCP_TOOL_ERROR`: the tool answered with `isError: true`;
 * - `MCP_CALL_TIMEOUT`: no answer within `callTimeoutMs` (or progress went on
 *   past `maxTotalTimeoutMs`); the server was sent `notifications/cancelled`;
 * - `MCP_REQUEST_FAILED`: the server answered `tools/call` with a JSON-RPC
 *   error (unknown tool, invalid params, internal error);
 * - `MCP_STRUCTURED_CONTENT_MISSING`: the tool declares an `outputSchema` but
 *   returned no `structuredContent`;
 * - `MCP_INVALID_RESULT`: the answer is not a valid `CallToolResult`;
 * - `MCP_URL_ELICITATION_REQUIRED`: the server wants a person to open a page
 *   before it runs the tool (URL elicitation, error -32042), and nobody
 *   could be asked or the person declined.
 */
export type McpToolErrorCode =
  'MCP_TOOL_ERROR' | 'MCP_CALL_TIMEOUT' | 'MCP_REQUEST_FAILED' | 'MCP_STRUCTURED_CONTENT_MISSING' | 'MCP_INVALID_RESULT' | 'MCP_URL_ELICITATION_REQUIRED';

/** Options of {@link McpToolError}. */
export interface McpToolErrorOptions extends McpAdapterErrorOptions {
  /** The stable code. */
  readonly code: McpToolErrorCode;
  /** The configured server. */
  readonly server: string;
  /** The runtime tool name (`mcp.<server>.<tool>`). */
  readonly toolName: string;
  /** The tool's name on the MCP server. */
  readonly mcpToolName: string;
  /** The JSON-RPC error code, for `MCP_REQUEST_FAILED` and `MCP_CALL_TIMEOUT`. */
  readonly rpcCode?: number;
}

/**
 * One call of an MCP tool failed. Returned inside a failed `ToolResult`
 * (never thrown), with the tool's `content` kept beside it.
 */
export class McpToolError extends McpAdapterError {
  declare readonly code: McpToolErrorCode;
  declare readonly server: string;
  declare readonly toolName: string;
  /** The tool's name on the MCP server. */
  readonly mcpToolName: string;
  /** The JSON-RPC error code, when the server sent one. */
  declare readonly rpcCode?: number;

  /**
   * @param options - Code, server, tool names, message and cause.
   * @throws Never.
   */
  constructor(options: McpToolErrorOptions) {
    super(options.code, options);
    this.mcpToolName = options.mcpToolName;
    if (options.rpcCode !== undefined) this.rpcCode = options.rpcCode;
  }
}
