import { InMemoryToolSource, RecordingLogger, TestTool } from '../testing/index';
import { ToolInvalidArgumentError, ToolRuntime } from '../index';

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; trace?: { attempts?: number } }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the promise to reject');
}

function setup(tools: TestTool[]) {
  return new ToolRuntime({ sources: [new InMemoryToolSource(tools)], logger: new RecordingLogger() });
}

/** A tool that returns the idempotency key its view carries. */
function keyReader(name = 'keys.read'): TestTool {
  return new TestTool({ name, execute: (_input, ctx) => ctx.idempotencyKey });
}

describe('idempotency keys', () => {
  it('every execution has one: a 43-character hash; the plan context and activation views have none', async () => {
    let activationKey: unknown = 'unset';
    const tool = new TestTool({
      name: 'keys.read',
      execute: (_input, ctx) => ctx.idempotencyKey,
      activate: (ctx) => void (activationKey = ctx.idempotencyKey),
    });
    const runtime = setup([tool]);
    const ctx = runtime.createPlan();
    const result = await runtime.execute('keys.read', { a: 1 }, ctx);
    expect(result.output).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(ctx.idempotencyKey).toBeUndefined();
    expect(activationKey).toBeUndefined();
  });

  it('the trace (and the span) holds the key a tool read, and no key where the tool never read one', async () => {
    const silent = new TestTool({ name: 'keys.silent', execute: () => 'no key read' });
    const runtime = setup([keyReader(), silent]);
    const ctx = runtime.createPlan();
    const read = await runtime.execute('keys.read', { a: 1 }, ctx);
    expect(read.trace.idempotencyKey).toBe(read.output);
    expect(ctx.traces[0]?.idempotencyKey).toBe(read.output);
    const unread = await runtime.execute('keys.silent', {}, ctx);
    expect(unread.trace).not.toHaveProperty('idempotencyKey');
  });

  it('identical calls in one plan get different keys (their ordinal), different arguments or tools too', async () => {
    const runtime = setup([keyReader(), keyReader('keys.other')]);
    const ctx = runtime.createPlan({ planId: 'p' });
    const keys = [
      (await runtime.execute('keys.read', { a: 1 }, ctx)).output,
      (await runtime.execute('keys.read', { a: 1 }, ctx)).output,
      (await runtime.execute('keys.read', { a: 2 }, ctx)).output,
      (await runtime.execute('keys.other', { a: 1 }, ctx)).output,
    ];
    expect(new Set(keys).size).toBe(4);
  });

  it('a plan restarted with the same id makes the same keys for the same calls; another plan id makes others', async () => {
    const sequence = async (planId: string) => {
      const runtime = setup([keyReader()]);
      const ctx = runtime.createPlan({ planId });
      const keys: unknown[] = [];
      for (const input of [{ a: 1, b: 2 }, { a: 1, b: 2 }, { c: 3 }]) keys.push((await runtime.execute('keys.read', input, ctx)).output);
      return keys;
    };
    const first = await sequence('nightly');
    // Key order of the arguments does not matter: the key is of the canonical form.
    expect(await sequence('nightly')).toEqual(first);
    expect(await sequence('nightly-2')).not.toEqual(first);
  });

  it('an explicit step replaces the ordinal: the same step has the same key, another step another', async () => {
    const runtime = setup([keyReader()]);
    const ctx = runtime.createPlan({ planId: 'p' });
    const first = (await runtime.execute('keys.read', { a: 1 }, ctx, { step: 'step-1' })).output;
    const other = (await runtime.execute('keys.read', { a: 1 }, ctx, { step: 'step-2' })).output;
    const restarted = setup([keyReader()]);
    const again = (await restarted.execute('keys.read', { a: 1 }, restarted.createPlan({ planId: 'p' }), { step: 'step-1' })).output;
    expect(first).not.toBe(other);
    expect(again).toBe(first);
  });

  it('a result recorded for a step is returned instead of calling again; its changes are not recorded twice', async () => {
    let calls = 0;
    const tool = new TestTool({
      name: 'orders.create',
      capability: { writes: true },
      execute: () => ({ ok: true, output: { order: ++calls }, changes: [{ kind: 'create', target: `order-${calls}` }] }),
    });
    const runtime = setup([tool]);
    const ctx = runtime.createPlan();
    const first = await runtime.execute('orders.create', { item: 'book' }, ctx, { step: 'buy' });
    const replay = await runtime.execute('orders.create', { item: 'book' }, ctx, { step: 'buy' });
    expect(calls).toBe(1);
    expect(replay).toMatchObject({ ok: true, output: { order: 1 } });
    expect(replay.executionId).not.toBe(first.executionId);
    expect(replay.trace.replayedFrom).toBe(first.executionId);
    expect(first.trace.replayedFrom).toBeUndefined();
    expect(ctx.changes).toHaveLength(1);
    // Other arguments under the same step name are another call.
    await runtime.execute('orders.create', { item: 'pen' }, ctx, { step: 'buy' });
    expect(calls).toBe(2);
  });

  it('concurrent calls of one step run the tool once', async () => {
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const tool = new TestTool({
      name: 'slow.create',
      execute: async () => {
        calls++;
        await gate;
        return 'made';
      },
    });
    const runtime = setup([tool]);
    const ctx = runtime.createPlan();
    const results = Promise.all([1, 2, 3].map(() => runtime.execute('slow.create', {}, ctx, { step: 's' })));
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    const settled = await results;
    expect(calls).toBe(1);
    expect(settled.map((result) => result.output)).toEqual(['made', 'made', 'made']);
    expect(settled.filter((result) => result.trace.replayedFrom !== undefined)).toHaveLength(2);
  });

  it('a failed result is recorded too: the same step gives the same failure, the tool is not called again', async () => {
    let calls = 0;
    const tool = new TestTool({ name: 'flaky', execute: () => (++calls === 1 ? { ok: false, error: new Error('busy') } : 'done') });
    const runtime = setup([tool]);
    const ctx = runtime.createPlan();
    const first = await runtime.execute('flaky', {}, ctx, { step: 'x' });
    const again = await runtime.execute('flaky', {}, ctx, { step: 'x' });
    expect(first.ok).toBe(false);
    expect(again).toMatchObject({ ok: false, error: { message: 'busy' } });
    expect(again.trace.replayedFrom).toBe(first.executionId);
    expect(calls).toBe(1);
    // Another step id is another call.
    expect((await runtime.execute('flaky', {}, ctx, { step: 'x-retry' })).output).toBe('done');
  });

  it('refuses a step that is not a string of 1–1000 characters', async () => {
    const runtime = setup([keyReader()]);
    const ctx = runtime.createPlan();
    for (const step of ['', 'x'.repeat(1001), 42]) {
      await expect(runtime.execute('keys.read', {}, ctx, { step: step as string })).rejects.toThrow(ToolInvalidArgumentError);
    }
  });

  it('computing a key for input that is not JSON fails the call with a coded error naming the tool', async () => {
    const runtime = setup([keyReader()]);
    const error = await rejection(runtime.execute('keys.read', { n: 1n }, runtime.createPlan({ planId: 'p' })));
    expect(error).toMatchObject({ code: 'TOOL_INVALID_ARGUMENT', argument: 'input', toolName: 'keys.read', planId: 'p' });
    expect(error.message).toMatch(
      /^Tool 'keys.read': input must be JSON data, to compute the idempotency key of the call; got an object\. canonicalJson: a BigInt has no JSON form/,
    );
  });
});
