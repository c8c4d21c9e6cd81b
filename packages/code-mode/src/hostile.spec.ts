// Hostile programs: each is held with a coded error, the host's event loop
// keeps turning while it runs (a timer of the host fires), and nothing
// outside the plan runs. No timing thresholds: only that the timer fired.
import { ToolRuntime, silentLogger, type ExecutionResult } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { createCodeMode, type CodeMode, type CodeModeError, type CodeRunOutput } from './index';

describe('hostile programs', () => {
  let runtime: ToolRuntime;
  let codeMode: CodeMode;
  let secretCalls = 0;
  let writes = 0;
  const echo = new TestTool({ name: 'util.echo', stateless: true });
  const slow = new TestTool({ name: 'util.slow', stateless: true, execute: () => new Promise((resolve) => setTimeout(() => resolve('slow'), 20)) });
  const secret = new TestTool({ name: 'secret.read', stateless: true, execute: () => ++secretCalls });
  const write = new TestTool({ name: 'notes.write', stateless: true, capability: { writes: true, checkpointable: false }, execute: () => ++writes });

  beforeAll(async () => {
    codeMode = createCodeMode({
      runtime: () => runtime,
      pool: { size: 2, graceMs: 200 },
      include: (tool) => tool.name !== 'secret.read',
      limits: { timeMs: 400, memoryBytes: 16 * 1024 * 1024, maxCalls: 50, maxConcurrentCalls: 8, maxOutputChars: 20_000 },
    });
    runtime = new ToolRuntime({ sources: [new InMemoryToolSource([echo, slow, secret, write]), codeMode.source], logger: silentLogger });
    await codeMode.warm();
  });
  afterAll(async () => {
    await codeMode.close();
    // Nothing outside the plan ran, in any of the attacks.
    expect(secretCalls).toBe(0);
    expect(writes).toBe(0);
  });

  /** Runs `code` in a read-only plan while a timer of the host ticks; the timer must have fired. */
  async function attack(code: string): Promise<ExecutionResult<CodeRunOutput>> {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 2);
    try {
      const result = await runtime.runPlan({ policy: { readOnly: true } }, (plan) => codeMode.run(code, plan));
      // The host's loop turned while the program ran; then one more turn, to be sure the timer is due at least once.
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(ticks).toBeGreaterThan(0);
      return result;
    } finally {
      clearInterval(timer);
    }
  }

  async function held(code: string, expected: string | readonly string[]): Promise<ExecutionResult<CodeRunOutput>> {
    const result = await attack(code);
    const codes = typeof expected === 'string' ? [expected] : expected;
    expect(result.ok).toBe(false);
    expect(codes).toContain((result as { error: { code: string } }).error.code);
    return result;
  }

  async function returned(code: string): Promise<unknown> {
    const result = await attack(code);
    if (!result.ok) throw new Error(`expected a result, got ${result.error.code}: ${result.error.message}`);
    return result.output.result;
  }

  afterEach(async () => {
    // After every attack the pool still runs a plain program: a stuck worker was replaced.
    expect(await returned('return 1 + 1;')).toBe(2);
  });

  it('an infinite loop', () => held('while (true) {}', 'CODE_TIME_LIMIT'));
  it('an infinite loop that catches what stops it', () => held('for (;;) { try { while (true) {} } catch (e) {} }', 'CODE_TIME_LIMIT'));
  it('a loop of large allocations (the interrupt is rarely polled)', () =>
    held('const a = []; for (;;) a.push(new Array(1e5).fill(1));', ['CODE_MEMORY_LIMIT', 'CODE_TIME_LIMIT']));
  it('a string bomb', () => held('let s = "x"; for (;;) s += s;', 'CODE_MEMORY_LIMIT'));
  it('a memory bomb that catches out-of-memory and keeps allocating', () =>
    held('const keep = []; for (;;) { try { keep.push("y".repeat(1 << 20)); } catch (e) {} }', ['CODE_MEMORY_LIMIT', 'CODE_TIME_LIMIT']));
  it('deep recursion', () => held('function f(n) { return f(n + 1) + 1; } return f(0);', 'CODE_STACK_LIMIT'));
  it('deep recursion that catches the overflow and recurses again', () =>
    held('function f(n) { try { return f(n + 1); } catch (e) { return f(n + 1); } } return f(0);', ['CODE_STACK_LIMIT', 'CODE_TIME_LIMIT']));
  it('JSON.parse of deep nesting', () => held('return JSON.parse("[".repeat(200000) + "]".repeat(200000));', 'CODE_STACK_LIMIT'));
  it('a flood of promise jobs', () =>
    held('const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {});', ['CODE_TIME_LIMIT', 'CODE_MEMORY_LIMIT']));
  it('a flood of concurrent tool calls', () =>
    held('await Promise.all(Array.from({ length: 1000 }, () => tools.util_echo({})));', ['CODE_CONCURRENCY_LIMIT', 'CODE_CALL_LIMIT']));
  it('more slow calls at once than the concurrency limit', () =>
    held('await Promise.all(Array.from({ length: 20 }, () => tools.util_slow({})));', 'CODE_CONCURRENCY_LIMIT'));
  it('more tool calls than the limit, one after another', () => held('for (let i = 0; i < 1000; i++) await tools.util_echo({ i });', 'CODE_CALL_LIMIT'));
  it('search flood', () => held('for (;;) await search("x");', 'CODE_CALL_LIMIT'));
  it('a program that never settles', () => held('await new Promise(() => {});', 'CODE_NEVER_SETTLED'));
  it('a program that returns a promise it never settles, after a call', () =>
    held('await tools.util_echo({}); return new Promise(() => {});', 'CODE_NEVER_SETTLED'));

  it('prototype tampering stays in the sandbox: host objects are untouched and the run still answers', async () => {
    const result = await returned(`
      Object.prototype.then = function (resolve) { resolve('hijacked'); };
      Object.prototype.toJSON = function () { return 'hijacked'; };
      Array.prototype.push = function () { throw new Error('no'); };
      JSON.parse = () => 'hijacked';
      Promise.prototype.then = function () {};
      delete Object.prototype.then; delete Object.prototype.toJSON;
      return 'done';`);
    expect(result).toBe('done');
    expect(({} as { then?: unknown }).then).toBeUndefined();
    expect(JSON.parse('1')).toBe(1);
    expect(typeof Promise.prototype.then).toBe('function');
  });

  it('tampering aimed at the tools object and the API', async () => {
    const result = await returned(`
      'use strict';
      const tries = [];
      try { tools.util_echo = () => 'forged'; } catch (e) { tries.push('assign'); }
      try { Object.defineProperty(tools, 'notes_write', { value: () => 'forged' }); } catch (e) { tries.push('define'); }
      try { globalThis.tools = {}; } catch (e) { tries.push('global'); }
      try { globalThis.search = null; } catch (e) { tries.push('search'); }
      try { Math.random = () => 4; } catch (e) { tries.push('random'); }
      return [tries, await tools.util_echo({ a: 1 }), typeof tools.notes_write, typeof search, Math.random() < 1];`);
    expect(result).toEqual([['assign', 'define', 'global', 'search', 'random'], { a: 1 }, 'function', 'function', true]);
  });

  it('forged call ids: the host functions are not reachable from the program', async () => {
    const result = await returned(`
      const names = Object.getOwnPropertyNames(globalThis).filter((n) => /host|call|post|__/i.test(n));
      return [names, typeof hostCall, typeof postMessage, typeof globalThis.__host_call];`);
    expect(result).toEqual([[], 'undefined', 'undefined', 'undefined']);
  });

  it('calling a tool outside the plan: not in the API, not found by describe, never run', async () => {
    const result = await returned(`
      const out = [typeof tools.secret_read, Object.keys(tools).includes('secret_read')];
      try { await describe('secret.read'); } catch (e) { out.push(e.code); }
      out.push((await search('secret read')).map((hit) => hit.name).includes('secret.read'));
      return out;`);
    expect(result).toEqual(['undefined', false, 'TOOL_NOT_FOUND', false]);
  });

  it('calling a tool the plan refuses, again and again', async () => {
    const result = await returned(`
      const codes = [];
      for (let i = 0; i < 5; i++) { try { await tools.notes_write({}); } catch (e) { codes.push(e.code); } }
      return codes;`);
    expect(result).toEqual(Array(5).fill('TOOL_ACCESS_DENIED'));
  });

  it('reading the host environment: no process, require, import, or std/os modules', async () => {
    const result = await returned(`
      let imported = 'no error';
      try { await import('fs'); } catch (e) { imported = 'refused'; }
      return [typeof process, typeof require, typeof std, typeof os, typeof fetch, typeof setTimeout, typeof performance, imported];`);
    expect(result).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'refused']);
  });

  it('reaching the host through constructors', async () => {
    const result = await returned(`
      const F = (() => {}).constructor;
      const g = F('return this')();
      let reached = 'nothing';
      try { reached = typeof F('return process')(); } catch (e) { reached = e.name; }
      return [g === globalThis, reached, typeof tools.util_echo.constructor('return process')];`);
    expect(result).toEqual([true, 'ReferenceError', 'function']);
  });

  it('escaping through an error whose getter never returns', () =>
    held('throw { get message() { while (true) {} }, get name() { return "x"; } };', 'CODE_TIME_LIMIT'));

  it('escaping through a getter in a tool input', () => held('await tools.util_echo({ get x() { while (true) {} } });', 'CODE_TIME_LIMIT'));

  it('escaping through toJSON of the result', () => held('return { toJSON() { for (;;) {} } };', 'CODE_TIME_LIMIT'));

  it('an error with a huge message is capped, and names what was thrown', async () => {
    const result = await held('throw new Error("z".repeat(1000000));', 'CODE_PROGRAM_FAILED');
    if (result.ok) throw new Error('expected a failed run');
    expect(String((result.error as CodeModeError).thrown?.['message']).length).toBeLessThanOrEqual(4000);
  });

  it('a huge result', () => held('return "x".repeat(100000);', 'CODE_OUTPUT_LIMIT'));
  it('a flood of logs', () => held('for (;;) console.log("x".repeat(1000));', 'CODE_OUTPUT_LIMIT'));
  it('a result that is not JSON', () => held('const a = {}; a.a = a; return a;', 'CODE_RESULT_INVALID'));
  it('a program that does not parse', () => held('return )(;', 'CODE_SYNTAX_ERROR'));

  it("the clock and randomness are the host's: the real clock is not reachable", async () => {
    const result = (await returned(`
      const D = new Date().constructor;
      return [Date.now() === new Date().getTime(), new D().getTime() === Date.now(), D === Date, typeof Date() === 'string', Math.random() !== Math.random()];`)) as boolean[];
    expect(result).toEqual([true, true, true, true, true]);
  });

  it('a runaway program does not hold up another program', async () => {
    const [runaway, plain] = await Promise.all([attack('while (true) {}'), attack('return await tools.util_echo({ ok: 1 });')]);
    expect(runaway).toMatchObject({ ok: false, error: { code: 'CODE_TIME_LIMIT' } });
    expect(plain).toMatchObject({ ok: true, output: { result: { ok: 1 } } });
  });

  it('a cancelled plan stops its program', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 2);
    try {
      const plan = runtime.createPlan({});
      const running = codeMode.run('while (true) {}', plan).catch((error: unknown) => error);
      setTimeout(() => plan.cancellationToken.cancel('stop'), 50);
      const outcome = await running;
      expect(outcome).toMatchObject({ code: 'TOOL_CANCELLED' });
      await runtime.endPlan(plan);
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
    }
  });
});
