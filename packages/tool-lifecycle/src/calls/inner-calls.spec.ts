import type { ToolExecutionContext } from '@ca/tool-context';
import { MemoryCallJournal, ToolRuntime, innerCallStep, silentLogger, type ToolCaller } from '../index';
import { InMemoryToolSource, TestTool } from '../testing';

/** A tool that makes calls of its own in the plan, as `@ca/code-mode`'s `code.run` does. */
function outerTool(runtime: () => ToolRuntime, seen: (ToolCaller | undefined)[]): TestTool {
  return new TestTool({
    name: 'outer.run',
    execute: async (input: unknown, view: ToolExecutionContext) => {
      const caller = runtime().callerOf(view);
      seen.push(caller);
      if (caller === undefined) return 'no caller';
      const outputs: unknown[] = [];
      for (let n = 1; n <= 2; n++) {
        const result = await runtime().execute('inner.count', { n }, caller.ctx, { parentExecutionId: caller.executionId, step: innerCallStep(caller, n) });
        outputs.push(result.output);
      }
      return outputs;
    },
  });
}

describe('inner calls (ToolRuntime.callerOf, ExecuteOptions.parentExecutionId, innerCallStep)', () => {
  it('gives a tool its plan and execution; inner calls are traced with their parent and go through the journal by step', async () => {
    let calls = 0;
    const inner = new TestTool({ name: 'inner.count', execute: () => ++calls });
    const seen: (ToolCaller | undefined)[] = [];
    const runtime: ToolRuntime = new ToolRuntime({ sources: [new InMemoryToolSource([outerTool(() => runtime, seen), inner])], logger: silentLogger });
    const journal = new MemoryCallJournal();
    await runtime.runPlan({ journal }, async (plan) => {
      const first = await runtime.execute('outer.run', {}, plan, { step: 'run-1' });
      expect(first.output).toEqual([1, 2]);
      expect(seen[0]).toMatchObject({ ctx: plan, executionId: first.executionId, toolName: 'outer.run', step: 'run-1' });
      const innerTraces = plan.traces.filter((trace) => trace.toolName === 'inner.count');
      expect(innerTraces.map((trace) => trace.parentExecutionId)).toEqual([first.executionId, first.executionId]);
      expect(plan.traces.find((trace) => trace.toolName === 'outer.run')?.parentExecutionId).toBeUndefined();
      // The same step made again: the outer call is answered from the journal; nothing runs twice.
      const again = await runtime.execute('outer.run', {}, plan, { step: 'run-1' });
      expect(again.output).toEqual([1, 2]);
      expect(calls).toBe(2);
    });
  });

  it('replays inner calls by their steps when the outer call runs again under another step of the same plan', async () => {
    let calls = 0;
    const inner = new TestTool({ name: 'inner.count', execute: () => ++calls });
    const caller: ToolCaller = { ctx: undefined as never, executionId: 'x', toolName: 'outer.run', step: 'call-7' };
    expect(innerCallStep(caller, 3)).toBe('call-7/3');
    expect(innerCallStep({ ...caller, step: undefined } as ToolCaller, 1)).toBe('x/1');
    expect(() => innerCallStep(caller, 0)).toThrow(expect.objectContaining({ code: 'TOOL_INVALID_ARGUMENT' }));
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([inner])], logger: silentLogger });
    await runtime.runPlan({}, async (plan) => {
      await runtime.execute('inner.count', { n: 1 }, plan, { step: 'call-7/1', parentExecutionId: 'outer-1' });
      const replayed = await runtime.execute('inner.count', { n: 1 }, plan, { step: 'call-7/1', parentExecutionId: 'outer-2' });
      expect(replayed.output).toBe(1);
      expect(replayed.trace).toMatchObject({ parentExecutionId: 'outer-2' });
      expect(replayed.trace.replayedFrom).toBeDefined();
      expect(calls).toBe(1);
    });
  });

  it('answers undefined for anything but a live execution view, and refuses a malformed parent id', async () => {
    const seen: (ToolCaller | undefined)[] = [];
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([new TestTool({ name: 'inner.count' })])], logger: silentLogger });
    await runtime.runPlan({}, async (plan) => {
      expect(runtime.callerOf(plan)).toBeUndefined();
      expect(runtime.callerOf(plan.forExecution({ toolName: 'inner.count', executionId: 'forged' }))).toBeUndefined();
      expect(runtime.callerOf(null as never)).toBeUndefined();
      expect(runtime.callerOf({ planId: plan.planId } as never)).toBeUndefined();
      await expect(runtime.execute('inner.count', {}, plan, { parentExecutionId: '' })).rejects.toMatchObject({ code: 'TOOL_INVALID_ARGUMENT' });
      await expect(runtime.execute('inner.count', {}, plan, { parentExecutionId: 7 as never })).rejects.toMatchObject({ code: 'TOOL_INVALID_ARGUMENT' });
    });
    expect(seen).toEqual([]);
  });
});
