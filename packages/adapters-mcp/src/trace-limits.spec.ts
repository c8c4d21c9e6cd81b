import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { createMcpAdapter } from './mcp-adapter';
import { countingSpawn, fixtureServer } from './mcp-fixtures.test-helper';

jest.setTimeout(60_000);

describe('an 8 MiB error message from an MCP server', () => {
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider;
  let runtime: ToolRuntime | undefined;
  const spawns = countingSpawn();

  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
  });

  afterEach(async () => {
    await runtime?.dispose();
    trace.disable();
    await provider.shutdown();
    for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(false);
  });

  it('reaches the caller whole, while the trace and the span keep 4 KiB and the full length', async () => {
    const logger = new RecordingLogger();
    const source = createMcpAdapter({ servers: { mcpServers: { fixture: fixtureServer({}, { callTimeoutMs: 30_000 }) } }, spawn: spawns.spawn, logger });
    runtime = new ToolRuntime({ sources: [source], logger });
    const ctx = runtime.createPlan({ planId: 'plan-huge' });
    const first = await runtime.execute('mcp.fixture.huge-error', {}, ctx);
    const second = await runtime.execute('mcp.fixture.huge-error', {}, ctx);
    for (const result of [first, second]) {
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error).toMatchObject({ code: 'MCP_REQUEST_FAILED', toolName: 'mcp.fixture.huge-error', planId: 'plan-huge' });
      expect(result.error.message.length).toBeGreaterThan(8 * 1024 * 1024);
      expect(result.error.message).toContain(`huge failure ${'x'.repeat(1000)}`);
    }
    const fullLength = first.ok ? 0 : first.error.message.length;
    expect(ctx.traces).toHaveLength(2);
    for (const entry of ctx.traces) {
      expect(entry.error!.code).toBe('MCP_REQUEST_FAILED');
      expect(entry.error!.message).toMatch(
        /^Tool 'mcp\.fixture\.huge-error' \(MCP tool 'huge-error' of server 'fixture'\) in plan 'plan-huge' was refused by the server/,
      );
      expect(entry.error!.message.endsWith(`… [truncated, ${fullLength} characters in all]`)).toBe(true);
      expect(entry.error!.message.length).toBeLessThanOrEqual(4096 + 60);
    }
    expect(JSON.stringify([...ctx.traces]).length).toBeLessThan(16 * 1024);
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(2);
    for (const span of spans) {
      expect(span.attributes['error.type']).toBe('MCP_REQUEST_FAILED');
      expect(span.status.message!.length).toBeLessThanOrEqual(4096 + 60);
      expect(span.status.message!.endsWith(`characters in all]`)).toBe(true);
    }
    await runtime.endPlan(ctx);
  });
});
