import { createExecutionContext } from '@ca/tool-context';
import { RecordingLogger, TestTool } from '../testing/index';
import { ToolActivationError, ToolDeactivationError, ToolLifecycleCache, ToolPlanEndedError } from '../index';

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('ToolLifecycleCache', () => {
  it('activates at most once per (plan, tool) with single flight', async () => {
    const gate = deferred();
    const tool = new TestTool({ name: 'slow-start', activate: () => gate.promise });
    const cache = new ToolLifecycleCache(new RecordingLogger());
    const ctx = createExecutionContext({ planId: 'p1' });
    const calls = Array.from({ length: 50 }, () => cache.ensureActive('slow-start', tool, ctx));
    expect(new Set(calls).size).toBe(1);
    gate.resolve();
    await Promise.all(calls);
    expect(cache.ensureActive('slow-start', tool, ctx)).toBeUndefined();
    expect(tool.count('activate')).toBe(1);
    const other = createExecutionContext({ planId: 'p2' });
    await cache.ensureActive('slow-start', tool, other);
    expect(tool.count('activate')).toBe(2);
    expect(cache.activeTools('p1')).toEqual(['slow-start']);
  });

  it('shares one failure among concurrent callers, does not cache it, and a later call retries', async () => {
    let attempt = 0;
    const tool = new TestTool({
      name: 'fails-once',
      activate: async () => {
        attempt++;
        await new Promise((resolve) => setImmediate(resolve));
        if (attempt === 1) throw new Error('first attempt fails');
      },
    });
    const cache = new ToolLifecycleCache(new RecordingLogger());
    const ctx = createExecutionContext({ planId: 'retry' });
    const results = await Promise.allSettled([cache.ensureActive('fails-once', tool, ctx), cache.ensureActive('fails-once', tool, ctx)]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    const reason = (results[0] as PromiseRejectedResult).reason;
    expect(ToolActivationError.isInstance(reason)).toBe(true);
    expect(reason).toBe((results[1] as PromiseRejectedResult).reason);
    expect(cache.isActive('retry', 'fails-once')).toBe(false);
    await cache.ensureActive('fails-once', tool, ctx);
    expect(cache.isActive('retry', 'fails-once')).toBe(true);
    const report = await cache.release('retry');
    expect(report.deactivated).toEqual(['fails-once']);
    expect(tool.count('activate')).toBe(2);
    expect(tool.count('deactivate')).toBe(1);
  });

  it('release waits for in-flight executions before deactivating', async () => {
    const tool = new TestTool({ name: 'busy' });
    const cache = new ToolLifecycleCache(new RecordingLogger());
    const ctx = createExecutionContext({ planId: 'busy-plan' });
    await cache.ensureActive('busy', tool, ctx);
    cache.beginExecution(ctx, 'busy');
    let released = false;
    const releasing = cache.release('busy-plan').then((report) => {
      released = true;
      return report;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(released).toBe(false);
    expect(tool.count('deactivate')).toBe(0);
    cache.endExecution('busy-plan');
    const report = await releasing;
    expect(report).toMatchObject({ deactivated: ['busy'], abandonedExecutions: 0 });
  });

  it('release gives up waiting after the grace period and reports the abandoned executions', async () => {
    const tool = new TestTool({ name: 'stuck' });
    const cache = new ToolLifecycleCache(new RecordingLogger(), { graceMs: 5 });
    const ctx = createExecutionContext({ planId: 'stuck-plan' });
    await cache.ensureActive('stuck', tool, ctx);
    cache.beginExecution(ctx, 'stuck');
    const report = await cache.release('stuck-plan');
    expect(report).toMatchObject({ deactivated: ['stuck'], abandonedExecutions: 1 });
    cache.endExecution('stuck-plan');
    expect(cache.planCount).toBe(0);
  });

  it('deactivates the rest when one fails, reports and logs the failure, never throws', async () => {
    const logger = new RecordingLogger();
    const failing = new TestTool({ name: 'bad-exit', deactivate: () => Promise.reject(new Error('socket already closed')) });
    const good = new TestTool({ name: 'good-exit' });
    const cache = new ToolLifecycleCache(logger);
    const ctx = createExecutionContext({ planId: 'mixed' });
    await cache.ensureActive('bad-exit', failing, ctx);
    await cache.ensureActive('good-exit', good, ctx);
    const report = await cache.release('mixed');
    expect(report.deactivated).toEqual(['good-exit']);
    expect(report.failures).toHaveLength(1);
    expect(ToolDeactivationError.isInstance(report.failures[0])).toBe(true);
    expect(report.failures[0]!.message).toContain("'bad-exit'");
    expect((report.failures[0]!.cause as Error).message).toBe('socket already closed');
    expect(logger.at('error')).toHaveLength(1);
    expect(good.count('deactivate')).toBe(1);
  });

  it('reports a deactivation that hangs past its timeout', async () => {
    const hanging = new TestTool({ name: 'hangs', deactivate: () => new Promise(() => undefined) });
    const cache = new ToolLifecycleCache(new RecordingLogger(), { deactivateTimeoutMs: 10 });
    const ctx = createExecutionContext({ planId: 'hang' });
    await cache.ensureActive('hangs', hanging, ctx);
    const report = await cache.release('hang');
    expect(report.failures[0]!.message).toMatch(/did not finish within 10 ms/);
  });

  it('is idempotent and refuses work in an ended plan', async () => {
    const tool = new TestTool({ name: 'once' });
    const cache = new ToolLifecycleCache(new RecordingLogger());
    const ctx = createExecutionContext({ planId: 'ended' });
    await cache.ensureActive('once', tool, ctx);
    const [first, second] = await Promise.all([cache.release('ended'), cache.release('ended')]);
    expect(first.deactivated).toEqual(['once']);
    expect(second).toMatchObject({ deactivated: [], alreadyEnded: true });
    expect(tool.count('deactivate')).toBe(1);
    expect(() => cache.ensureActive('once', tool, ctx)).toThrow(ToolPlanEndedError);
    expect(() => cache.beginExecution(ctx, 'once')).toThrow(ToolPlanEndedError);
  });

  it('a second release while the first is deactivating waits for the tools to be released', async () => {
    const gate = deferred();
    const tool = new TestTool({ name: 'slow-stop', deactivate: () => gate.promise });
    const cache = new ToolLifecycleCache(new RecordingLogger());
    const ctx = createExecutionContext({ planId: 'twice' });
    await cache.ensureActive('slow-stop', tool, ctx);
    const first = cache.release('twice');
    let secondDone = false;
    const second = cache.release('twice').then((report) => {
      secondDone = true;
      return report;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(secondDone).toBe(false);
    gate.resolve();
    expect((await first).deactivated).toEqual(['slow-stop']);
    expect(await second).toMatchObject({ deactivated: [], alreadyEnded: true });
    expect(tool.count('deactivate')).toBe(1);
  });

  it('deactivates an activation that was still in flight when the grace period ran out', async () => {
    const gate = deferred();
    const tool = new TestTool({ name: 'late', activate: () => gate.promise });
    const cache = new ToolLifecycleCache(new RecordingLogger(), { graceMs: 5 });
    const ctx = createExecutionContext({ planId: 'late-plan' });
    const activation = cache.ensureActive('late', tool, ctx);
    const report = await cache.release('late-plan');
    expect(report.deactivated).toEqual([]);
    gate.resolve();
    await activation;
    await new Promise((resolve) => setImmediate(resolve));
    expect(tool.count('deactivate')).toBe(1);
  });

  it('forgets ended plan ids beyond its memory, so memory stays bounded', async () => {
    const cache = new ToolLifecycleCache(new RecordingLogger(), { endedPlanMemory: 3 });
    for (let index = 0; index < 10; index++) await cache.release(`plan-${index}`);
    expect(cache.hasEnded('plan-9')).toBe(true);
    expect(cache.hasEnded('plan-6')).toBe(false);
  });
});
