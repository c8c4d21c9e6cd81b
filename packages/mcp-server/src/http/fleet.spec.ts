import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { InMemoryPlanRegistry, TestTool } from '@ca/tool-lifecycle/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { eventually, gatewayOver } from '../gateway/gateway.test-helper';
import { serveHttp, type McpHttpServer } from './serve-http';
import { SessionSeal } from './session-seal';

// The plain round-robin proxy of the fixtures (no affinity; a replica that refuses connections is skipped).
const { startRoundRobinProxy } = require(path.resolve(__dirname, '../__fixtures__/round-robin-proxy.js')) as {
  startRoundRobinProxy: (backends: readonly string[]) => Promise<{ url: URL; counts: number[]; close(): Promise<void> }>;
};

jest.setTimeout(300_000);

const reader = { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false };

function raw(url: URL, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('serveHttp: a fleet of replicas behind a round-robin proxy', () => {
  it('serves every session on any replica from its sealed id, and a replica that goes away costs the clients nothing', async () => {
    const key = randomBytes(32);
    // The registry every replica announces its plans in (Redis in a real fleet).
    const registry = new InMemoryPlanRegistry();
    const replicas = [0, 1, 2].map((index) => {
      const tool = new TestTool({ name: 'notes.read', capability: reader, execute: (_input, ctx) => `r${index} ${ctx.planId}` });
      return { index, tool, ...gatewayOver([tool], { planRegistry: registry }) };
    });
    const servers: McpHttpServer[] = [];
    for (const replica of replicas) servers.push(await serveHttp(replica.gateway, { fleet: { key, replicaId: `r${replica.index}`, registry } }));
    const proxy = await startRoundRobinProxy(servers.map((server) => `http://127.0.0.1:${server.address.port}`));
    const endpoint = new URL('/mcp', proxy.url);
    const call = async (client: Client): Promise<{ replica: string; plan: string }> => {
      const text = ((await client.callTool({ name: 'notes.read', arguments: {} })).content as { text: string }[])[0]?.text ?? '';
      const [replica = '', plan = ''] = text.split(' ');
      return { replica, plan };
    };
    const clients: { client: Client; transport: StreamableHTTPClientTransport; replicas: Set<string>; session?: string }[] = [];
    try {
      for (let index = 0; index < 30; index++) {
        const transport = new StreamableHTTPClientTransport(endpoint);
        const client = new Client({ name: `fleet-${index}`, version: '1.0.0' });
        await client.connect(transport);
        clients.push({ client, transport, replicas: new Set() });
      }
      for (let round = 0; round < 4; round++) {
        for (const entry of clients) {
          // Two calls in a row: a proxy without affinity sends them to two replicas.
          for (let repeat = 0; repeat < 2; repeat++) {
            const { replica, plan } = await call(entry.client);
            entry.replicas.add(replica);
            // One session id in every replica's plan: mcp-<session> where it opened, mcp-<session>.<replica> elsewhere.
            const [, session, on] = /^mcp-([0-9a-f-]{36})(?:\.(r\d))?$/.exec(plan) ?? [];
            expect(session).toBeDefined();
            if (on !== undefined) expect(on).toBe(replica);
            if (entry.session !== undefined) expect(session).toBe(entry.session);
            entry.session = session;
          }
        }
      }
      // No affinity: sessions were served by more than one replica each.
      expect(clients.every((entry) => entry.replicas.size >= 2)).toBe(true);
      // The id carries the session sealed: nothing of it can be read.
      const sessionId = clients[0]?.transport.sessionId ?? '';
      expect(sessionId.includes(clients[0]?.session ?? '')).toBe(false);

      // A replica goes away in the middle: every client's next request is served by another.
      await servers[1]?.close();
      for (const entry of clients) {
        const { replica, plan } = await call(entry.client);
        expect(replica).not.toBe('r1');
        expect(plan.startsWith(`mcp-${entry.session}`)).toBe(true);
      }

      // A client deletes its session on one replica: its plans end on every replica.
      const leaving = clients.find((entry) => entry.replicas.has('r0') && entry.replicas.has('r2')) as (typeof clients)[number];
      const ofSession = async (session: string | undefined) => (await registry.list()).filter((plan) => plan.labels['session'] === session);
      expect((await ofSession(leaving.session)).length).toBeGreaterThanOrEqual(2);
      await leaving.transport.terminateSession();
      await eventually(async () => (await ofSession(leaving.session)).length === 0, "the session's plans to end on every replica", 120_000);

      // An id sealed under another key, or altered, is "not found" (start a new session); never served.
      const foreign = new SessionSeal(randomBytes(32)).seal({ sid: '00000000-0000-4000-8000-000000000000', issuedAt: Date.now() });
      const altered = `${sessionId.slice(0, -4)}${sessionId.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
      for (const id of [foreign, altered, 'not-a-session']) {
        const answer = await raw(
          endpoint,
          'POST',
          { 'mcp-session-id': id, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
          JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        );
        expect(answer.status).toBe(404);
      }
    } finally {
      for (const entry of clients) await entry.client.close().catch(() => undefined);
      await proxy.close();
      for (const server of servers) await server.close();
    }
    // Every replica ended every plan it held: none is left in the registry.
    expect(await registry.list()).toEqual([]);
    const activated = replicas.reduce((sum, replica) => sum + replica.tool.count('execute'), 0);
    expect(activated).toBe(30 * 9);
  });

  it('refuses a fleet key it cannot use and a replica name that is not a name', async () => {
    const { gateway } = gatewayOver([new TestTool({ name: 'notes.read', capability: reader })]);
    await expect(serveHttp(gateway, { fleet: { key: 'short' } })).rejects.toMatchObject({
      code: 'GATEWAY_INVALID_ARGUMENT',
      message: expect.stringMatching(/fleet.key/),
    });
    await expect(serveHttp(gateway, { fleet: { key: randomBytes(16) } })).rejects.toMatchObject({ code: 'GATEWAY_INVALID_ARGUMENT' });
    await expect(serveHttp(gateway, { fleet: { key: randomBytes(32), replicaId: 'a b' } })).rejects.toMatchObject({ code: 'GATEWAY_INVALID_ARGUMENT' });
    await gateway.close();
  });

  it("a 2026-07-28 client's answer to a question (input_required) is taken by whichever replica its retry reaches", async () => {
    const key = randomBytes(32);
    const writer = { writes: true, checkpointable: true, idempotent: false, destructive: false, openWorld: false };
    const policy = { readOnly: false, requireCheckpoint: false, approval: { capabilities: ['writes' as const] } };
    const replicas = [0, 1].map((index) => {
      const tool = new TestTool({ name: 'notes.write', capability: writer, execute: () => `written by r${index}` });
      return { index, tool, ...gatewayOver([tool], { profile: { policy } }) };
    });
    const servers: McpHttpServer[] = [];
    for (const replica of replicas) servers.push(await serveHttp(replica.gateway, { fleet: { key, replicaId: `r${replica.index}` } }));
    const proxy = await startRoundRobinProxy(servers.map((server) => `http://127.0.0.1:${server.address.port}`));
    const answeredBy: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      answeredBy.push(response.headers.get('x-agents-replica') ?? '?');
      return response;
    };
    const client = new V2Client({ name: 'v2', version: '2.4.0' }, { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } });
    let asked = 0;
    client.setRequestHandler('elicitation/create', async () => {
      asked++;
      return { action: 'accept', content: { answer: 'once' } };
    });
    try {
      await client.connect(new V2Transport(new URL('/mcp', proxy.url), { fetch: recording }));
      const before = answeredBy.length;
      const result = await client.callTool({ name: 'notes.write', arguments: { text: 'x' } });
      // The question from one replica, the retry answered by the other.
      const [first, second] = answeredBy.slice(before);
      expect(new Set([first, second])).toEqual(new Set(['r0', 'r1']));
      expect(asked).toBe(1);
      expect((result.content as { text: string }[])[0]?.text).toBe(`written by ${second}`);
      expect(replicas.map((replica) => replica.tool.count('execute'))).toEqual(second === 'r0' ? [1, 0] : [0, 1]);
    } finally {
      await client.close();
      await proxy.close();
      for (const server of servers) await server.close();
    }
  });
});
