export { createMcpAdapter, registerMcpAdapter } from './mcp-adapter';
export type { McpAdapterSettings } from './mcp-adapter-settings';
export { McpToolSource } from './mcp-tool-source';
export type { McpResourceUpdate } from './mcp-tool-source';
export type { McpTool } from './mcp-tool';
export { MCP_OPERATIONS } from './mcp-operations';
export type { McpOperation } from './mcp-operations';
export { MemoryTokenStore } from './mcp-oauth';
export { MemoryToolListCache, toolListKey } from './mcp-tool-list-cache';
export type { McpCachedToolList, McpToolListCache, McpToolListing } from './mcp-tool-list-cache';
export type { McpStoredCredentials, McpTokenStore } from './mcp-oauth';
export { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_SHUTDOWN_GRACE_MS, loadMcpConfig, MAX_POOL_SIZE, parseMcpConfig } from './mcp-config';
export type {
  McpCapabilityOverride,
  McpHttpServerConfig,
  McpOAuthConfig,
  McpServerConfig,
  McpServerExtensions,
  McpServerScope,
  McpServersConfig,
  McpStdioServerConfig,
  ParseMcpConfigOptions,
  ParsedMcpConfig,
  ParsedMcpOAuth,
  ParsedMcpServer,
} from './mcp-config';
export { DEFAULT_INHERITED_ENVIRONMENT } from './server-environment';
export type { McpSpawn, ProcessExit } from './process-stdio-transport';
export { McpAdapterError } from './mcp-adapter-error';
export type { McpAdapterErrorOptions } from './mcp-adapter-error';
export { McpConfigError } from './mcp-config-error';
export type { McpConfigErrorOptions } from './mcp-config-error';
export { McpServerError } from './mcp-server-error';
export type { McpServerErrorCode, McpServerErrorOptions } from './mcp-server-error';
export { McpToolError } from './mcp-tool-error';
export type { McpToolErrorCode, McpToolErrorOptions } from './mcp-tool-error';
