import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { InMemoryToolSource, RecordingLogger, TestTool } from '../testing/index';
import { ToolRuntime } from '../index';
import { activeTracer } from './telemetry';

describe('OpenTelemetry spans', () => {
  afterEach(() => trace.disable());

  it('costs nothing when no tracer provider is registered', () => {
    trace.disable();
    expect(activeTracer()).toBeUndefined();
  });

  it('emits one execute_tool span per execution with the GenAI attributes', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
    const ok = new TestTool({ name: 'mcp.server.echo', source: 'mcp' });
    const failing = new TestTool({ name: 'custom.boom', execute: () => Promise.reject(new Error('boom')) });
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([ok, failing])], logger: new RecordingLogger() });
    const ctx = runtime.createPlan({ planId: 'otel-plan' });
    const result = await runtime.execute('mcp.server.echo', { a: 1 }, ctx);
    await expect(runtime.execute('custom.boom', {}, ctx)).rejects.toThrow('boom');
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual(['execute_tool mcp.server.echo', 'execute_tool custom.boom']);
    expect(spans[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'mcp.server.echo',
      'gen_ai.tool.call.id': result.executionId,
      'gen_ai.tool.type': 'extension',
    });
    expect(spans[0]!.attributes['error.type']).toBeUndefined();
    expect(spans[1]!.attributes).toMatchObject({ 'gen_ai.tool.type': 'function', 'error.type': 'TOOL_EXECUTION_FAILED' });
    expect(spans[1]!.status.code).toBe(2);
    await runtime.endPlan(ctx);
    await provider.shutdown();
  });

  it('redacts and caps the status message of a failed span; the caller keeps the whole error', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
    const leaky = new TestTool({
      name: 'custom.leaky',
      execute: () => Promise.reject(new Error('GET https://bob:hunter2@api.example.com/v1?api_key=k-123 failed')),
    });
    const huge = new TestTool({ name: 'custom.huge', execute: () => Promise.reject(new Error('h'.repeat(8 * 1024 * 1024))) });
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([leaky, huge])], logger: new RecordingLogger() });
    const ctx = runtime.createPlan({ planId: 'otel-secrets' });
    const leaked = (await runtime.execute('custom.leaky', {}, ctx).catch((error: unknown) => error)) as Error;
    const big = (await runtime.execute('custom.huge', {}, ctx).catch((error: unknown) => error)) as Error;
    const [leakySpan, hugeSpan] = exporter.getFinishedSpans();
    expect(leakySpan!.status.message).toContain('https://***@api.example.com/v1?api_key=***');
    expect(leakySpan!.status.message).not.toMatch(/hunter2|k-123/);
    expect(ctx.traces[0]!.error!.message).not.toMatch(/hunter2|k-123/);
    expect((leaked.cause as Error).message).toContain('bob:hunter2@');
    expect(hugeSpan!.status.message!.length).toBeLessThan(5000);
    expect(hugeSpan!.status.message).toMatch(/… \[truncated, \d+ characters in all\]$/);
    expect((big.cause as Error).message).toHaveLength(8 * 1024 * 1024);
    await runtime.endPlan(ctx);
    await provider.shutdown();
  });
});
