import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { fixtures, removeTemporaryFolders, temporaryFolder } from './cli.test-helper';
import { resolveOtlpEndpoint } from './otel-export';

// The built `agents` binary sends its spans over OTLP/HTTP (the exporter's
// JSON encoding) to a collector of the test's own, which decodes them.
const bin = path.resolve(__dirname, '..', 'dist', 'bin.js');

jest.setTimeout(120_000);
afterEach(() => removeTemporaryFolders());

interface OtlpAttribute {
  readonly key: string;
  readonly value: { readonly stringValue?: string; readonly intValue?: string | number; readonly boolValue?: boolean };
}
interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly attributes: readonly OtlpAttribute[];
  readonly status?: { readonly code?: number; readonly message?: string };
}
interface DecodedSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly scope: string;
  readonly service: string | undefined;
  readonly attributes: Record<string, string | number | boolean | undefined>;
  readonly statusCode: number;
}

/** A collector: accepts OTLP/HTTP JSON on /v1/traces and keeps every span it decodes. */
async function startCollector(): Promise<{
  url: string;
  spans: DecodedSpan[];
  requests: { path: string; contentType: string | undefined; authorization: string | undefined }[];
  close: () => Promise<void>;
}> {
  const spans: DecodedSpan[] = [];
  const requests: { path: string; contentType: string | undefined; authorization: string | undefined }[] = [];
  const value = (attribute: OtlpAttribute) =>
    attribute.value.stringValue ?? (attribute.value.intValue === undefined ? attribute.value.boolValue : Number(attribute.value.intValue));
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      requests.push({ path: request.url ?? '', contentType: request.headers['content-type'], authorization: request.headers['authorization'] });
      const payload = JSON.parse(body) as {
        resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[];
      };
      for (const resourceSpans of payload.resourceSpans) {
        const service = resourceSpans.resource.attributes.find((attribute) => attribute.key === 'service.name')?.value.stringValue;
        for (const scopeSpans of resourceSpans.scopeSpans) {
          for (const span of scopeSpans.spans) {
            spans.push({
              name: span.name,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              scope: scopeSpans.scope.name,
              service,
              attributes: Object.fromEntries(span.attributes.map((attribute) => [attribute.key, value(attribute)])),
              statusCode: span.status?.code ?? 0,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Runs the command without blocking this process: the collector answers from its event loop. */
function agents(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: fixtures,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

describe('spans to an OTLP/HTTP collector', () => {
  it('--otel-endpoint: the tool span, child of the command span, with the GenAI attributes', async () => {
    const collector = await startCollector();
    try {
      const result = await agents(['--otel-endpoint', collector.url, 'tools', 'run', 'test.echo', '--input', '{"text":"hi"}', '--plan-id', 'traced'], {
        TEST_WORKSPACE: temporaryFolder(),
      });
      expect([result.status, result.stderr]).toEqual([0, '']);
      expect(collector.requests.map((request) => [request.path, request.contentType])).toEqual([['/v1/traces', 'application/json']]);
      const tool = collector.spans.find((span) => span.name === 'execute_tool test.echo');
      const command = collector.spans.find((span) => span.name === 'agents tools run');
      expect(tool).toEqual(
        expect.objectContaining({
          scope: '@ca/tool-lifecycle',
          service: 'agents',
          statusCode: 0,
          attributes: expect.objectContaining({
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': 'test.echo',
            'gen_ai.tool.type': 'function',
            'ca.plan.id': 'traced',
            'gen_ai.tool.call.id': expect.stringMatching(/\S/),
          }),
        }),
      );
      expect(command).toEqual(
        expect.objectContaining({
          scope: '@ca/cli',
          attributes: expect.objectContaining({ 'gen_ai.tool.name': 'test.echo', 'ca.plan.id': 'traced', 'ca.exit_code': 0 }),
        }),
      );
      expect(tool!.traceId).toBe(command!.traceId);
      expect(tool!.parentSpanId).toBe(command!.spanId);
      expect(command!.parentSpanId).toBeUndefined();
    } finally {
      await collector.close();
    }
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT: one span per step of a plan, a refused step marked with its error type, headers sent', async () => {
    const collector = await startCollector();
    const workspace = temporaryFolder();
    try {
      const result = await agents(['--state-dir', temporaryFolder('ca-cli-state-'), 'plan', 'run', 'plan.yaml'], {
        TEST_WORKSPACE: workspace,
        OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.url}/`,
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20collector-token',
        OTEL_SERVICE_NAME: 'nightly-agents',
      });
      expect(result.status).toBe(0);
      const names = collector.spans.map((span) => span.name).sort();
      expect(names).toEqual(['agents plan run', 'execute_tool builtin.fs.read', 'execute_tool builtin.fs.write', 'execute_tool test.echo']);
      const root = collector.spans.find((span) => span.name === 'agents plan run')!;
      expect(root.attributes).toEqual(
        expect.objectContaining({ 'ca.plan.id': 'cli-test-plan', 'ca.plan.file': path.join(fixtures, 'plan.yaml'), 'ca.exit_code': 0 }),
      );
      for (const span of collector.spans.filter((entry) => entry !== root)) {
        expect([span.name, span.traceId, span.parentSpanId, span.service, span.attributes['gen_ai.tool.type']]).toEqual([
          span.name,
          root.traceId,
          root.spanId,
          'nightly-agents',
          'function',
        ]);
      }
      expect(collector.requests.every((request) => request.path === '/v1/traces' && request.authorization === 'Bearer collector-token')).toBe(true);

      collector.spans.splice(0);
      const refused = await agents(
        [
          '--otel-endpoint',
          collector.url,
          'tools',
          'run',
          'builtin.fs.write',
          '--read-only',
          '--resource',
          `work=${workspace}:write`,
          '--input',
          '{"resource":"work","path":"x","content":"y"}',
        ],
        {
          TEST_WORKSPACE: workspace,
        },
      );
      expect(refused.status).toBe(3);
      const failed = collector.spans.find((span) => span.name === 'execute_tool builtin.fs.write');
      expect(failed).toEqual(expect.objectContaining({ statusCode: 2, attributes: expect.objectContaining({ 'error.type': 'TOOL_ACCESS_DENIED' }) }));
    } finally {
      await collector.close();
    }
  });

  it('a collector that cannot be reached is a warning, said once, not a failure of the command', async () => {
    const result = await agents(['--otel-endpoint', 'http://127.0.0.1:1', 'tools', 'run', 'test.echo', '--input', '{"text":"hi"}'], {
      TEST_WORKSPACE: temporaryFolder(),
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('"text": "hi"');
    expect(result.stderr).toMatch(
      /^warning \[OTEL_EXPORT_FAILED\]: \d+ span\(s\) were dropped: they could not be sent to http:\/\/127\.0\.0\.1:1\/v1\/traces within 1500 ms \(.*ECONNREFUSED.*\)\. .*OTEL_EXPORTER_OTLP_TIMEOUT/m,
    );
    expect(result.stderr.match(/OTEL_EXPORT_FAILED/g)).toHaveLength(1);
  });

  it("waits for a collector that never answers at most OTEL_EXPORTER_OTLP_TIMEOUT at exit, not the exporter's retries", async () => {
    // Accepts connections and never answers: without the bound, each attempt waits out the SDK's 10 s and retries.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const port = (silent.address() as { port: number }).port;
    try {
      const started = performance.now();
      const result = await agents(['--otel-endpoint', `http://127.0.0.1:${port}`, 'tools', 'run', 'test.echo', '--input', '{"text":"hi"}'], {
        TEST_WORKSPACE: temporaryFolder(),
        OTEL_EXPORTER_OTLP_TIMEOUT: '300',
      });
      const elapsedMs = performance.now() - started;
      expect(result.status).toBe(0);
      expect(result.stderr).toMatch(
        /^warning \[OTEL_EXPORT_FAILED\]: .*were dropped: they could not be sent to http:\/\/127\.0\.0\.1:\d+\/v1\/traces within 300 ms/m,
      );
      expect(result.stderr.match(/OTEL_EXPORT_FAILED/g)).toHaveLength(1);
      // Far below one attempt of the SDK's own (10 s), whatever the machine's load adds to the start of node.
      expect(elapsedMs).toBeLessThan(9_000);
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
    const invalid = await agents(['--otel-endpoint', 'http://127.0.0.1:1', 'tools', 'run', 'test.echo', '--input', '{"text":"hi"}'], {
      TEST_WORKSPACE: temporaryFolder(),
      OTEL_EXPORTER_OTLP_TIMEOUT: 'soon',
    });
    expect(invalid.status).toBe(2);
    expect(invalid.stderr).toBe(
      "CLI_USAGE: OTEL_EXPORTER_OTLP_TIMEOUT 'soon' is not a number of milliseconds from 1 to 600000 (how long spans may take to send).\n",
    );
  });

  it('refuses an endpoint that is not an http(s) URL', async () => {
    const result = await agents(['--otel-endpoint', 'grpc://collector:4317', 'tools', 'run', 'test.echo', '--input', '{"text":"hi"}'], {
      TEST_WORKSPACE: temporaryFolder(),
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toBe('CLI_USAGE: --otel-endpoint must be an http:// or https:// URL (OTLP over HTTP); got grpc://.\n');
  });

  it('resolves the endpoint as the OpenTelemetry variables define it', () => {
    expect(resolveOtlpEndpoint(undefined, {})).toBeUndefined();
    expect(resolveOtlpEndpoint('http://c:4318', {})?.href).toBe('http://c:4318/v1/traces');
    expect(resolveOtlpEndpoint('http://c:4318/otlp/', {})?.href).toBe('http://c:4318/otlp/v1/traces');
    expect(resolveOtlpEndpoint('http://c:4318/v1/traces', {})?.href).toBe('http://c:4318/v1/traces');
    expect(resolveOtlpEndpoint(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c' })?.href).toBe('https://c/v1/traces');
    expect(resolveOtlpEndpoint(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://t/custom' })?.href).toBe(
      'https://t/custom',
    );
    expect(resolveOtlpEndpoint(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(resolveOtlpEndpoint(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(resolveOtlpEndpoint('http://c', { OTEL_SDK_DISABLED: 'true' })?.href).toBe('http://c/v1/traces');
  });
});
