import { ToolCancelledError } from '@ca/tool-context';
import { InMemoryToolSource, RecordingLogger, TestTool } from '../testing/index';
import { ToolLimitExceededError, ToolRuntime, type ToolRuntimeOptions } from '../index';

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; trace?: { attempts?: number } }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the promise to reject');
}

/** A tool that takes a while and records how many of its calls ran at once. */
function counted(name: string, holdMs = 5) {
  const seen = { running: 0, most: 0, calls: 0, started: [] as number[] };
  const tool = new TestTool({
    name,
    execute: async () => {
      seen.calls++;
      seen.started.push(performance.now());
      seen.running++;
      seen.most = Math.max(seen.most, seen.running);
      await new Promise((resolve) => setTimeout(resolve, holdMs));
      seen.running--;
      return 'done';
    },
  });
  return { tool, seen };
}

function setup(tools: TestTool[], options: ToolRuntimeOptions) {
  return new ToolRuntime({ sources: [new InMemoryToolSource(tools)], logger: new RecordingLogger(), options });
}

describe('limits per tool', () => {
  it('50 concurrent calls with a plan limit of 3 never run more than 3 at once, and all complete', async () => {
    const { tool, seen } = counted('api.call');
    const runtime = setup([tool], { calls: [{ tools: 'api.*', perPlan: { maxConcurrent: 3 } }] });
    const ctx = runtime.createPlan();
    const results = await Promise.all(Array.from({ length: 50 }, (_, index) => runtime.execute('api.call', { index }, ctx)));
    expect(results.every((result) => result.ok)).toBe(true);
    expect(seen.calls).toBe(50);
    expect(seen.most).toBe(3);
  });

  it('a runtime limit holds across plans; a plan limit is per plan', async () => {
    const shared = counted('shared.call');
    const perPlan = counted('plan.call');
    const runtime = setup([shared.tool, perPlan.tool], {
      calls: [
        { tools: 'shared.*', perRuntime: { maxConcurrent: 2 } },
        { tools: 'plan.*', perPlan: { maxConcurrent: 1 } },
      ],
    });
    const plans = [runtime.createPlan(), runtime.createPlan(), runtime.createPlan()];
    await Promise.all(
      plans.flatMap((ctx) => Array.from({ length: 6 }, () => [runtime.execute('shared.call', {}, ctx), runtime.execute('plan.call', {}, ctx)]).flat()),
    );
    expect(shared.seen.most).toBe(2);
    // One at a time in each of three plans.
    expect(perPlan.seen.most).toBe(3);
  });

  it("over the limit with onLimit 'fail': ToolLimitExceededError at once, the tool not called", async () => {
    const { tool, seen } = counted('api.call', 30);
    const runtime = setup([tool], { calls: [{ tools: 'api.call', perPlan: { maxConcurrent: 1 }, onLimit: 'fail' }] });
    const ctx = runtime.createPlan({ planId: 'busy' });
    const first = runtime.execute('api.call', {}, ctx);
    const error = await rejection(runtime.execute('api.call', {}, ctx));
    expect(ToolLimitExceededError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'TOOL_LIMIT_EXCEEDED', limit: 'concurrency', scope: 'plan' });
    expect(error.message).toBe(
      "Tool 'api.call' in plan 'busy' was not called: it is at the limit of 1 call(s) at once for plan 'busy', and the settings say not to wait (onLimit: fail). Try again later, or raise the limit in the runtime's calls settings.",
    );
    expect((await first).ok).toBe(true);
    expect(seen.calls).toBe(1);
  });

  it('a waiting call gives up after maxWaitMs, and cancelling the plan ends the wait', async () => {
    const { tool, seen } = counted('api.call', 200);
    const runtime = setup([tool], { calls: [{ tools: 'api.call', perRuntime: { maxConcurrent: 1 }, maxWaitMs: 20 }] });
    const ctx = runtime.createPlan();
    const first = runtime.execute('api.call', {}, ctx);
    const waited = await rejection(runtime.execute('api.call', {}, ctx));
    expect(waited).toMatchObject({ code: 'TOOL_LIMIT_EXCEEDED', scope: 'runtime' });
    expect(waited.message).toMatch(/no turn came within \d+ ms \(maxWaitMs\)/);

    const other = runtime.createPlan();
    const cancelled = runtime.execute('api.call', {}, other).catch((thrown: unknown) => thrown);
    other.cancellationToken.cancel('not needed');
    expect(ToolCancelledError.isInstance(await cancelled)).toBe(true);
    await first;
    expect(seen.calls).toBe(1);
  });

  it('a rate limit spaces the calls: 2 per 100 ms', async () => {
    const { tool, seen } = counted('rated.call', 0);
    const runtime = setup([tool], { calls: [{ tools: 'rated.*', perPlan: { rate: { calls: 2, perMs: 100 } } }] });
    const ctx = runtime.createPlan();
    await Promise.all(Array.from({ length: 6 }, () => runtime.execute('rated.call', {}, ctx)));
    expect(seen.calls).toBe(6);
    // Two right away, then one every 50 ms: within any 100 ms window at most 3 starts (2 + one refilled).
    const started = seen.started;
    for (let index = 0; index + 3 < started.length; index++) {
      expect(started[index + 3]! - started[index]!).toBeGreaterThanOrEqual(98);
    }
  });

  it('a turn is given back when the call is refused before the tool runs, so the next call is not stuck', async () => {
    const { tool } = counted('api.call');
    const runtime = setup([tool], { calls: [{ tools: 'api.call', perRuntime: { maxConcurrent: 1 } }] });
    const cancelled = runtime.createPlan();
    cancelled.cancellationToken.cancel('early');
    await runtime.execute('api.call', {}, cancelled).catch(() => undefined);
    const result = await runtime.execute('api.call', {}, runtime.createPlan());
    expect(result.ok).toBe(true);
  });
});
