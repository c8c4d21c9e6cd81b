import { TestTool } from '@ca/tool-lifecycle/testing';
import { eventually, gatewayOver } from '../gateway/gateway.test-helper';
import { serveHttp, type McpHttpServer } from './serve-http';

const reader = { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false };
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28' };

function envelope(version = '2026-07-28', capabilities: Record<string, unknown> | null = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': version,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1' },
    ...(capabilities === null ? {} : { 'io.modelcontextprotocol/clientCapabilities': capabilities }),
  };
}

async function post(server: McpHttpServer, body: unknown): Promise<{ status: number; json: Record<string, unknown> | undefined; session: string | null }> {
  const response = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  return {
    status: response.status,
    json: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>),
    session: response.headers.get('mcp-session-id'),
  };
}

describe('serveHttp: MCP 2026-07-28 requests (no session)', () => {
  let server: McpHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('answers each request in a plan of its own, ended when it is answered; no session is opened or named', async () => {
    const tool = new TestTool({ name: 'notes.read', capability: reader, execute: (_input, ctx) => ctx.planId });
    const { gateway } = gatewayOver([tool]);
    server = await serveHttp(gateway);
    const plans: string[] = [];
    for (const id of [1, 2]) {
      const answer = await post(server, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'notes.read', arguments: {}, _meta: envelope() } });
      expect(answer.status).toBe(200);
      expect(answer.session).toBeNull();
      const result = answer.json?.['result'] as { resultType: string; content: { text: string }[]; _meta: Record<string, unknown> };
      expect(answer.json?.['id']).toBe(id);
      expect(result.resultType).toBe('complete');
      expect(result._meta['io.modelcontextprotocol/serverInfo']).toEqual({ name: 'agents-mcp-gateway', version: expect.any(String) });
      plans.push(result.content[0]?.text ?? '');
    }
    expect(plans[0]).toMatch(/^mcp-[0-9a-f-]{36}$/);
    expect(plans[1]).not.toBe(plans[0]);
    for (const plan of plans) await eventually(() => tool.count('deactivate', plan) === 1, `plan ${plan} to end`);
    expect(server.sessionCount).toBe(0);

    const listed = await post(server, { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: envelope() } });
    const list = listed.json?.['result'] as Record<string, unknown>;
    expect(list).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    expect((list['tools'] as { name: string }[]).map((listedTool) => listedTool.name)).toEqual(['notes.read']);
  });

  it('answers server/discover without starting a plan, offering 2026-07-28 and no change notifications', async () => {
    const tool = new TestTool({ name: 'notes.read', capability: reader, execute: () => 'x' });
    const { gateway } = gatewayOver([tool]);
    server = await serveHttp(gateway);
    const answer = await post(server, { jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: envelope() } });
    const result = answer.json?.['result'] as Record<string, unknown>;
    expect(result).toMatchObject({ supportedVersions: ['2026-07-28'], resultType: 'complete', capabilities: { tools: {}, logging: {} } });
    expect(JSON.stringify(result['capabilities'])).not.toMatch(/listChanged|subscribe/);
    expect(result['instructions']).toEqual(expect.any(String));
    expect(tool.count('activate')).toBe(0);
  });

  it('refuses what it cannot serve with the error MCP names, and accepts notifications', async () => {
    const tool = new TestTool({ name: 'notes.read', capability: reader, execute: () => 'x' });
    const { gateway } = gatewayOver([tool]);
    server = await serveHttp(gateway);
    const later = await post(server, { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope('2027-01-01') } });
    expect(later.json?.['error']).toMatchObject({ code: -32022, data: { supported: ['2026-07-28'], requested: '2027-01-01' } });
    const bare = await post(server, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope('2026-07-28', null) } });
    expect(bare.json?.['error']).toMatchObject({ code: -32602, message: expect.stringMatching(/clientCapabilities/) });
    const unknown = await post(server, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'nope', arguments: {}, _meta: envelope() } });
    expect(unknown.json?.['error']).toMatchObject({ code: -32602 });
    const notification = await post(server, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, _meta: envelope() } });
    expect(notification.status).toBe(202);
    // A 2025-era request without a session is still told to initialize.
    const old = await post(server, { jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} });
    expect(old.status).toBe(400);
    expect(server.sessionCount).toBe(0);
  });

  it('never asks a 2026-07-28 client a question, even one that declares elicitation: an approval is decided by the fallback, else denied', async () => {
    const writer = { writes: true, checkpointable: true, idempotent: false, destructive: false, openWorld: false };
    const write = new TestTool({ name: 'notes.write', capability: writer, execute: () => 'wrote' });
    const askWrites = { readOnly: false, requireCheckpoint: false, approval: { capabilities: ['writes' as const] } };
    const { gateway } = gatewayOver([write], { profile: { policy: askWrites } });
    server = await serveHttp(gateway);
    const call = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'notes.write', arguments: {}, _meta: envelope('2026-07-28', { elicitation: { form: {} } }) },
    };
    const denied = await post(server, call);
    const result = denied.json?.['result'] as { isError: boolean; content: { text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(/^Error TOOL_APPROVAL_DENIED/);
    expect(write.count('execute')).toBe(0);
    await server.close();

    const approving = gatewayOver([write], {
      profile: { policy: askWrites },
      fallbackApprovals: { requestApproval: () => ({ decision: 'approve', scope: 'once', decidedBy: '--approve' }) },
    });
    server = await serveHttp(approving.gateway);
    const approved = await post(server, call);
    expect((approved.json?.['result'] as { content: { text: string }[] }).content[0]?.text).toBe('wrote');
    expect(write.count('execute')).toBe(1);
  });
});
