import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createExecutionContext, ToolCancelledError } from '@ca/tool-context';
import { ToolAccessDeniedError } from '@ca/tool-lifecycle';
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

  it('GETs JSON as text with status and headers', async () => {
    const { runtime } = strictRuntime();
    const result = await runtime.execute<any>('builtin.http.get', { url: `${base}/json` }, plan());
    expect(result).toMatchObject({
      ok: true,
      output: { status: 200, body: '{"hello":"world"}', bodyEncoding: 'utf8', truncated: false, redirects: 0, url: `${base}/json` },
    });
    expect(result.output.headers['content-type']).toBe('application/json');
  });

  it('sends a method, headers and a body, and returns binary bodies as base64', async () => {
    const { runtime } = strictRuntime();
    const posted = await runtime.execute<any>('builtin.http.request', { url: `${base}/echo`, method: 'POST', headers: { 'x-test': 'yes' }, body: 'payload' }, plan());
    expect(posted.output.body).toBe('POST yes payload');
    const binary = await runtime.execute<any>('builtin.http.get', { url: `${base}/binary` }, plan());
    expect(binary.output).toMatchObject({ bodyEncoding: 'base64', body: Buffer.from([0, 1, 2, 255]).toString('base64'), bytesRead: 4 });
  });

  it('reports an error status as a failed result that carries the response', async () => {
    const { runtime } = strictRuntime();
    const result = await runtime.execute('builtin.http.get', { url: `${base}/missing` }, plan());
    expect(codeOf(result)).toBe('BUILTIN_HTTP_STATUS');
    expect(result.ok ? undefined : result.output).toMatchObject({ status: 404, body: 'no such thing' });
    expect(result.trace).toMatchObject({ success: false, error: { code: 'BUILTIN_HTTP_STATUS' } });
  });

  it('gives up on a server that never answers at the timeout, closing the connection', async () => {
    const { runtime } = strictRuntime();
    const result = await runtime.execute('builtin.http.get', { url: `${base}/hang`, timeoutMs: 300 }, plan());
    expect(codeOf(result)).toBe('BUILTIN_HTTP_TIMED_OUT');
    await closed;
  }, 15_000);

  it('aborts the request when the plan is cancelled, closing the connection', async () => {
    const { runtime } = strictRuntime();
    const ctx = plan();
    const pending = runtime.execute('builtin.http.get', { url: `${base}/hang` }, ctx).catch((error: unknown) => error);
    await arrived;
    ctx.cancellationToken.cancel('cancelled by user');
    const error = await pending;
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    await closed;
  }, 15_000);

  it('stops reading a huge response at the cap and reports it truncated', async () => {
    const { runtime } = strictRuntime({ http: { maxResponseBytes: 100_000 } });
    const result = await runtime.execute<any>('builtin.http.get', { url: `${base}/huge` }, plan());
    expect(result.output).toMatchObject({ truncated: true, bytesRead: 100_000, bodyEncoding: 'base64' });
    expect(Buffer.from(result.output.body, 'base64').equals(Buffer.alloc(100_000, 7))).toBe(true);
    await closed;
    // The server could only push what fits in the socket buffers before the client hung up.
    expect(hugeBytesSent).toBeLessThan(64 * 1024 * 1024);
  }, 15_000);

  it('follows redirects, turning a POST into a GET after 303, and stops at maxRedirects', async () => {
    const { runtime } = strictRuntime({ http: { maxRedirects: 3 } });
    const redirected = await runtime.execute<any>('builtin.http.get', { url: `${base}/redirect` }, plan());
    expect(redirected.output).toMatchObject({ status: 200, redirects: 1, url: `${base}/json` });
    const seeOther = await runtime.execute<any>('builtin.http.request', { url: `${base}/see-other`, method: 'POST', body: 'x' }, plan());
    expect(seeOther.output.body).toBe('GET - ');
    const loop = await runtime.execute('builtin.http.get', { url: `${base}/loop` }, plan());
    expect(codeOf(loop)).toBe('BUILTIN_HTTP_FAILED');
    expect(loop.ok ? '' : loop.error.message).toMatch(/stopped after 3 redirects/);
  });

  it('enforces the host allowlist, also on redirects, and allows only http and https', async () => {
    const { runtime } = strictRuntime({ http: { allowHosts: [`127.0.0.1:${port}`] } });
    expect(codeOf(await runtime.execute('builtin.http.get', { url: `${base}/json` }, plan()))).toBe('ok');
    const direct = await runtime.execute('builtin.http.get', { url: `http://localhost:${port}/json` }, plan());
    expect(codeOf(direct)).toBe('BUILTIN_HTTP_URL_NOT_ALLOWED');
    expect(direct.ok ? '' : direct.error.message).toMatch(/http\.allowHosts/);
    expect(codeOf(await runtime.execute('builtin.http.get', { url: `${base}/to-localhost` }, plan()))).toBe('BUILTIN_HTTP_URL_NOT_ALLOWED');
    const otherPort = strictRuntime({ http: { allowHosts: ['127.0.0.1:1'] } }).runtime;
    expect(codeOf(await otherPort.execute('builtin.http.get', { url: `${base}/json` }, plan()))).toBe('BUILTIN_HTTP_URL_NOT_ALLOWED');
    const tool = createBuiltinAdapter().get('builtin.http.get');
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
    const { runtime } = strictRuntime();
    const result = await runtime.execute('builtin.http.get', { url: `http://127.0.0.1:${freePort}/` }, plan());
    expect(codeOf(result)).toBe('BUILTIN_HTTP_FAILED');
    expect(result.ok ? '' : result.error.message).toMatch(/ECONNREFUSED/);
  });

  it('runs builtin.http.get in a read-only plan but refuses builtin.http.request there', async () => {
    const { runtime } = strictRuntime();
    const ctx = plan(true);
    expect(codeOf(await runtime.execute('builtin.http.get', { url: `${base}/json` }, ctx))).toBe('ok');
    const refused = await runtime.execute('builtin.http.request', { url: `${base}/json` }, ctx).catch((error: unknown) => error);
    expect(ToolAccessDeniedError.isInstance(refused)).toBe(true);
  });

  it('uses an injected fetch', async () => {
    const seen: string[] = [];
    const recordingFetch: typeof fetch = (input, init) => {
      seen.push(String(input));
      return fetch(input, init);
    };
    const { runtime } = strictRuntime({ http: { fetch: recordingFetch } });
    await runtime.execute('builtin.http.get', { url: `${base}/redirect` }, plan());
    expect(seen).toEqual([`${base}/redirect`, `${base}/json`]);
  });
});
