import { TestTool } from '@ca/tool-lifecycle/testing';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
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

  it('answers server/discover without starting a plan, offering 2026-07-28 and the change notifications a listen stream carries', async () => {
    const tool = new TestTool({ name: 'notes.read', capability: reader, execute: () => 'x' });
    const { gateway } = gatewayOver([tool]);
    server = await serveHttp(gateway);
    const answer = await post(server, { jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: envelope() } });
    const result = answer.json?.['result'] as Record<string, unknown>;
    expect(result).toMatchObject({ supportedVersions: ['2026-07-28'], resultType: 'complete', capabilities: { tools: { listChanged: true }, logging: {} } });
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

  it('a 2026-07-28 client that takes no elicitation is not asked: an approval is decided by the fallback, else denied', async () => {
    const writer = { writes: true, checkpointable: true, idempotent: false, destructive: false, openWorld: false };
    const write = new TestTool({ name: 'notes.write', capability: writer, execute: () => 'wrote' });
    const askWrites = { readOnly: false, requireCheckpoint: false, approval: { capabilities: ['writes' as const] } };
    const { gateway } = gatewayOver([write], { profile: { policy: askWrites } });
    server = await serveHttp(gateway);
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'notes.write', arguments: {}, _meta: envelope('2026-07-28', {}) } };
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

  it('asks a 2026-07-28 client that takes form elicitation through the answer (input_required); its retry with the answer runs the call; a forged state is asked again', async () => {
    const writer = { writes: true, checkpointable: true, idempotent: false, destructive: false, openWorld: false };
    const write = new TestTool({ name: 'notes.write', capability: writer, execute: () => 'wrote' });
    const { gateway } = gatewayOver([write], { profile: { policy: { readOnly: false, requireCheckpoint: false, approval: { capabilities: ['writes'] } } } });
    server = await serveHttp(gateway);
    const params = { name: 'notes.write', arguments: { text: 'hi' }, _meta: envelope('2026-07-28', { elicitation: { form: {} } }) };
    const first = await post(server, { jsonrpc: '2.0', id: 1, method: 'tools/call', params });
    const asked = first.json?.['result'] as {
      resultType: string;
      inputRequests: Record<string, { method: string; params: Record<string, any> }>;
      requestState: string;
    };
    expect(asked.resultType).toBe('input_required');
    const [[key, question]] = Object.entries(asked.inputRequests) as [[string, { method: string; params: Record<string, any> }]];
    expect(question.method).toBe('elicitation/create');
    expect(question.params).toMatchObject({ mode: 'form', requestedSchema: { properties: { answer: expect.any(Object) } } });
    expect(question.params['message']).toMatch(/Tool notes\.write .*Arguments: \{"text":"hi"\}/s);
    expect(write.count('execute')).toBe(0);

    // An answer for another question, or with a state the server did not sign, answers nothing: asked again.
    const stray = await post(server, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { ...params, inputResponses: { 'approval-other': { action: 'accept', content: { answer: 'once' } } }, requestState: asked.requestState },
    });
    expect((stray.json?.['result'] as { resultType: string }).resultType).toBe('input_required');
    const [body] = asked.requestState.split('.');
    const forged = await post(server, {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { ...params, inputResponses: { [key]: { action: 'accept', content: { answer: 'once' } } }, requestState: `${body}.${'A'.repeat(43)}` },
    });
    expect((forged.json?.['result'] as { resultType: string }).resultType).toBe('input_required');
    expect(write.count('execute')).toBe(0);

    const retried = await post(server, {
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { ...params, inputResponses: { [key]: { action: 'accept', content: { answer: 'once' } } }, requestState: asked.requestState },
    });
    expect(retried.json?.['result']).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'wrote' }] });
    expect(write.count('execute')).toBe(1);
    // The answer was for those arguments: other arguments are asked about.
    const other = await post(server, {
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: {
        ...params,
        arguments: { text: 'other' },
        inputResponses: { [key]: { action: 'accept', content: { answer: 'once' } } },
        requestState: asked.requestState,
      },
    });
    expect((other.json?.['result'] as { resultType: string }).resultType).toBe('input_required');
    expect(write.count('execute')).toBe(1);
  });

  it('a v2 client fulfils the question with its elicitation handler and gets the result; a denial is the call’s error', async () => {
    const writer = { writes: true, checkpointable: true, idempotent: false, destructive: false, openWorld: false };
    const write = new TestTool({ name: 'notes.write', capability: writer, execute: () => 'wrote' });
    const { gateway } = gatewayOver([write], { profile: { policy: { readOnly: false, requireCheckpoint: false, approval: { capabilities: ['writes'] } } } });
    server = await serveHttp(gateway);
    const client = new V2Client({ name: 'v2', version: '2.4.0' }, { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } });
    const messages: string[] = [];
    let answer = 'once';
    client.setRequestHandler('elicitation/create', async (request) => {
      messages.push(String((request.params as { message?: string }).message));
      return { action: 'accept', content: { answer } };
    });
    await client.connect(new V2Transport(new URL(server.url)));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const result = await client.callTool({ name: 'notes.write', arguments: { text: 'a' } });
      expect(result.content).toEqual([{ type: 'text', text: 'wrote' }]);
      expect(messages).toHaveLength(1);
      expect(write.count('execute')).toBe(1);
      answer = 'deny';
      const denied = await client.callTool({ name: 'notes.write', arguments: { text: 'b' } });
      expect(denied.isError).toBe(true);
      expect((denied.content as { text: string }[])[0]?.text).toMatch(/^Error TOOL_APPROVAL_DENIED: a person denied this call/);
      expect(write.count('execute')).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('a v2 client on 2026-07-28 gets the progress of its call on the answer’s stream, then the result', async () => {
    const steps = new TestTool({
      name: 'slow.steps',
      capability: reader,
      execute: (_input, _ctx, options) => {
        for (let step = 1; step <= 3; step++) options?.onProgress?.({ progress: step, total: 3, message: `step ${step}` });
        return 'done';
      },
    });
    const { gateway } = gatewayOver([steps]);
    server = await serveHttp(gateway);
    const client = new V2Client({ name: 'v2', version: '2.4.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new V2Transport(new URL(server.url)));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const seen: unknown[] = [];
      const result = await client.callTool({ name: 'slow.steps', arguments: {} }, { onprogress: (progress) => seen.push(progress) });
      expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
      expect(seen).toEqual([
        { progress: 1, total: 3, message: 'step 1' },
        { progress: 2, total: 3, message: 'step 2' },
        { progress: 3, total: 3, message: 'step 3' },
      ]);
      // Without a progress token the answer is plain JSON, as before.
      const plain = await post(server, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'slow.steps', arguments: {}, _meta: envelope() } });
      expect((plain.json?.['result'] as { content: unknown }).content).toEqual([{ type: 'text', text: 'done' }]);
    } finally {
      await client.close();
    }
  });

  it('subscriptions/listen: a v2 client hears of tool list changes on its stream, tied to its subscription; closing it ends the plan behind it', async () => {
    const tool = new TestTool({ name: 'notes.read', capability: reader, execute: () => 'x' });
    const { gateway, source } = gatewayOver([tool]);
    server = await serveHttp(gateway);
    const client = new V2Client({ name: 'v2', version: '2.4.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new V2Transport(new URL(server.url)));
    try {
      let changes = 0;
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        changes++;
      });
      // Asked for resources too: there are none to subscribe to, so none is honored.
      const subscription = await client.listen({ toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: ['file:///x'] });
      expect(subscription.honoredFilter).toEqual({ toolsListChanged: true, resourceSubscriptions: [] });
      // The plan behind the stream lists the tools once.
      await eventually(() => gateway.sessionCount === 1, 'the listen session');
      source.add(new TestTool({ name: 'notes.find', capability: reader, execute: () => 'y' }));
      await eventually(() => changes === 1, 'notifications/tools/list_changed on the listen stream');
      expect((await client.listTools()).tools.map((listed) => listed.name)).toEqual(['notes.find', 'notes.read']);
      await subscription.close();
      await eventually(() => gateway.sessionCount === 0, 'the listen session to end');
    } finally {
      await client.close();
    }
  });

  it('subscriptions/listen: refuses a filter that is not one, and ends an open stream gracefully when the server stops', async () => {
    const tool = new TestTool({ name: 'notes.read', capability: reader, execute: () => 'x' });
    const { gateway } = gatewayOver([tool]);
    server = await serveHttp(gateway);
    const bad = await post(server, {
      jsonrpc: '2.0',
      id: 1,
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: 'yes' }, _meta: envelope() },
    });
    expect(bad.json?.['error']).toMatchObject({ code: -32602, message: expect.stringMatching(/toolsListChanged/) });

    const response = await fetch(server.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'listen:1',
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true }, _meta: envelope() },
      }),
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const streamReader = (response.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    const decoder = new TextDecoder();
    while (!text.includes('acknowledged')) text += decoder.decode((await streamReader.read()).value ?? new Uint8Array());
    const closing = server.close();
    for (;;) {
      const { value, done } = await streamReader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    await closing;
    server = undefined;
    const events = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as Record<string, any>);
    expect(events).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen:1' }, notifications: { toolsListChanged: true } },
      },
      {
        jsonrpc: '2.0',
        id: 'listen:1',
        result: {
          _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen:1', 'io.modelcontextprotocol/serverInfo': expect.any(Object) },
          resultType: 'complete',
        },
      },
    ]);
  });

  it('subscriptions/listen: streams count against maxSessions; one more is refused with 503 and Retry-After', async () => {
    const tool = new TestTool({ name: 'notes.read', capability: reader, execute: () => 'x' });
    const { gateway } = gatewayOver([tool]);
    server = await serveHttp(gateway, { maxSessions: 1 });
    const listen = (id: string) =>
      fetch((server as McpHttpServer).url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: envelope() } }),
      });
    const open = await listen('listen:1');
    expect(open.headers.get('content-type')).toBe('text/event-stream');
    const refused = await listen('listen:2');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toEqual(expect.any(String));
    await (open.body as ReadableStream<Uint8Array>).cancel();
    await eventually(() => gateway.sessionCount === 0, 'the first stream to end');
    const again = await listen('listen:3');
    expect(again.headers.get('content-type')).toBe('text/event-stream');
    await (again.body as ReadableStream<Uint8Array>).cancel();
  });
});
