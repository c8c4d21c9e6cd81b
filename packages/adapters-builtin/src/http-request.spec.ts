import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createExecutionContext, ToolCancelledError } from '@ca/tool-context';
import { ToolAccessDeniedError } from '@ca/tool-lifecycle';
import { Agent } from 'undici';
import type { BuiltinHttpSettings } from './builtin-adapter-settings';
import { createBuiltinAdapter } from './builtin-tool-source';
import { codeOf, strictRuntime } from './workspace.test-helper';

describe('HTTP tools against a local server', () => {
  let server: Server;
  let base: string;
  let port: number;
  let arrived: Promise<void>;
  let markArrived: () => void;
  let closed: Promise<void>;
  let markClosed: () => void;
  let hugeBytesSent = 0;

  const routes: Record<string, (request: IncomingMessage, response: ServerResponse, body: string) => void> = {
    '/json': (_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ hello: 'world' }));
    },
    '/echo': (request, response, body) => {
      response.setHeader('content-type', 'text/plain; charset=utf-8');
      response.end(`${request.method} ${request.headers['x-test'] ?? '-'} ${body}`);
    },
    '/missing': (_request, response) => {
      response.statusCode = 404;
      response.setHeader('content-type', 'text/plain');
      response.end('no such thing');
    },
    '/binary': (_request, response) => {
      response.setHeader('content-type', 'application/octet-stream');
      response.end(Buffer.from([0, 1, 2, 255]));
    },
    '/hang': () => markArrived(),
    '/huge': (_request, response) => {
      response.setHeader('content-type', 'application/octet-stream');
      const chunk = Buffer.alloc(64 * 1024, 7);
      const pump = (): void => {
        while (!response.destroyed && response.write(chunk)) hugeBytesSent += chunk.length;
        if (!response.destroyed) response.once('drain', pump);
      };
      pump();
    },
    '/redirect': (_request, response) => {
      response.writeHead(302, { location: '/json' }).end();
    },
    '/see-other': (_request, response) => {
      response.writeHead(303, { location: '/echo' }).end();
    },
    '/to-localhost': (_request, response) => {
      response.writeHead(302, { location: `http://localhost:${port}/json` }).end();
    },
    '/loop': (_request, response) => {
      response.writeHead(302, { location: '/loop' }).end();
    },
  };

  beforeEach(async () => {
    arrived = new Promise((resolve) => (markArrived = resolve));
    closed = new Promise((resolve) => (markClosed = resolve));
    hugeBytesSent = 0;
    server = createServer((request, response) => {
      request.socket.once('close', () => markClosed());
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        const route = routes[(request.url ?? '').split('?')[0]];
        if (route === undefined) response.writeHead(500).end('no route');
        else route(request, response, body);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const plan = (readOnly = false) => createExecutionContext({ planId: 'plan-http', policy: { readOnly } });
  // The server is on 127.0.0.1, which the HTTP tools refuse unless the settings allow private networks.
  const localRuntime = (http: BuiltinHttpSettings = {}) => strictRuntime({ http: { allowPrivateNetworks: true, ...http } });

  it('GETs JSON as text with status and headers', async () => {
    const { runtime } = localRuntime();
    const result = await runtime.execute<any>('builtin.http.get', { url: `${base}/json` }, plan());
    expect(result).toMatchObject({
      ok: true,
      output: { status: 200, body: '{"hello":"world"}', bodyEncoding: 'utf8', truncated: false, redirects: 0, url: `${base}/json` },
    });
    expect(result.output.headers['content-type']).toBe('application/json');
  });

  it('sends a method, headers and a body, and returns binary bodies as base64', async () => {
    const { runtime } = localRuntime();
    const posted = await runtime.execute<any>(
      'builtin.http.request',
      { url: `${base}/echo`, method: 'POST', headers: { 'x-test': 'yes' }, body: 'payload' },
      plan(),
    );
    expect(posted.output.body).toBe('POST yes payload');
    const binary = await runtime.execute<any>('builtin.http.get', { url: `${base}/binary` }, plan());
    expect(binary.output).toMatchObject({ bodyEncoding: 'base64', body: Buffer.from([0, 1, 2, 255]).toString('base64'), bytesRead: 4 });
  });

  it('reports an error status as a failed result that carries the response', async () => {
    const { runtime } = localRuntime();
    const result = await runtime.execute('builtin.http.get', { url: `${base}/missing` }, plan());
    expect(codeOf(result)).toBe('BUILTIN_HTTP_STATUS');
    expect(result.ok ? undefined : result.output).toMatchObject({ status: 404, body: 'no such thing' });
    expect(result.trace).toMatchObject({ success: false, error: { code: 'BUILTIN_HTTP_STATUS' } });
  });

  it('gives up on a server that never answers at the timeout, closing the connection', async () => {
    const { runtime } = localRuntime();
    const result = await runtime.execute('builtin.http.get', { url: `${base}/hang`, timeoutMs: 300 }, plan());
    expect(codeOf(result)).toBe('BUILTIN_HTTP_TIMED_OUT');
    await closed;
  }, 15_000);

  it('aborts the request when the plan is cancelled, closing the connection', async () => {
    const { runtime } = localRuntime();
    const ctx = plan();
    const pending = runtime.execute('builtin.http.get', { url: `${base}/hang` }, ctx).catch((error: unknown) => error);
    await arrived;
    ctx.cancellationToken.cancel('cancelled by user');
    const error = await pending;
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    await closed;
  }, 15_000);

  it('stops reading a huge response at the cap and reports it truncated', async () => {
    const { runtime } = localRuntime({ maxResponseBytes: 100_000 });
    const result = await runtime.execute<any>('builtin.http.get', { url: `${base}/huge` }, plan());
    expect(result.output).toMatchObject({ truncated: true, bytesRead: 100_000, bodyEncoding: 'base64' });
    expect(Buffer.from(result.output.body, 'base64').equals(Buffer.alloc(100_000, 7))).toBe(true);
    await closed;
    // The server could only push what fits in the socket buffers before the client hung up.
    expect(hugeBytesSent).toBeLessThan(64 * 1024 * 1024);
  }, 15_000);

  it('follows redirects, turning a POST into a GET after 303, and stops at maxRedirects', async () => {
    const { runtime } = localRuntime({ maxRedirects: 3 });
    const redirected = await runtime.execute<any>('builtin.http.get', { url: `${base}/redirect` }, plan());
    expect(redirected.output).toMatchObject({ status: 200, redirects: 1, url: `${base}/json` });
    const seeOther = await runtime.execute<any>('builtin.http.request', { url: `${base}/see-other`, method: 'POST', body: 'x' }, plan());
    expect(seeOther.output.body).toBe('GET - ');
    const loop = await runtime.execute('builtin.http.get', { url: `${base}/loop` }, plan());
    expect(codeOf(loop)).toBe('BUILTIN_HTTP_FAILED');
    expect(loop.ok ? '' : loop.error.message).toMatch(/stopped after 3 redirects/);
  });

  it('enforces the host allowlist, also on redirects, and allows only http and https', async () => {
    const { runtime } = localRuntime({ allowHosts: [`127.0.0.1:${port}`] });
    expect(codeOf(await runtime.execute('builtin.http.get', { url: `${base}/json` }, plan()))).toBe('ok');
    const direct = await runtime.execute('builtin.http.get', { url: `http://localhost:${port}/json` }, plan());
    expect(codeOf(direct)).toBe('BUILTIN_HTTP_URL_NOT_ALLOWED');
    expect(direct.ok ? '' : direct.error.message).toMatch(/http\.allowHosts/);
    expect(codeOf(await runtime.execute('builtin.http.get', { url: `${base}/to-localhost` }, plan()))).toBe('BUILTIN_HTTP_URL_NOT_ALLOWED');
    const otherPort = localRuntime({ allowHosts: ['127.0.0.1:1'] }).runtime;
    expect(codeOf(await otherPort.execute('builtin.http.get', { url: `${base}/json` }, plan()))).toBe('BUILTIN_HTTP_URL_NOT_ALLOWED');
    const tool = createBuiltinAdapter({ http: { allowPrivateNetworks: true } }).get('builtin.http.get');
    for (const url of ['file:///etc/passwd', 'ftp://127.0.0.1/']) {
      expect(codeOf(await tool.execute({ url }, plan()))).toBe('BUILTIN_HTTP_URL_NOT_ALLOWED');
    }
  });

  it('reports a connection failure', async () => {
    const spare = createServer();
    spare.listen(0, '127.0.0.1');
    await once(spare, 'listening');
    const freePort = (spare.address() as AddressInfo).port;
    await new Promise((resolve) => spare.close(resolve));
    const { runtime } = localRuntime();
    const result = await runtime.execute('builtin.http.get', { url: `http://127.0.0.1:${freePort}/` }, plan());
    expect(codeOf(result)).toBe('BUILTIN_HTTP_FAILED');
    expect(result.ok ? '' : result.error.message).toMatch(/ECONNREFUSED/);
  });

  it('runs builtin.http.get in a read-only plan but refuses builtin.http.request there', async () => {
    const { runtime } = localRuntime();
    const ctx = plan(true);
    expect(codeOf(await runtime.execute('builtin.http.get', { url: `${base}/json` }, ctx))).toBe('ok');
    const refused = await runtime.execute('builtin.http.request', { url: `${base}/json` }, ctx).catch((error: unknown) => error);
    expect(ToolAccessDeniedError.isInstance(refused)).toBe(true);
  });

  it('uses an injected fetch, handing it the dispatcher that checks addresses', async () => {
    const seen: string[] = [];
    const recordingFetch: typeof fetch = (input, init) => {
      seen.push(String(input));
      expect((init as { dispatcher?: unknown }).dispatcher).toBeInstanceOf(Agent);
      return fetch(input, init);
    };
    const { runtime } = localRuntime({ fetch: recordingFetch });
    await runtime.execute('builtin.http.get', { url: `${base}/redirect` }, plan());
    expect(seen).toEqual([`${base}/redirect`, `${base}/json`]);
  });
});

/** A real HTTP server on `host` and a free port that records the requests it gets. */
interface RecordingServer {
  readonly base: string;
  readonly port: number;
  readonly requests: { method: string; url: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

async function startServer(host: string, route: (request: IncomingMessage, response: ServerResponse) => void): Promise<RecordingServer> {
  const requests: RecordingServer['requests'] = [];
  const server = createServer((request, response) => {
    requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
    request.resume();
    request.on('end', () => route(request, response));
  });
  server.listen(0, host);
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://${host}:${port}`,
    port,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const plan = () => createExecutionContext({ planId: 'plan-net' });
const messageOf = (result: { ok: boolean; error?: { message: string } }): string => (result.ok ? '' : (result.error?.message ?? ''));

describe('HTTP tools: credentials across redirects', () => {
  let origin: RecordingServer;
  let other: RecordingServer;

  const credentials = { authorization: 'Bearer origin-token-123', cookie: 'session=abc', 'proxy-authorization': 'Basic cHJveHk6cHc=', 'x-trace': 'kept' };

  beforeEach(async () => {
    other = await startServer('127.0.0.1', (request, response) => {
      if (request.url === '/back') response.writeHead(302, { location: `${origin.base}/record` }).end();
      else response.writeHead(200, { 'content-type': 'text/plain' }).end('other');
    });
    origin = await startServer('127.0.0.1', (request, response) => {
      const path = request.url ?? '';
      if (path === '/to-other') response.writeHead(302, { location: `${other.base}/record` }).end();
      else if (path === '/to-other-and-back') response.writeHead(307, { location: `${other.base}/back` }).end();
      else if (path === '/to-same') response.writeHead(302, { location: '/record' }).end();
      else if (path === '/to-localhost') response.writeHead(302, { location: `http://localhost:${origin.port}/record` }).end();
      else if (path === '/see-other') response.writeHead(303, { location: '/record' }).end();
      else response.writeHead(200, { 'content-type': 'text/plain' }).end('origin');
    });
  });

  afterEach(async () => {
    await Promise.all([origin.close(), other.close()]);
  });

  const runtime = () => strictRuntime({ http: { allowPrivateNetworks: true } }).runtime;

  it('drops Authorization, Cookie and Proxy-Authorization when the port changes, and keeps the other headers', async () => {
    const result = await runtime().execute<any>('builtin.http.get', { url: `${origin.base}/to-other`, headers: credentials }, plan());
    expect(result.output).toMatchObject({ status: 200, body: 'other', redirects: 1, url: `${other.base}/record` });
    expect(origin.requests[0]!.headers).toMatchObject(credentials);
    const received = other.requests[0]!.headers;
    expect(received['x-trace']).toBe('kept');
    expect(received.authorization).toBeUndefined();
    expect(received.cookie).toBeUndefined();
    expect(received['proxy-authorization']).toBeUndefined();
  });

  it('drops them when the host changes on the same port, and does not send them again on the way back', async () => {
    await runtime().execute('builtin.http.get', { url: `${origin.base}/to-localhost`, headers: credentials }, plan());
    expect(origin.requests.map((request) => request.headers.host)).toEqual([`127.0.0.1:${origin.port}`, `localhost:${origin.port}`]);
    expect(origin.requests[1]!.headers.authorization).toBeUndefined();
    expect(origin.requests[1]!.headers.cookie).toBeUndefined();
    origin.requests.length = 0;
    await runtime().execute('builtin.http.get', { url: `${origin.base}/to-other-and-back`, headers: credentials }, plan());
    expect(origin.requests.map((request) => request.url)).toEqual(['/to-other-and-back', '/record']);
    expect(origin.requests[1]!.headers.authorization).toBeUndefined();
    expect(origin.requests[1]!.headers['x-trace']).toBe('kept');
  });

  it('keeps them on a redirect within the origin', async () => {
    await runtime().execute('builtin.http.get', { url: `${origin.base}/to-same`, headers: credentials }, plan());
    expect(origin.requests.map((request) => request.url)).toEqual(['/to-same', '/record']);
    expect(origin.requests[1]!.headers).toMatchObject(credentials);
  });

  it('sends URL userinfo as Basic authorization, never in the URL, and drops it on another origin too', async () => {
    const url = `http://alice:s3cret@127.0.0.1:${origin.port}/to-other`;
    const result = await runtime().execute<any>('builtin.http.get', { url }, plan());
    expect(result.ok).toBe(true);
    expect(origin.requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from('alice:s3cret').toString('base64')}`);
    expect(origin.requests[0]!.url).toBe('/to-other');
    expect(other.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('drops the body headers with the body when a 303 turns a POST into a GET', async () => {
    await runtime().execute(
      'builtin.http.request',
      { url: `${origin.base}/see-other`, method: 'POST', body: '{}', headers: { 'content-type': 'application/json', authorization: 'Bearer t-1' } },
      plan(),
    );
    expect(origin.requests.map((request) => request.method)).toEqual(['POST', 'GET']);
    expect(origin.requests[1]!.headers['content-type']).toBeUndefined();
    expect(origin.requests[1]!.headers.authorization).toBe('Bearer t-1');
  });
});

describe('HTTP tools: private networks', () => {
  let local: RecordingServer;

  beforeEach(async () => {
    local = await startServer('127.0.0.1', (_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('local'));
  });

  afterEach(async () => {
    await local.close();
  });

  it('refuses a loopback server by default with a coded error that says what to set, and never connects', async () => {
    const { runtime } = strictRuntime();
    const result = await runtime.execute('builtin.http.get', { url: `${local.base}/` }, plan());
    expect(codeOf(result)).toBe('BUILTIN_HTTP_ADDRESS_NOT_ALLOWED');
    expect(messageOf(result)).toBe(
      `Tool "builtin.http.get" in plan "plan-net" refused ${local.base}/: 127.0.0.1 is a loopback address (this machine). ` +
        'Set http.allowPrivateNetworks: true, or list the address or its range in http.allowAddresses (e.g. "10.0.0.0/8"), in the adapter settings.',
    );
    expect(result.ok ? undefined : result.error).toMatchObject({ target: `${local.base}/`, toolName: 'builtin.http.get', planId: 'plan-net' });
    expect(local.requests).toHaveLength(0);
  });

  it('refuses a name that resolves to 127.0.0.1 (localhost) by default', async () => {
    const { runtime } = strictRuntime();
    const result = await runtime.execute('builtin.http.get', { url: `http://localhost:${local.port}/` }, plan());
    expect(codeOf(result)).toBe('BUILTIN_HTTP_ADDRESS_NOT_ALLOWED');
    expect(messageOf(result)).toMatch(/"localhost" resolves to 127\.0\.0\.1, a loopback address \(this machine\)\. Set http\.allowPrivateNetworks: true/);
    expect(local.requests).toHaveLength(0);
  });

  it('reaches it with allowPrivateNetworks, or with the address in allowAddresses, and not with another range', async () => {
    for (const http of [{ allowPrivateNetworks: true }, { allowAddresses: ['127.0.0.0/8'] }, { allowAddresses: ['::1', '127.0.0.1'] }]) {
      const { runtime } = strictRuntime({ http });
      expect(await runtime.execute<any>('builtin.http.get', { url: `http://localhost:${local.port}/` }, plan())).toMatchObject({
        ok: true,
        output: { body: 'local' },
      });
    }
    const { runtime } = strictRuntime({ http: { allowAddresses: ['10.0.0.0/8'] } });
    expect(codeOf(await runtime.execute('builtin.http.get', { url: `${local.base}/` }, plan()))).toBe('BUILTIN_HTTP_ADDRESS_NOT_ALLOWED');
    expect(local.requests).toHaveLength(3);
  });

  it('refuses a redirect from an allowed host to 127.0.0.1, by address and by name', async () => {
    const allowed = await startServer('127.0.0.2', (request, response) => {
      const target = request.url === '/by-name' ? `http://localhost:${local.port}/` : `${local.base}/`;
      response.writeHead(302, { location: target }).end();
    });
    try {
      const { runtime } = strictRuntime({ http: { allowAddresses: ['127.0.0.2'] } });
      for (const path of ['/by-address', '/by-name']) {
        const result = await runtime.execute('builtin.http.get', { url: `${allowed.base}${path}` }, plan());
        expect(codeOf(result)).toBe('BUILTIN_HTTP_ADDRESS_NOT_ALLOWED');
        expect(messageOf(result)).toMatch(new RegExp(`\\(a redirect from ${allowed.base}${path}\\): .*127\\.0\\.0\\.1(,| is) a loopback address`));
      }
      expect(allowed.requests).toHaveLength(2);
      expect(local.requests).toHaveLength(0);
    } finally {
      await allowed.close();
    }
  });

  it('refuses metadata services even where private networks are allowed, and every disguise of loopback', async () => {
    const { runtime } = strictRuntime({ http: { allowPrivateNetworks: true } });
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://[fd00:ec2::254]/',
      'http://100.100.100.200/',
    ]) {
      const result = await runtime.execute('builtin.http.get', { url }, plan());
      expect(codeOf(result)).toBe('BUILTIN_HTTP_ADDRESS_NOT_ALLOWED');
      expect(messageOf(result)).toMatch(/a cloud metadata service\. Cloud metadata services are refused even where private networks are allowed/);
    }
    const strict = strictRuntime().runtime;
    for (const host of [
      '[::ffff:127.0.0.1]',
      '2130706433',
      '0x7f.1',
      '127.1',
      '0.0.0.0',
      '[::1]',
      '[::]',
      '10.0.0.1',
      '192.168.1.1',
      '169.254.1.1',
      '[fe80::1]',
      '[64:ff9b::7f00:1]',
    ]) {
      const result = await strict.execute('builtin.http.get', { url: `http://${host}:${local.port}/`, timeoutMs: 5_000 }, plan());
      expect([host, codeOf(result)]).toEqual([host, 'BUILTIN_HTTP_ADDRESS_NOT_ALLOWED']);
    }
    expect(local.requests).toHaveLength(0);
  });

  it('resolves a name once per connection and connects to the address it checked', async () => {
    const asked: string[] = [];
    let answers = 0;
    // First answer loopback (allowed by the settings), later answers a public address: the connection must use the first.
    const lookup = async (hostname: string) => {
      asked.push(hostname);
      return answers++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '93.184.215.14', family: 4 }];
    };
    const { runtime } = strictRuntime({ http: { allowAddresses: ['127.0.0.1'], lookup } });
    const result = await runtime.execute<any>('builtin.http.get', { url: `http://pinned.example:${local.port}/` }, plan());
    expect(result).toMatchObject({ ok: true, output: { body: 'local' } });
    expect(asked).toEqual(['pinned.example']);
    expect(local.requests[0]!.headers.host).toBe(`pinned.example:${local.port}`);
  });

  it('refuses a name when any of its addresses is refused', async () => {
    const lookup = async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
    const { runtime } = strictRuntime({ http: { lookup } });
    const result = await runtime.execute('builtin.http.get', { url: `http://split.example:${local.port}/` }, plan());
    expect(codeOf(result)).toBe('BUILTIN_HTTP_ADDRESS_NOT_ALLOWED');
    expect(messageOf(result)).toMatch(/"split\.example" resolves to 127\.0\.0\.1, a loopback address/);
    expect(local.requests).toHaveLength(0);
  });

  it('checks its settings', () => {
    expect(() => createBuiltinAdapter({ http: { allowAddresses: ['10.0.0.0/33', 'not-an-ip', '::1'] } })).toThrow(
      /http\.allowAddresses: cannot read "10\.0\.0\.0\/33", "not-an-ip"/,
    );
    expect(() => createBuiltinAdapter({ http: { allowPrivateNetworks: 'yes' as never } })).toThrow(/http\.allowPrivateNetworks: expected true or false/);
    expect(() => createBuiltinAdapter({ http: { lookup: 'dns' as never } })).toThrow(/http\.lookup: expected a function/);
  });
});

describe('HTTP tools: secrets stay out of traces and spans', () => {
  let server: RecordingServer;
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider;

  beforeEach(async () => {
    server = await startServer('127.0.0.1', (_request, response) => response.writeHead(404, { 'content-type': 'text/plain' }).end('no such thing'));
    exporter = new InMemorySpanExporter();
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
  });

  afterEach(async () => {
    trace.disable();
    await provider.shutdown();
    await server.close();
  });

  it('redacts the URL password and the api_key of a failing call in the trace and the span; the caller gets the whole message', async () => {
    const { runtime } = strictRuntime({ http: { allowPrivateNetworks: true } });
    const ctx = plan();
    const url = `http://alice:hunter2@127.0.0.1:${server.port}/v1/items?api_key=AK-9f8e7d&page=2`;
    const result = await runtime.execute('builtin.http.get', { url }, ctx);
    expect(codeOf(result)).toBe('BUILTIN_HTTP_STATUS');
    expect(messageOf(result)).toContain('alice:hunter2@');
    expect(messageOf(result)).toContain('api_key=AK-9f8e7d');
    expect(server.requests).toHaveLength(1);

    const closed = await startServer('127.0.0.1', () => undefined);
    await closed.close();
    const unreachable = await runtime.execute('builtin.http.get', { url: `http://bob:pa55@127.0.0.1:${closed.port}/?token=tk-1&access_token=at-2` }, ctx);
    expect(codeOf(unreachable)).toBe('BUILTIN_HTTP_FAILED');

    const traced = ctx.traces.map((entry) => entry.error!.message);
    expect(traced[0]).toContain(`http://***@127.0.0.1:${server.port}/v1/items?api_key=***&page=2`);
    expect(traced[1]).toContain(`http://***@127.0.0.1:${closed.port}/?token=***&access_token=***`);
    const spans = exporter.getFinishedSpans().map((span) => span.status.message ?? '');
    expect(spans).toHaveLength(2);
    for (const text of [...traced, ...spans, JSON.stringify(ctx.traces)]) {
      expect(text).not.toMatch(/hunter2|AK-9f8e7d|pa55|tk-1|at-2/);
    }
    expect(spans[0]).toContain('api_key=***');
  });
});
