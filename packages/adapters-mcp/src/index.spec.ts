import * as adapter from './index';

describe('@ca/adapters-mcp public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(adapter).sort()).toEqual([
      'DEFAULT_CALL_TIMEOUT_MS',
      'DEFAULT_CONNECT_TIMEOUT_MS',
      'DEFAULT_INHERITED_ENVIRONMENT',
      'DEFAULT_SHUTDOWN_GRACE_MS',
      'MAX_POOL_SIZE',
      'MCP_OPERATIONS',
      'McpAdapterError',
      'McpConfigError',
      'McpServerError',
      'McpToolError',
      'McpToolSource',
      'MemoryTokenStore',
      'MemoryToolListCache',
      'createMcpAdapter',
      'loadMcpConfig',
      'parseMcpConfig',
      'registerMcpAdapter',
      'toolListKey',
    ]);
  });
});
