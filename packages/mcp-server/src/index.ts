// The runtime as an MCP server.
export { McpGateway } from './gateway/mcp-gateway';
export type { McpGatewayOptions, McpGatewaySession, ResourceUpdateSource } from './gateway/mcp-gateway';
export type { McpSessionInfo, McpSessionProfile, McpToolMode } from './gateway/session-profile';
export { CALL_TOOL_NAME, SEARCH_TOOL_NAME } from './listing/session-tools';

// Questions of a plan, asked of its session's client.
export { GatewayClients } from './clients/gateway-clients';
export type { GatewayClientsOptions } from './clients/gateway-clients';

// Transports.
export { serveStdio } from './stdio/serve-stdio';
export type { ServeStdioOptions } from './stdio/serve-stdio';
export { serveHttp } from './http/serve-http';
export type { McpHttpServer, ServeHttpOptions } from './http/serve-http';
export { createResourceServerAuth } from './auth/resource-server-auth';
export type { McpHttpAuth, ResourceServerAuthSettings } from './auth/resource-server-auth';

// Errors.
export { McpGatewayError } from './errors/mcp-gateway-error';
export type { McpGatewayErrorCode, McpGatewayErrorOptions, McpGatewayProblem } from './errors/mcp-gateway-error';
