import { monitorEventLoopDelay } from 'node:perf_hooks';
import { TestTool, InMemoryToolSource, RecordingLogger } from '../testing/index';
import { ToolRuntime, ToolSet, type ToolSource } from '../index';

/** RegExp needs about 37 s for this pattern on this text; the linear-time engine answers at once. */
const ATTACK_PATTERN = '^(a+)+$';
const ATTACK_TEXT = `${'a'.repeat(30)}!`;

/** Longest the event loop may stall: far below the 37 s one backtracking match takes, far above any scheduling hiccup. */
const MAX_STALL_MS = 5_000;

/** Counts timer ticks and the longest stall of the event loop, to show it kept turning while something ran. */
function heartbeat(): { readonly ticks: () => number; readonly longestStallMs: () => number; readonly stop: () => void } {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  const stalls = monitorEventLoopDelay({ resolution: 10 });
  stalls.enable();
  return {
    ticks: () => ticks,
    longestStallMs: () => stalls.max / 1e6,
    stop: () => {
      clearInterval(timer);
      stalls.disable();
    },
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('schema trust: how a source’s schemas are compiled', () => {
  const lookahead = { type: 'object', properties: { user: { type: 'string', pattern: '^(?!root$)[a-z]+$' } } };

  it('compiles a source that declares nothing as untrusted: a lookahead pattern makes that tool unavailable, not the source', async () => {
    const source = new InMemoryToolSource([new TestTool({ name: 'srv.lookup', inputSchema: lookahead }), new TestTool({ name: 'srv.ping' })], { kind: 'jira' });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    const discovery = await runtime.discover();
    expect(discovery.tools.map((tool) => tool.name)).toEqual(['srv.ping']);
    expect(discovery.unavailable).toHaveLength(1);
    expect(discovery.unavailable[0]).toMatchObject({ name: 'srv.lookup', source: 'jira', error: { code: 'SCHEMA_INVALID', reason: 'unsupported-pattern' } });
    expect(discovery.unavailable[0]?.reason).toMatch(/#\/properties\/user\/pattern: the pattern .* uses lookahead/);
    await expect(runtime.runPlan({}, (ctx) => runtime.execute('srv.lookup', { user: 'x' }, ctx))).rejects.toMatchObject({
      code: 'TOOL_REGISTRATION_FAILED',
      message: expect.stringContaining('lookahead'),
    });
  });

  it("compiles a source that declares 'trusted' with RegExp: lookahead works", async () => {
    const runtime = new ToolRuntime({
      sources: [new ToolSet({ id: 'team', kind: 'custom', schemaTrust: 'trusted', tools: [new TestTool({ name: 'team.lookup', inputSchema: lookahead })] })],
      logger: new RecordingLogger(),
    });
    const results = await runtime.runPlan({}, async (ctx) => [
      await runtime.execute('team.lookup', { user: 'alice' }, ctx),
      await runtime.execute('team.lookup', { user: 'root' }, ctx),
    ]);
    expect(results.map((result) => result.ok)).toEqual([true, false]);
  });

  it('refuses a schemaTrust that is neither trusted nor untrusted when the runtime is built', () => {
    const source: ToolSource = {
      ...new InMemoryToolSource(),
      id: 'odd',
      kind: 'custom',
      schemaTrust: 'yes' as never,
      discover: async () => [],
      get: () => Promise.reject(new Error('none')),
    };
    expect(() => new ToolRuntime({ sources: [source] })).toThrow(/sources\[0\]\.schemaTrust must be 'trusted' or 'untrusted'/);
  });

  it('checks an untrusted input schema’s backtracking pattern against the attack text while timers keep firing', async () => {
    const tool = new TestTool({
      name: 'srv.echo',
      inputSchema: { type: 'object', properties: { text: { type: 'string', pattern: ATTACK_PATTERN } } },
      execute: (input) => input,
    });
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool], { kind: 'mcp' })], logger: new RecordingLogger() });
    const beat = heartbeat();
    try {
      const results = await runtime.runPlan({}, async (ctx) => {
        const collected = [];
        for (let attempt = 0; attempt < 3; attempt++) {
          collected.push(await runtime.execute('srv.echo', { text: ATTACK_TEXT }, ctx));
          await pause(10);
        }
        return collected;
      });
      for (const result of results) {
        expect(result.ok).toBe(false);
        expect(result.ok ? undefined : result.error).toMatchObject({
          code: 'TOOL_SCHEMA_VALIDATION_FAILED',
          issues: [expect.objectContaining({ keyword: 'pattern' })],
        });
      }
      expect(beat.ticks()).toBeGreaterThan(0);
      expect(beat.longestStallMs()).toBeLessThan(MAX_STALL_MS);
      expect(tool.count('execute')).toBe(0);
    } finally {
      beat.stop();
    }
  });

  it('checks an untrusted output schema’s backtracking pattern against the attack output while timers keep firing', async () => {
    const tool = new TestTool({
      name: 'srv.word',
      outputSchema: { type: 'object', properties: { word: { type: 'string', pattern: ATTACK_PATTERN } } },
      strictOutput: true,
      execute: () => ({ word: ATTACK_TEXT }),
    });
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool], { kind: 'mcp' })], logger: new RecordingLogger() });
    const beat = heartbeat();
    try {
      const result = await runtime.runPlan({}, async (ctx) => {
        await pause(10);
        return runtime.execute('srv.word', {}, ctx);
      });
      expect(result.ok).toBe(false);
      expect(result.ok ? undefined : result.error).toMatchObject({ code: 'TOOL_SCHEMA_VALIDATION_FAILED', direction: 'output' });
      expect(beat.ticks()).toBeGreaterThan(0);
      expect(beat.longestStallMs()).toBeLessThan(MAX_STALL_MS);
    } finally {
      beat.stop();
    }
  });
});
