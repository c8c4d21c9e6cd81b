import { request as httpRequest } from 'node:http';
import { TestTool } from '@ca/tool-lifecycle/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { eventually, gatewayOver } from '../gateway/gateway.test-helper';
import { serveHttp, type McpHttpServer } from './serve-http';

const reader = { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false };

async function httpClient(url: URL, headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** A raw request with the headers a test chooses (`fetch` does not let a test set Host). */
function raw(
  url: URL,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'POST', headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('serveHttp', () => {
  let server: McpHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('serves sessions on loopback: each its own plan, ended once when the client deletes it', async () => {
    const tool = new TestTool({ name: 'notes.read', capability: reader, execute: (_input, ctx) => ctx.planId });
    const { gateway } = gatewayOver([tool]);
    server = await serveHttp(gateway);
    expect(server.url.href).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const { client, transport } = await httpClient(server.url);
    const plan = ((await client.callTool({ name: 'notes.read', arguments: {} })).content as { text: string }[])[0]?.text;
    expect(plan).toBe(`mcp-${transport.sessionId}`);
    expect(server.sessionCount).toBe(1);
    await transport.terminateSession();
    await eventually(() => tool.count('deactivate', plan) === 1, "the session's plan to end");
    expect(server.sessionCount).toBe(0);
    const gone = await raw(server.url, {
      headers: { ...mcpHeaders, 'mcp-session-id': transport.sessionId ?? '' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(gone.status).toBe(404);
    await client.close();
    expect(tool.count('deactivate', plan)).toBe(1);
  });

  it('refuses a Host or an Origin it does not answer to (DNS rebinding), and accepts its own', async () => {
    const { gateway } = gatewayOver([new TestTool({ name: 'notes.read', capability: reader })]);
    server = await serveHttp(gateway);
    const port = server.url.port;
    const evilHost = await raw(server.url, { headers: { ...mcpHeaders, host: 'evil.example.com' }, body: initialize });
    expect(evilHost.status).toBe(403);
    expect(JSON.parse(evilHost.body)).toMatchObject({
      error: { message: expect.stringMatching(/Host header "evil.example.com" is not one this server answers to/) },
    });
    const evilOrigin = await raw(server.url, { headers: { ...mcpHeaders, host: `localhost:${port}`, origin: 'http://evil.example.com' }, body: initialize });
    expect(evilOrigin.status).toBe(403);
    const otherPort = await raw(server.url, { headers: { ...mcpHeaders, host: `localhost:${port}`, origin: 'http://localhost:1' }, body: initialize });
    expect(otherPort.status).toBe(403);
    const own = await raw(server.url, { headers: { ...mcpHeaders, host: `localhost:${port}`, origin: `http://localhost:${port}` }, body: initialize });
    expect(own.status).toBe(200);
    await eventually(() => server?.sessionCount === 1, 'the session');
  });

  it('takes named hosts and origins beyond loopback only when asked, and never without sign-in unless told', async () => {
    const { gateway } = gatewayOver([new TestTool({ name: 'notes.read', capability: reader })]);
    await expect(serveHttp(gateway, { host: '0.0.0.0' })).rejects.toMatchObject({
      code: 'GATEWAY_HTTP_UNSAFE',
      message: expect.stringMatching(/no allowed host names/),
    });
    await expect(serveHttp(gateway, { host: '0.0.0.0', allowedHosts: ['tools.internal'] })).rejects.toMatchObject({
      code: 'GATEWAY_HTTP_UNSAFE',
      message: expect.stringMatching(/no OAuth sign-in is configured/),
    });
    server = await serveHttp(gateway, {
      host: '0.0.0.0',
      allowedHosts: ['tools.internal'],
      allowedOrigins: ['https://app.example.com'],
      allowUnauthenticated: true,
    });
    const url = new URL(`http://127.0.0.1:${server.url.port}/mcp`);
    expect((await raw(url, { headers: { ...mcpHeaders, host: 'tools.internal:8080', origin: 'https://app.example.com' }, body: initialize })).status).toBe(200);
    expect((await raw(url, { headers: { ...mcpHeaders, host: 'other.internal' }, body: initialize })).status).toBe(403);
  });

  it('limits the sessions and the size of a request, and ends a session its client left without a word', async () => {
    const tool = new TestTool({ name: 'notes.read', capability: reader, execute: (_input, ctx) => ctx.planId });
    const { gateway } = gatewayOver([tool]);
    server = await serveHttp(gateway, { maxSessions: 1, sessionIdleTimeoutMs: 1_000, maxRequestBytes: 2_000 });
    const { client } = await httpClient(server.url);
    const plan = ((await client.callTool({ name: 'notes.read', arguments: {} })).content as { text: string }[])[0]?.text;
    const second = await raw(server.url, { headers: mcpHeaders, body: initialize });
    expect(second.status).toBe(503);
    expect(second.body).toMatch(/already serves 1 session/);
    const big = await raw(server.url, {
      headers: mcpHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { pad: 'x'.repeat(5_000) } }),
    });
    expect(big.status).toBe(413);
    // While the client holds its stream open, the session lives however long nobody calls.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(tool.count('deactivate', plan)).toBe(0);
    // It goes away without deleting the session (a laptop closed, a process killed): the session ends, and its plan with it.
    await client.close();
    await eventually(() => tool.count('deactivate', plan) === 1, 'the abandoned session to end');
    expect(server.sessionCount).toBe(0);
  });
});
