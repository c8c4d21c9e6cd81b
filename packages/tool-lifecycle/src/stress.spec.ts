import { getEventListeners } from 'node:events';
import { ToolCancelledError } from '@ca/tool-context';
import { InMemoryToolSource, RecordingLogger, TestTool } from './testing/index';
import { ToolRuntime, ToolRuntimeError } from './index';

// A deterministic pseudo-random generator, so a failure can be replayed.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('ToolRuntime under load', () => {
  it('1,000 concurrent plans × 20 executions over 10 tools keep the lifecycle invariants', async () => {
    const next = random(20261202);
    const delay = () => new Promise((resolve) => setTimeout(resolve, Math.floor(next() * 3)));
    const activations = new Map<string, number>();
    const deactivations = new Map<string, number>();
    const key = (planId: string, tool: string) => `${planId}|${tool}`;
    const tools = Array.from(
      { length: 10 },
      (_, index) =>
        new TestTool({
          name: `tool-${index}`,
          inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
          activate: async (ctx) => {
            await delay();
            if (next() < 0.05) throw new Error('random activation failure');
            activations.set(key(ctx.planId, `tool-${index}`), (activations.get(key(ctx.planId, `tool-${index}`)) ?? 0) + 1);
          },
          deactivate: async (ctx) => {
            await delay();
            deactivations.set(key(ctx.planId, `tool-${index}`), (deactivations.get(key(ctx.planId, `tool-${index}`)) ?? 0) + 1);
          },
          execute: async (input: { n: number }, ctx) => {
            await delay();
            ctx.cancellationToken.check();
            if (next() < 0.05) throw new Error('random execution failure');
            return { n: input.n };
          },
        }),
    );
    const logger = new RecordingLogger();
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource(tools)], logger, options: { endPlanGraceMs: 1_000 } });
    const timersAtStart = process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const outcomes = { ok: 0, failed: 0, cancelled: 0, other: 0 };
    let listenerLeaks = 0;

    await Promise.all(
      Array.from({ length: 1_000 }, async (_, planIndex) => {
        const ctx = runtime.createPlan({ planId: `plan-${planIndex}` });
        const cancelAt = next() < 0.2 ? Math.floor(next() * 20) : -1;
        const runs = Array.from({ length: 20 }, async (_, step) => {
          if (step === cancelAt) ctx.cancellationToken.cancel('random cancellation');
          const tool = `tool-${Math.floor(next() * 10)}`;
          try {
            const result = await runtime.execute(tool, next() < 0.05 ? { n: 'bad' } : { n: step }, ctx);
            if (result.ok) outcomes.ok++;
            else outcomes.failed++;
          } catch (error) {
            if (ToolCancelledError.isInstance(error)) outcomes.cancelled++;
            else if (ToolRuntimeError.isInstance(error)) outcomes.failed++;
            else outcomes.other++;
          }
        });
        await Promise.all(runs);
        const report = await runtime.endPlan(ctx);
        expect(report.abandonedExecutions).toBe(0);
        expect(ctx.traces).toHaveLength(20);
        listenerLeaks += getEventListeners(ctx.cancellationToken.signal, 'abort').length;
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', onUnhandled);

    expect(outcomes.other).toBe(0);
    expect(outcomes.ok + outcomes.failed + outcomes.cancelled).toBe(20_000);
    expect(outcomes.ok).toBeGreaterThan(10_000);
    expect(outcomes.cancelled).toBeGreaterThan(0);
    expect(outcomes.failed).toBeGreaterThan(0);
    for (const [pair, count] of activations) {
      expect([pair, count]).toEqual([pair, 1]);
      expect([pair, deactivations.get(pair)]).toEqual([pair, 1]);
    }
    for (const pair of deactivations.keys()) expect(activations.has(pair)).toBe(true);
    expect(unhandled).toEqual([]);
    expect(listenerLeaks).toBe(0);
    const timers = process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    expect(timers).toBeLessThanOrEqual(timersAtStart);
  }, 60_000);
});
