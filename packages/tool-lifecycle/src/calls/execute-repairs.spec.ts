import { InMemoryToolSource, TestTool } from '../testing';
import { ToolRuntime } from '../tool-runtime';
import { silentLogger } from '../observability';

// The seam for front doors (@ca/model-tools): the repairs made to a model's
// arguments before the call are kept in the call's trace, and nothing else
// about the call changes.
describe('ExecuteOptions.repairs', () => {
  const tool = new TestTool({ name: 'count', inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } });
  const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger: silentLogger });

  it('keeps the repairs in the trace of a successful call, and only there', async () => {
    await runtime.runPlan({}, async (ctx) => {
      const repairs = [{ rule: 'string-to-scalar', pointer: '/n', from: 'string', to: 'integer' }] as const;
      const result = await runtime.execute('count', { n: 4 }, ctx, { repairs });
      expect(result.ok).toBe(true);
      expect(result.trace.repairs).toEqual(repairs);
      expect(Object.isFrozen(result.trace.repairs)).toBe(true);
      expect(ctx.traces.at(-1)).toBe(result.trace);
      const plain = await runtime.execute('count', { n: 5 }, ctx);
      expect(plain.trace).not.toHaveProperty('repairs');
    });
  });

  it('keeps them in the trace of a call that fails validation, and drops malformed entries instead of losing the trace', async () => {
    await runtime.runPlan({}, async (ctx) => {
      const repairs = [{ rule: 'json-string', pointer: '/n', from: 'string', to: 'object' }, { rule: 'guess', pointer: '/n' }, null] as never;
      const result = await runtime.execute('count', { n: {} }, ctx, { repairs });
      expect(result.ok).toBe(false);
      expect(result.trace.repairs).toEqual([{ rule: 'json-string', pointer: '/n', from: 'string', to: 'object' }]);
      expect(ctx.traces).toHaveLength(1);
    });
  });

  it('keeps them in the trace an error carries when the call throws', async () => {
    await runtime.runPlan({ policy: { readOnly: true, requireCheckpoint: true } }, async (ctx) => {
      const writer = new ToolRuntime({
        sources: [new InMemoryToolSource([new TestTool({ name: 'write', capability: { writes: true } })])],
        logger: silentLogger,
      });
      const repairs = [{ rule: 'null-for-optional', pointer: '/a', from: 'null', to: 'absent' }] as const;
      const thrown = await writer.execute('write', {}, ctx, { repairs }).catch((error: unknown) => error);
      expect((thrown as { code: string }).code).toBe('TOOL_ACCESS_DENIED');
      expect((thrown as { trace: { repairs: unknown } }).trace.repairs).toEqual(repairs);
    });
  });
});
