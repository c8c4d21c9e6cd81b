import { ToolCancelledError } from '@ca/tool-context';
import { InMemoryToolSource, RecordingLogger, TestTool } from '../testing/index';
import { ToolInvalidArgumentError, ToolRuntime, toolFailure, type ToolRuntimeOptions } from '../index';

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; trace?: { attempts?: number } }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the promise to reject');
}

function setup(tools: TestTool[], options: ToolRuntimeOptions) {
  return new ToolRuntime({ sources: [new InMemoryToolSource(tools)], logger: new RecordingLogger(), options });
}

/** An error as a tool marks it retryable. */
function retryable(message: string, retryAfterMs?: number): Error {
  return Object.assign(new Error(message), { retryable: true, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
}

const quickRetries: ToolRuntimeOptions = { calls: [{ tools: 'flaky.*', retry: { attempts: 3, backoffMs: 1, maxBackoffMs: 5 } }] };

describe('retries', () => {
  it('retries a failed result marked retryable, with the same idempotency key, and counts the attempts', async () => {
    const keys: unknown[] = [];
    const tool = new TestTool({
      name: 'flaky.post',
      execute: (_input, ctx) => {
        keys.push(ctx.idempotencyKey);
        return keys.length < 3 ? toolFailure(retryable('503 Service Unavailable')) : 'posted';
      },
    });
    const runtime = setup([tool], quickRetries);
    const result = await runtime.execute('flaky.post', { body: 'x' }, runtime.createPlan());
    expect(result).toMatchObject({ ok: true, output: 'posted' });
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(result.trace.attempts).toBe(3);
    expect(tool.count('execute')).toBe(3);
  });

  it('retries a thrown retryable error, and gives up after the attempts with the last failure', async () => {
    const tool = new TestTool({ name: 'flaky.throw', execute: () => Promise.reject(retryable('connection reset')) });
    const runtime = setup([tool], quickRetries);
    const error = await rejection(runtime.execute('flaky.throw', {}, runtime.createPlan()));
    expect(error).toMatchObject({ code: 'TOOL_EXECUTION_FAILED' });
    expect((error.cause as Error).message).toBe('connection reset');
    expect(error.trace?.attempts).toBe(3);
    expect(tool.count('execute')).toBe(3);
  });

  it('does not retry a failure that is not marked retryable, nor a tool without retry settings', async () => {
    const plain = new TestTool({ name: 'flaky.plain', execute: () => toolFailure(new Error('400 Bad Request')) });
    const marked = new TestTool({ name: 'steady.marked', execute: () => toolFailure(retryable('503')) });
    const runtime = setup([plain, marked], quickRetries);
    const ctx = runtime.createPlan();
    const first = await runtime.execute('flaky.plain', {}, ctx);
    const second = await runtime.execute('steady.marked', {}, ctx);
    expect([plain.count('execute'), marked.count('execute')]).toEqual([1, 1]);
    expect(first.trace.attempts).toBeUndefined();
    expect(second.trace.attempts).toBeUndefined();
  });

  it('keeps the changes of a failed attempt for rollback', async () => {
    let attempt = 0;
    const tool = new TestTool({
      name: 'flaky.write',
      execute: () => (++attempt === 1 ? { ok: false, error: retryable('partial'), changes: [{ kind: 'create', target: 'half.txt' }] } : 'ok'),
    });
    const runtime = setup([tool], quickRetries);
    const ctx = runtime.createPlan();
    await runtime.execute('flaky.write', {}, ctx);
    expect(ctx.changes.map((change) => change.target)).toEqual(['half.txt']);
  });

  it('waits the retryAfterMs a failure asks for (up to maxBackoffMs), and a cancellation during the wait ends it', async () => {
    const tool = new TestTool({ name: 'flaky.later', execute: () => toolFailure(retryable('429 Too Many Requests', 60_000)) });
    const runtime = setup([tool], { calls: [{ tools: 'flaky.*', retry: { attempts: 5, backoffMs: 1, maxBackoffMs: 30_000 } }] });
    const ctx = runtime.createPlan();
    const running = runtime.execute('flaky.later', {}, ctx).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(tool.count('execute')).toBe(1);
    ctx.cancellationToken.cancel('enough');
    const error = await running;
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect(tool.count('execute')).toBe(1);
  });

  it('never retries a cancellation, even one marked retryable', async () => {
    const tool = new TestTool({
      name: 'flaky.cancelled',
      execute: () => Promise.reject(Object.assign(new ToolCancelledError({ reason: 'x' }), { retryable: true })),
    });
    const runtime = setup([tool], quickRetries);
    await runtime.execute('flaky.cancelled', {}, runtime.createPlan()).catch(() => undefined);
    expect(tool.count('execute')).toBe(1);
  });

  it.each([
    [{ tools: 'x', retry: { attempts: 1 } }, 'calls[0].retry.attempts'],
    [{ tools: 'x', retry: { attempts: 11 } }, 'calls[0].retry.attempts'],
    [{ tools: 'x', retry: { attempts: 2, multiplier: 0.5 } }, 'calls[0].retry.multiplier'],
    [{ tools: 'x', retry: { attempts: 2, backof: 1 } }, 'calls[0].retry.backof'],
    [{ tools: [], retry: { attempts: 2 } }, 'calls[0].tools'],
    [{ tools: 'x', perPlan: {} }, 'calls[0].perPlan'],
    [{ tools: 'x', perPlan: { maxConcurrent: 0 } }, 'calls[0].perPlan.maxConcurrent'],
    [{ tools: 'x', perRuntime: { rate: { calls: 1 } } }, 'calls[0].perRuntime.rate.perMs'],
    [{ tools: 'x', onLimit: 'queue' }, 'calls[0].onLimit'],
  ])('refuses the call settings %j at %s', (entry, argument) => {
    let error: unknown;
    try {
      setup([], { calls: [entry as never] });
    } catch (thrown) {
      error = thrown;
    }
    expect(ToolInvalidArgumentError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ argument });
  });
});
