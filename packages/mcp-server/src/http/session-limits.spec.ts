import { request as httpRequest } from 'node:http';
import type { RuntimeLogger } from '@ca/tool-lifecycle';
import { TestTool } from '@ca/tool-lifecycle/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { eventually, gatewayOver } from '../gateway/gateway.test-helper';
import { serveHttp, type McpHttpServer } from './serve-http';

jest.setTimeout(300_000);

const reader = { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false };

function planTool(): TestTool<Record<string, unknown>, string> {
  return new TestTool({ name: 'notes.read', capability: reader, execute: (_input, ctx) => ctx.planId });
}

/** A real SDK client over HTTP; while connected it holds its event stream open (a busy session). */
async function connect(url: URL, headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  const client = new Client({ name: 'limits-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

async function planOf(client: Client): Promise<string | undefined> {
  return ((await client.callTool({ name: 'notes.read', arguments: {} })).content as { text: string }[])[0]?.text;
}

function raw(url: URL, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

function recordingLogger(): RuntimeLogger & { readonly warnings: string[]; readonly infos: string[] } {
  const warnings: string[] = [];
  const infos: string[] = [];
  return {
    warnings,
    infos,
    debug: () => undefined,
    info: (message) => infos.push(message),
    warn: (message) => warnings.push(message),
    error: (message) => warnings.push(message),
  };
}

describe('serveHttp: session limits and fairness', () => {
  let server: McpHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('serves 1,000 one-shot clients in a row that never DELETE their sessions, then a new client at once', async () => {
    const tool = planTool();
    const logger = recordingLogger();
    const { gateway } = gatewayOver([tool]);
    server = await serveHttp(gateway, { logger });
    const plans = new Set<string | undefined>();
    for (let round = 0; round < 1_000; round++) {
      const { client } = await connect(server.url);
      plans.add(await planOf(client));
      // Gone without a DELETE, as the conformance runner and one-shot CLIs go.
      await client.close();
      expect(server.sessionCount).toBeLessThanOrEqual(32);
    }
    expect(plans.size).toBe(1_000);
    const { client, transport } = await connect(server.url);
    expect(await planOf(client)).toBe(`mcp-${transport.sessionId}`);
    // Every session that made room ended, its plan with it, and said so once.
    await eventually(() => tool.count('deactivate') === 1_000 - (server?.sessionCount ?? 0) + 1, 'the evicted plans to end', 120_000);
    expect(logger.infos.filter((line) => /ended idle session .* \(least recently used\)/.test(line))).toHaveLength(1_000 - 31);
    expect(logger.warnings).toEqual([]);
    await client.close();
  }, 600_000);

  it('ends the least recently used idle session, never a busy one; refuses with 503 and Retry-After only when every session is busy', async () => {
    const tool = planTool();
    const logger = recordingLogger();
    const { gateway } = gatewayOver([tool]);
    server = await serveHttp(gateway, { maxSessions: 3, logger });
    const busy = await connect(server.url);
    const idleOld = await connect(server.url);
    const idleNew = await connect(server.url);
    const [oldPlan, newPlan] = [await planOf(idleOld.client), await planOf(idleNew.client)];
    await planOf(busy.client);
    await idleOld.client.close();
    await eventually(() => server?.busySessionCount === 2, 'the server to see the first session idle', 120_000);
    await idleNew.client.close();
    await eventually(() => server?.busySessionCount === 1, 'the server to see two sessions idle', 120_000);
    const fourth = await connect(server.url);
    await eventually(() => tool.count('deactivate', oldPlan) === 1, 'the least recently used idle session to end', 120_000);
    expect(tool.count('deactivate', newPlan)).toBe(0);
    // The ended session's client is told what MCP says for it: start a new session.
    const gone = await raw(server.url, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), {
      'mcp-session-id': idleOld.transport.sessionId ?? '',
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    });
    expect(gone.status).toBe(404);
    const fifth = await connect(server.url);
    await eventually(() => tool.count('deactivate', newPlan) === 1, 'the next idle session to end', 120_000);
    await Promise.all([planOf(fourth.client), planOf(fifth.client)]);
    await eventually(() => server?.busySessionCount === 3, 'the three clients to hold their streams open', 120_000);
    // Three busy sessions: the next is refused, once in the log however often it is tried.
    for (let attempt = 0; attempt < 3; attempt++) {
      const refused = await raw(server.url, initialize);
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(JSON.parse(refused.body)).toMatchObject({ error: { code: -32000, data: { code: 'GATEWAY_SESSION_LIMIT' } } });
    }
    expect(logger.warnings.filter((line) => /refused a new session/.test(line))).toHaveLength(1);
    expect(await planOf(busy.client)).toBe(`mcp-${busy.transport.sessionId}`);
    await Promise.all([busy.client.close(), fourth.client.close(), fifth.client.close()]);
  });

  it('keeps one client to its own share: its idle session makes room for its next, a busy share is refused with 429', async () => {
    const tool = planTool();
    const { gateway } = gatewayOver([tool]);
    // Behind a proxy, clients are told apart by what the proxy says of them.
    server = await serveHttp(gateway, { maxSessions: 10, maxSessionsPerClient: 2, clientOf: (request) => request.headers['x-client'] as string | undefined });
    const alice = { 'x-client': 'alice' };
    const first = await connect(server.url, alice);
    const second = await connect(server.url, alice);
    const firstPlan = await planOf(first.client);
    await first.client.close();
    await eventually(() => server?.busySessionCount === 1, 'the server to see the first session idle', 120_000);
    const third = await connect(server.url, alice);
    await eventually(() => tool.count('deactivate', firstPlan) === 1, "the client's own idle session to end", 120_000);
    await Promise.all([planOf(second.client), planOf(third.client)]);
    await eventually(() => server?.busySessionCount === 2, 'both sessions to hold their streams open', 120_000);
    expect(server.sessionCount).toBe(2);
    const refused = await raw(server.url, initialize, alice);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({
      error: { code: -32000, message: expect.stringMatching(/This client already holds 2 MCP session/), data: { code: 'GATEWAY_SESSION_LIMIT' } },
    });
    // Another client is served; programs on this machine count only against the server's limit.
    const bob = await connect(server.url, { 'x-client': 'bob' });
    expect(await planOf(bob.client)).toBe(`mcp-${bob.transport.sessionId}`);
    expect((await raw(server.url, initialize)).status).toBe(200);
    await Promise.all([second.client.close(), third.client.close(), bob.client.close()]);
  });

  it('caps the requests of a client a minute with 429, Retry-After and the code, logged once', async () => {
    const logger = recordingLogger();
    const { gateway } = gatewayOver([planTool()]);
    server = await serveHttp(gateway, { requestsPerMinute: 3, logger });
    const statuses: number[] = [];
    let last: { status: number; body: string; headers: Record<string, unknown> } | undefined;
    for (let request = 0; request < 6; request++) {
      last = await raw(server.url, initialize);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    expect(Number(last?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(last?.body ?? '{}')).toMatchObject({
      error: { code: -32000, message: expect.stringMatching(/more than 3 request\(s\) .* in a minute/), data: { code: 'GATEWAY_RATE_LIMIT' } },
    });
    expect(logger.warnings.filter((line) => /request\(s\) a minute/.test(line))).toHaveLength(1);
  });

  it('refuses limits it cannot use', async () => {
    const { gateway } = gatewayOver([planTool()]);
    await expect(serveHttp(gateway, { maxSessionsPerClient: 0 })).rejects.toMatchObject({ code: 'GATEWAY_INVALID_ARGUMENT' });
    await expect(serveHttp(gateway, { requestsPerMinute: 1.5 })).rejects.toMatchObject({ code: 'GATEWAY_INVALID_ARGUMENT' });
    await expect(serveHttp(gateway, { maxSessions: -1 })).rejects.toMatchObject({ code: 'GATEWAY_INVALID_ARGUMENT' });
    await gateway.close();
  });
});
