import { ToolCancelledError } from '@ca/tool-context';
import { InMemoryToolSource, TestTool } from '../testing/index';
import { ToolInvalidArgumentError, ToolRuntime, silentLogger } from '../index';

/** A tool that waits for its cancellation and says why it stopped. */
function waitingTool(name: string, started: (signal: AbortSignal) => void): TestTool {
  return new TestTool({
    name,
    execute: (_input, ctx) =>
      new Promise((resolve) => {
        started(ctx.cancellationToken.signal);
        ctx.cancellationToken.onCancel((reason) => resolve({ stoppedBecause: reason }));
      }),
  });
}

describe('ExecuteOptions.signal: cancelling one execution, not its plan', () => {
  it('cancels the call it was given with, while another call of the same plan goes on', async () => {
    let firstStarted!: () => void;
    const firstRunning = new Promise<void>((resolve) => (firstStarted = resolve));
    let secondSignal: AbortSignal | undefined;
    const runtime = new ToolRuntime({
      sources: [
        new InMemoryToolSource([
          waitingTool('wait.one', () => firstStarted()),
          waitingTool('wait.two', (signal) => (secondSignal = signal)),
          new TestTool({ name: 'echo' }),
        ]),
      ],
      logger: silentLogger,
    });
    const ctx = runtime.createPlan();
    const controller = new AbortController();
    const first = runtime.execute('wait.one', {}, ctx, { signal: controller.signal });
    const second = runtime.execute('wait.two', {}, ctx);
    await firstRunning;
    controller.abort('the client cancelled request 7');
    await expect(first).rejects.toMatchObject({ code: 'TOOL_CANCELLED', reason: 'the client cancelled request 7', toolName: 'wait.one' });
    expect(ctx.cancellationToken.isCancelled).toBe(false);
    expect(secondSignal?.aborted).toBe(false);
    await expect(runtime.execute('echo', { still: 'works' }, ctx)).resolves.toMatchObject({ ok: true, output: { still: 'works' } });
    expect(ctx.traces.find((trace) => trace.toolName === 'wait.one')).toMatchObject({ success: false, error: { code: 'TOOL_CANCELLED' } });
    ctx.cancellationToken.cancel('done');
    await expect(second).rejects.toBeInstanceOf(ToolCancelledError);
    await runtime.endPlan(ctx);
  });

  it('does not start a call whose signal has aborted already, and removes its listener after a call', async () => {
    const tool = new TestTool({ name: 'echo' });
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger: silentLogger });
    const ctx = runtime.createPlan();
    const aborted = AbortSignal.abort(new Error('gone'));
    await expect(runtime.execute('echo', {}, ctx, { signal: aborted })).rejects.toMatchObject({ code: 'TOOL_CANCELLED', reason: 'gone' });
    expect(tool.count('execute')).toBe(0);
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => (listeners++, add(...args))) as typeof add;
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => (listeners--, remove(...args))) as typeof remove;
    await expect(runtime.execute('echo', { a: 1 }, ctx, { signal: controller.signal })).resolves.toMatchObject({ ok: true });
    expect(listeners).toBe(0);
    await runtime.endPlan(ctx);
  });
});

describe('runtime.onToolsChanged', () => {
  it('tells its listeners when a source changes, and the next listing has the change', async () => {
    const source = new InMemoryToolSource([new TestTool({ name: 'one' })]);
    const runtime = new ToolRuntime({ sources: [source], logger: silentLogger });
    expect((await runtime.listTools()).map((tool) => tool.name)).toEqual(['one']);
    const seen: string[] = [];
    const unsubscribe = runtime.onToolsChanged(() => seen.push('changed'));
    source.add(new TestTool({ name: 'two' }));
    expect(seen).toEqual(['changed']);
    expect((await runtime.listTools()).map((tool) => tool.name)).toEqual(['one', 'two']);
    unsubscribe();
    source.remove('one');
    expect(seen).toEqual(['changed']);
    expect(() => runtime.onToolsChanged('nope' as never)).toThrow(ToolInvalidArgumentError);
  });

  it('keeps telling the others when one listener throws', async () => {
    const source = new InMemoryToolSource([new TestTool({ name: 'one' })]);
    const runtime = new ToolRuntime({ sources: [source], logger: silentLogger });
    await runtime.listTools();
    let calls = 0;
    runtime.onToolsChanged(() => {
      throw new Error('broken listener');
    });
    runtime.onToolsChanged(() => calls++);
    source.add(new TestTool({ name: 'two' }));
    expect(calls).toBe(1);
  });
});
