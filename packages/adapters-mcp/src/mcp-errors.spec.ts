import { CaError } from '@ca/domain';
import { McpAdapterError } from './mcp-adapter-error';
import { McpConfigError } from './mcp-config-error';
import { McpServerError } from './mcp-server-error';
import { McpToolError } from './mcp-tool-error';

describe('error classes', () => {
  const cause = new Error('root cause');
  const config = new McpConfigError({ message: 'bad', source: 'mcp.json', server: 'a', key: 'args', cause });
  const server = new McpServerError({ code: 'MCP_SERVER_EXITED', server: 'a', message: 'gone', stderr: 'boom', exitCode: 1, signal: null, planId: 'p' });
  const tool = new McpToolError({ code: 'MCP_CALL_TIMEOUT', server: 'a', toolName: 'mcp.a.t', mcpToolName: 't', message: 'slow', rpcCode: -32001 });

  it('carry a stable code, their fields and an ES2022 cause', () => {
    expect(config).toMatchObject({ name: 'McpConfigError', code: 'MCP_CONFIG_INVALID', source: 'mcp.json', server: 'a', key: 'args', cause });
    expect(server).toMatchObject({ name: 'McpServerError', code: 'MCP_SERVER_EXITED', server: 'a', stderr: 'boom', exitCode: 1, signal: null, planId: 'p' });
    expect(tool).toMatchObject({ name: 'McpToolError', code: 'MCP_CALL_TIMEOUT', toolName: 'mcp.a.t', mcpToolName: 't', rpcCode: -32001 });
    expect('cause' in tool).toBe(false);
  });

  it('are told apart by isInstance, also across copies of the package (Symbol.for brands)', () => {
    expect(McpAdapterError.isInstance(config) && McpAdapterError.isInstance(server) && McpAdapterError.isInstance(tool)).toBe(true);
    expect(McpConfigError.isInstance(config)).toBe(true);
    expect(McpConfigError.isInstance(server)).toBe(false);
    expect(McpServerError.isInstance(server)).toBe(true);
    expect(McpServerError.isInstance(tool)).toBe(false);
    expect(McpToolError.isInstance(tool)).toBe(true);
    expect(McpToolError.isInstance(new Error('x'))).toBe(false);
    expect(McpToolError.isInstance(null)).toBe(false);
    const foreign = Object.assign(new Error('from another copy'), { [Symbol.for('ca.error.McpToolError')]: true });
    expect(McpToolError.isInstance(foreign)).toBe(true);
  });

  it('are errors of the @ca/domain base: CaError.isInstance, toJSON without stack or cause', () => {
    for (const error of [config, server, tool]) expect(CaError.isInstance(error)).toBe(true);
    expect(server.toJSON()).toEqual({ name: 'McpServerError', code: 'MCP_SERVER_EXITED', message: 'gone', planId: 'p' });
    expect(JSON.stringify(tool)).not.toContain('stack');
  });
});
