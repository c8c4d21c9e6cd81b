import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ToolRuntime, type ToolRuntimeOptions } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { createBuiltinAdapter } from './builtin-tool-source';

interface Arrival {
  readonly method: string;
  readonly url: string;
  readonly key: string | undefined;
}

describe('HTTP tools: effects that happen once', () => {
  let server: Server;
  let base: string;
  let arrivals: Arrival[];
  /** How each request to a path is answered, by how many came before it. */
  let script: Record<string, (count: number, request: IncomingMessage, response: ServerResponse) => void>;

  beforeEach(async () => {
    arrivals = [];
    script = {};
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const path = (request.url ?? '').split('?')[0] ?? '';
        const header = request.headers['idempotency-key'];
        const count = arrivals.filter((arrival) => arrival.url === path).length;
        arrivals.push({ method: request.method ?? '', url: path, key: typeof header === 'string' ? header : undefined });
        const answer = script[path];
        if (answer === undefined) response.end('ok');
        else answer(count, request, response);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  // The server is on 127.0.0.1: the test opts into private networks.
  const runtimeWith = (options: ToolRuntimeOptions = {}) =>
    new ToolRuntime({ sources: [createBuiltinAdapter({ http: { allowPrivateNetworks: true } })], logger: new RecordingLogger(), options });
  const retrying: ToolRuntimeOptions = { calls: [{ tools: 'builtin.http.*', retry: { attempts: 3, backoffMs: 1, maxBackoffMs: 20 } }] };

  it('a retried POST sends the same Idempotency-Key: a 503 with Retry-After, then success', async () => {
    script['/orders'] = (count, _request, response) => {
      if (count === 0) response.writeHead(503, { 'retry-after': '0' }).end('busy');
      else response.end('created');
    };
    const runtime = runtimeWith(retrying);
    const result = await runtime.execute<{ body: string }>(
      'builtin.http.request',
      { url: `${base}/orders`, method: 'POST', body: '{"item":"book"}' },
      runtime.createPlan(),
    );
    expect(result).toMatchObject({ ok: true, output: { status: 200, body: 'created' } });
    expect(arrivals).toHaveLength(2);
    expect(arrivals[0]?.key).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(arrivals[1]?.key).toBe(arrivals[0]?.key);
    expect(result.trace.attempts).toBe(2);
    // The key that was sent is in the trace, for the service's side of a duplicate to be traced back.
    expect(arrivals[0]?.key).toBe(`"${result.trace.idempotencyKey}"`);
  });

  it('a POST whose connection is cut before an answer is retried with the same key', async () => {
    script['/pay'] = (count, request, response) => {
      if (count === 0) request.socket.destroy();
      else response.end('paid');
    };
    const runtime = runtimeWith(retrying);
    const result = await runtime.execute('builtin.http.request', { url: `${base}/pay`, method: 'POST', body: 'x' }, runtime.createPlan());
    expect(result.ok).toBe(true);
    expect(arrivals.map((arrival) => arrival.key)).toEqual([arrivals[0]?.key, arrivals[0]?.key]);
    expect(arrivals[0]?.key).toBeDefined();
  });

  it('gives up after the attempts, with the last answer; a 404 is not retried', async () => {
    script['/down'] = (_count, _request, response) => void response.writeHead(502).end('bad gateway');
    script['/gone'] = (_count, _request, response) => void response.writeHead(404).end('no');
    const runtime = runtimeWith(retrying);
    const ctx = runtime.createPlan();
    const down = await runtime.execute('builtin.http.request', { url: `${base}/down`, method: 'PUT', body: 'x' }, ctx);
    expect(down.ok).toBe(false);
    expect(down.ok ? undefined : down.error).toMatchObject({ code: 'BUILTIN_HTTP_STATUS', retryable: true });
    expect(down.trace.attempts).toBe(3);
    const gone = await runtime.execute('builtin.http.request', { url: `${base}/gone`, method: 'DELETE' }, ctx);
    expect(gone.ok ? undefined : (gone.error as { retryable?: boolean }).retryable).toBeUndefined();
    expect(arrivals.filter((arrival) => arrival.url === '/down')).toHaveLength(3);
    expect(arrivals.filter((arrival) => arrival.url === '/gone')).toHaveLength(1);
  });

  it('two deliberate identical POSTs carry different keys; a plan restarted with the same id sends the same keys again', async () => {
    const post = async (runtime: ToolRuntime, planId: string) => {
      const ctx = runtime.createPlan({ planId });
      await runtime.execute('builtin.http.request', { url: `${base}/append`, method: 'POST', body: 'line' }, ctx);
      await runtime.execute('builtin.http.request', { url: `${base}/append`, method: 'POST', body: 'line' }, ctx);
      await runtime.endPlan(ctx);
    };
    await post(runtimeWith(), 'nightly-import');
    await post(runtimeWith(), 'nightly-import');
    const keys = arrivals.map((arrival) => arrival.key);
    expect(keys[0]).not.toBe(keys[1]);
    expect(keys.slice(2)).toEqual(keys.slice(0, 2));
  });

  it('sends no key with GET, keeps a key the caller set, and drops it when a 303 turns the POST into a GET', async () => {
    script['/moved'] = (_count, _request, response) => void response.writeHead(303, { location: '/landing' }).end();
    const runtime = runtimeWith();
    const ctx = runtime.createPlan();
    await runtime.execute('builtin.http.get', { url: `${base}/read` }, ctx);
    await runtime.execute('builtin.http.request', { url: `${base}/mine`, method: 'POST', headers: { 'Idempotency-Key': '"chosen-by-caller"' } }, ctx);
    await runtime.execute('builtin.http.request', { url: `${base}/moved`, method: 'POST', body: 'x' }, ctx);
    expect(arrivals).toEqual([
      { method: 'GET', url: '/read', key: undefined },
      { method: 'POST', url: '/mine', key: '"chosen-by-caller"' },
      { method: 'POST', url: '/moved', key: expect.stringMatching(/^"[A-Za-z0-9_-]{43}"$/) },
      { method: 'GET', url: '/landing', key: undefined },
    ]);
  });
});
