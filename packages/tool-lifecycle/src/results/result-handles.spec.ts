import { normalizeCapability } from '@ca/domain';
import type { PlanContext } from '@ca/tool-context';
import { RecordingLogger } from '../testing';
import { ToolSet, toolSuccess, type ExecutionResult, type ResultHandle, type ToolContent, type ToolInstance } from '../tool';
import { ToolRuntime } from '../tool-runtime';
import { MemoryResultStore } from './memory-result-store';
import type { ResultRead, ResultGrep } from './result-handles';
import type { ResultStore } from './result-store';

const readOnly = normalizeCapability({ writes: false, checkpointable: true, idempotent: true, openWorld: false });

function tool(name: string, run: (input: Record<string, unknown>) => unknown, content?: readonly ToolContent[]): ToolInstance {
  return {
    descriptor: { name, description: `Tool ${name}.`, source: 'custom', capability: readOnly },
    execute: async (input) => toolSuccess(run((input ?? {}) as Record<string, unknown>), content === undefined ? undefined : { content }),
  };
}

/** 3,000 lines of a log; line 1500 holds a password, lines 2000 and 2500 disk errors. */
const LOG = Array.from({ length: 3000 }, (_, index) => {
  const line = index + 1;
  if (line === 1500) return `${line} INFO connecting with password=hunter2hunter2 to the database`;
  if (line === 2000 || line === 2500) return `${line} ERROR disk full on /var/data`;
  return `${line} INFO request served in ${line % 97} ms`;
}).join('\n');

const ITEMS = {
  items: Array.from({ length: 500 }, (_, index) => ({ id: index, name: `item ${index}`, tags: ['a', 'b'], api_key: `k-${index}` })),
  total: 500,
  'a/b': { '~x': 'escaped keys' },
};

function runtimeWith(store: ResultStore = new MemoryResultStore(), budget: object = { bytes: 4_096 }): { runtime: ToolRuntime; logger: RecordingLogger } {
  const logger = new RecordingLogger();
  const tools = [
    tool('logs.dump', () => LOG),
    tool('logs.one-line', () => `${'a'.repeat(60_000)}!`),
    tool('data.export', () => ITEMS),
    tool('small.echo', (input) => input),
    tool('roomy.dump', () => 'r'.repeat(10_000)),
    tool('sized.text', (input) => 's'.repeat(Number(input['size']))),
    tool('links.list', () => 'x\n'.repeat(5_000), [
      { type: 'text', text: 'x\n'.repeat(5_000) },
      { type: 'resource_link', uri: 'file:///var/report.csv', name: 'report.csv', mimeType: 'text/csv' },
    ]),
  ];
  const runtime = new ToolRuntime({
    logger,
    resultStore: store,
    sources: [new ToolSet({ id: 'test', kind: 'custom', tools, schemaTrust: 'trusted' })],
    options: { outputBudget: { tools: [{ tools: 'roomy.*', bytes: 1_000_000 }], ...budget } },
  });
  return { runtime, logger };
}

async function read(runtime: ToolRuntime, ctx: PlanContext, input: object): Promise<ExecutionResult> {
  return runtime.execute('results.read', input, ctx);
}

function output<T>(result: ExecutionResult): T {
  if (!result.ok) throw new Error(`expected success, got ${result.error.message}`);
  return result.output as T;
}

describe('results over the output budget, behind handles', () => {
  it('keeps a text over the budget behind a handle and gives a preview of its first and last lines', async () => {
    const store = new MemoryResultStore();
    const { runtime } = runtimeWith(store);
    await runtime.runPlan({}, async (ctx) => {
      const result = await runtime.execute('logs.dump', {}, ctx);
      expect(result.ok).toBe(true);
      const handle = result.handle as ResultHandle;
      expect(handle).toBeDefined();
      expect(result.output).toBe(handle);
      expect(handle.handle).toMatch(/^res-[a-z0-9]{24}$/);
      expect(handle).toMatchObject({ format: 'text', bytes: Buffer.byteLength(LOG), lines: 3000 });
      expect(handle.head?.startsWith('1 INFO request served in 1 ms\n')).toBe(true);
      expect(handle.head!.length).toBeLessThanOrEqual(2_000);
      expect(handle.tail?.endsWith('3000 INFO request served in 90 ms')).toBe(true);
      expect(handle.note).toContain(`results.read { "handle": "${handle.handle}"`);
      // The trace still tells what the tool produced.
      expect(result.trace.resultSizeBytes).toBe(JSON.stringify(LOG).length);
      // The store is written after the caller has its answer; a read waits for it.
      const lines = output<ResultRead>(await read(runtime, ctx, { handle: handle.handle, lines: { from: 1999, to: 2001 } }));
      expect(lines.text).toBe('1999 INFO request served in 59 ms\n2000 ERROR disk full on /var/data\n2001 INFO request served in 61 ms\n');
      expect(lines).toMatchObject({ totalLines: 3000, range: { lines: { from: 1999, to: 2001 } }, truncated: false, next: { lines: { from: 2002 } } });
      expect(store.bytesHeld).toBeGreaterThan(0);
    });
    expect(store.bytesHeld).toBe(0);
  });

  it('reads by bytes and by lines within maxBytes, saying what to read next', async () => {
    const { runtime } = runtimeWith();
    await runtime.runPlan({}, async (ctx) => {
      const { handle } = (await runtime.execute('logs.dump', {}, ctx)).handle as ResultHandle;
      const bytes = output<ResultRead>(await read(runtime, ctx, { handle, bytes: { start: 0, end: 10 } }));
      expect(bytes.text).toBe('1 INFO req');
      expect(bytes.range.bytes).toEqual({ start: 0, end: 10 });
      const capped = output<ResultRead>(await read(runtime, ctx, { handle, lines: { from: 1, to: 3000 }, maxBytes: 300 }));
      expect(capped.truncated).toBe(true);
      expect(capped.text.endsWith('\n')).toBe(true);
      expect(capped.text.length).toBeLessThanOrEqual(300);
      const last = capped.range.lines!.to;
      expect(capped.next).toEqual({ lines: { from: last + 1, to: 3000 } });
      const following = output<ResultRead>(await read(runtime, ctx, { handle, ...capped.next, maxBytes: 300 }));
      expect(following.text.startsWith(`${last + 1} INFO`)).toBe(true);
      // Lines far from the start are found from the line marks, not by reading everything before them.
      const end = output<ResultRead>(await read(runtime, ctx, { handle, lines: { from: 3000 } }));
      expect(end.text).toBe('3000 INFO request served in 90 ms');
      expect(end.next).toBeUndefined();
    });
  });

  it('redacts secrets before anything is stored: the preview, a read and a search never show them', async () => {
    const { runtime } = runtimeWith();
    await runtime.runPlan({}, async (ctx) => {
      const result = await runtime.execute('logs.dump', {}, ctx);
      const { handle } = result.handle as ResultHandle;
      const line = output<ResultRead>(await read(runtime, ctx, { handle, lines: { from: 1500, to: 1500 } }));
      expect(line.text).toBe('1500 INFO connecting with password=*** to the database\n');
      const search = output<ResultGrep>(await runtime.execute('results.grep', { handle, pattern: 'hunter2' }, ctx));
      expect(search.matches).toEqual([]);
      const whole = output<ResultRead>(await read(runtime, ctx, { handle, bytes: { start: 0 }, maxBytes: 262_144 }));
      expect(whole.text).not.toContain('hunter2');
      expect(whole.totalBytes).toBe(Buffer.byteLength(LOG) - 'hunter2hunter2'.length + 3);
    });
  });

  it('keeps JSON with its shape as the preview and reads values by JSON pointer', async () => {
    const { runtime } = runtimeWith();
    await runtime.runPlan({}, async (ctx) => {
      const result = await runtime.execute('data.export', {}, ctx);
      const preview = result.handle as ResultHandle;
      expect(preview.format).toBe('json');
      expect(preview.shape).toBe(
        '{ "items": [ 500 × { "id": number, "name": string, "tags": [ 2 × string ], "api_key": string } ], "total": number, "a/b": { "~x": string } }',
      );
      const name = output<ResultRead>(await read(runtime, ctx, { handle: preview.handle, pointer: '/items/2/name' }));
      expect(name.text).toBe('"item 2"');
      expect(output<ResultRead>(await read(runtime, ctx, { handle: preview.handle, pointer: '/total' })).text).toBe('500');
      expect(output<ResultRead>(await read(runtime, ctx, { handle: preview.handle, pointer: '/a~1b/~0x' })).text).toBe('"escaped keys"');
      expect(JSON.parse(output<ResultRead>(await read(runtime, ctx, { handle: preview.handle, pointer: '/items/499' })).text)).toEqual({
        id: 499,
        name: 'item 499',
        tags: ['a', 'b'],
        api_key: '***',
      });
      // JSON is stored indented, so lines and searches are of use too.
      const found = output<ResultGrep>(await runtime.execute('results.grep', { handle: preview.handle, pattern: '"name": "item 42"' }, ctx));
      expect(found.matches).toHaveLength(1);
      expect(found.matches[0]?.text.trim()).toBe('"name": "item 42",');
    });
  });

  it('answers a pointer, a range or a line out of bounds with a failed result saying what fits', async () => {
    const { runtime } = runtimeWith();
    await runtime.runPlan({}, async (ctx) => {
      const json = ((await runtime.execute('data.export', {}, ctx)).handle as ResultHandle).handle;
      const text = ((await runtime.execute('logs.dump', {}, ctx)).handle as ResultHandle).handle;
      const failures: [object, RegExp][] = [
        [{ handle: json, pointer: '/items/500' }, /has 500 items, so no index 500/],
        [{ handle: json, pointer: '/items/-1' }, /must be an index/],
        [{ handle: json, pointer: '/nothing' }, /has no key "nothing"/],
        [{ handle: json, pointer: '/total/x' }, /is not an object or an array/],
        [{ handle: json, pointer: 'items' }, /is not a JSON pointer/],
        [{ handle: json, pointer: '/a~2b' }, /is not a JSON pointer/],
        [{ handle: text, pointer: '/0' }, /it is text, which has no JSON pointer/],
        [{ handle: text, lines: { from: 3001 } }, /line 3001 is not in it \(it has 3000 lines/],
        [{ handle: text, lines: { from: 10, to: 5 } }, /line 5 comes before line 10/],
        [{ handle: text, bytes: { start: 10_000_000 } }, /byte 10000000 is not in it/],
        [{ handle: text, bytes: { start: 5, end: 5 } }, /is not after the start/],
        [{ handle: text, lines: { from: 1 }, pointer: '/x' }, /one of lines, bytes and pointer/],
      ];
      for (const [input, message] of failures) {
        const result = await read(runtime, ctx, input);
        expect(result.ok).toBe(false);
        if (result.ok) continue;
        expect(result.error.code).toBe('TOOL_RESULT_READ_INVALID');
        expect(result.error.message).toMatch(message);
        expect(result.error.message).toContain("results.read: Stored result 'res-");
      }
    });
  });

  it('refuses a handle of another plan, a handle of an ended plan and a name that is not a handle', async () => {
    const store = new MemoryResultStore();
    const { runtime } = runtimeWith(store);
    const first = runtime.createPlan({ planId: 'plan-a' });
    const second = runtime.createPlan({ planId: 'plan-b' });
    const { handle } = (await runtime.execute('logs.dump', {}, first)).handle as ResultHandle;
    expect((await read(runtime, first, { handle, lines: { from: 1, to: 1 } })).ok).toBe(true);
    const other = await read(runtime, second, { handle, lines: { from: 1, to: 1 } });
    expect(other.ok).toBe(false);
    if (!other.ok) {
      expect(other.error.code).toBe('TOOL_RESULT_NOT_FOUND');
      expect(other.error.message).toContain("of plan 'plan-b'");
    }
    // The schema stops names that are not handles before the tool runs.
    const traversal = await read(runtime, second, { handle: '../plan-a/x' });
    expect(traversal.ok).toBe(false);
    if (!traversal.ok) expect(traversal.error.code).toBe('TOOL_SCHEMA_VALIDATION_FAILED');
    await runtime.endPlan(first);
    expect(store.bytesHeld).toBe(0);
    expect(await store.get('plan-a', handle)).toBeUndefined();
    await runtime.endPlan(second);
  });

  it('searches line by line on the linear-time engine: a pattern that would backtrack ends, in order and with a cap', async () => {
    const { runtime } = runtimeWith();
    await runtime.runPlan({}, async (ctx) => {
      const logs = ((await runtime.execute('logs.dump', {}, ctx)).handle as ResultHandle).handle;
      const errors = output<ResultGrep>(await runtime.execute('results.grep', { handle: logs, pattern: 'error disk', ignoreCase: true }, ctx));
      expect(errors.matches).toEqual([
        { line: 2000, text: '2000 ERROR disk full on /var/data' },
        { line: 2500, text: '2500 ERROR disk full on /var/data' },
      ]);
      expect(errors.truncated).toBe(false);
      const capped = output<ResultGrep>(await runtime.execute('results.grep', { handle: logs, pattern: 'INFO', maxMatches: 3 }, ctx));
      expect(capped.matches.map((match) => match.line)).toEqual([1, 2, 3]);
      expect(capped.truncated).toBe(true);
      // 60,000 'a' and a '!': (a+)+$ takes exponential time on a backtracking engine.
      const line = ((await runtime.execute('logs.one-line', {}, ctx)).handle as ResultHandle).handle;
      const none = output<ResultGrep>(await runtime.execute('results.grep', { handle: line, pattern: '^(a+)+$' }, ctx));
      expect(none.matches).toEqual([]);
      const bad = await runtime.execute('results.grep', { handle: line, pattern: '(a)\\1' }, ctx);
      expect(bad.ok).toBe(false);
      if (!bad.ok) expect(bad.error.code).toBe('TOOL_RESULT_READ_INVALID');
    });
  });

  it('budgets per tool and per plan: a tool with its own budget, and outputs past the plan’s budget', async () => {
    const { runtime } = runtimeWith(new MemoryResultStore(), { bytes: 100_000, planBytes: 20_000 });
    await runtime.runPlan({}, async (ctx) => {
      expect((await runtime.execute('roomy.dump', {}, ctx)).handle).toBeUndefined();
      // 10,002 bytes spent; 8,002 more fit in 20,000, the next 8,002 do not.
      expect((await runtime.execute('sized.text', { size: 8_000 }, ctx)).handle).toBeUndefined();
      expect((await runtime.execute('sized.text', { size: 8_000 }, ctx)).handle).toBeDefined();
      // Small outputs are never stored for the plan's budget: a preview would not be smaller.
      expect((await runtime.execute('sized.text', { size: 2_000 }, ctx)).handle).toBeUndefined();
    });
    const { runtime: small } = runtimeWith();
    await small.runPlan({}, async (ctx) => {
      expect((await small.execute('roomy.dump', {}, ctx)).handle).toBeUndefined();
      expect((await small.execute('sized.text', { size: 5_000 }, ctx)).handle).toBeDefined();
      expect((await small.execute('small.echo', { hello: 'world' }, ctx)).output).toEqual({ hello: 'world' });
    });
  });

  it('keeps resource links of a stored result as they are, and the text in the store', async () => {
    const { runtime } = runtimeWith();
    await runtime.runPlan({}, async (ctx) => {
      const result = await runtime.execute('links.list', {}, ctx);
      expect(result.handle).toBeDefined();
      expect(result.content).toEqual([{ type: 'resource_link', uri: 'file:///var/report.csv', name: 'report.csv', mimeType: 'text/csv' }]);
    });
  });

  it('reports a store that fails on the reads of the handle, and logs it', async () => {
    const failing: ResultStore = {
      create: async () => {
        throw new Error('disk full');
      },
      get: async () => undefined,
      read: async () => new Uint8Array(0),
      dropPlan: async () => undefined,
    };
    const { runtime, logger } = runtimeWith(failing);
    await runtime.runPlan({}, async (ctx) => {
      const { handle } = (await runtime.execute('logs.dump', {}, ctx)).handle as ResultHandle;
      const result = await read(runtime, ctx, { handle });
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error.code).toBe('TOOL_RESULT_STORE_FAILED');
        expect(result.error.message).toContain('disk full');
      }
      expect(logger.entries.some((entry) => entry.level === 'warn' && entry.message.includes('could not be stored as res-'))).toBe(true);
    });
  });

  it('records the handle, not the output, for a step made again', async () => {
    const { runtime } = runtimeWith();
    await runtime.runPlan({}, async (ctx) => {
      const first = await runtime.execute('logs.dump', {}, ctx, { step: 'dump-1' });
      const again = await runtime.execute('logs.dump', {}, ctx, { step: 'dump-1' });
      expect(first.handle).toBeDefined();
      expect(again.output).toEqual(first.output);
    });
  });

  it('stores nothing for a plan that ended before the tool returned', async () => {
    const store = new MemoryResultStore();
    let release!: () => void;
    const slow: ToolInstance = {
      descriptor: { name: 'slow.dump', description: 'Dumps late.', source: 'custom', capability: readOnly },
      execute: () => new Promise((resolve) => (release = () => resolve(toolSuccess(LOG)))),
    };
    const runtime = new ToolRuntime({
      logger: new RecordingLogger(),
      resultStore: store,
      sources: [new ToolSet({ id: 'slow', kind: 'custom', tools: [slow] })],
      options: { outputBudget: { bytes: 4_096 }, endPlanGraceMs: 0 },
    });
    const ctx = runtime.createPlan();
    const running = runtime.execute('slow.dump', {}, ctx).catch((error: unknown) => error);
    await new Promise((resolve) => setImmediate(resolve));
    await runtime.endPlan(ctx);
    release();
    await running;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(store.bytesHeld).toBe(0);
  });
});
