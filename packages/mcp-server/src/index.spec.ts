import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as mcpServer from './index';

describe('@ca/mcp-server public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(mcpServer).sort()).toEqual([
      'CALL_TOOL_NAME',
      'GatewayClients',
      'McpGateway',
      'McpGatewayError',
      'SEARCH_TOOL_NAME',
      'createResourceServerAuth',
      'serveHttp',
      'serveStdio',
    ]);
  });

  it('has one entry, and its errors are branded CaErrors', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    expect(Object.keys(manifest.exports).sort()).toEqual(['.', './package.json']);
    const error = new mcpServer.McpGatewayError({ problem: { kind: 'session-limit', limit: 2 } });
    expect(mcpServer.McpGatewayError.isInstance(error)).toBe(true);
    expect(error.toJSON()).toMatchObject({ name: 'McpGatewayError', code: 'GATEWAY_SESSION_LIMIT' });
  });
});
