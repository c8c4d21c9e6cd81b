import { ToolSchemaValidationError } from '@ca/schema';
import { CancellationToken, ToolCancelledError, type PlanContext, type ToolExecutionContext } from '@ca/tool-context';
import { InMemoryToolSource, RecordingLogger, TestTool } from './testing/index';
import {
  ToolAccessDeniedError,
  ToolActivationError,
  ToolCheckpointRequiredError,
  ToolExecutionError,
  ToolInvalidArgumentError,
  ToolNotActivatedError,
  ToolNotFoundError,
  ToolPlanEndedError,
  ToolRegistrationError,
  ToolRuntime,
  type ToolRuntimeOptions,
} from './index';

const objectSchema = {
  type: 'object',
  properties: { text: { type: 'string' } },
  required: ['text'],
  additionalProperties: false,
} as const;

function setup(tools: TestTool[], options: ToolRuntimeOptions = {}) {
  const logger = new RecordingLogger();
  const source = new InMemoryToolSource(tools);
  const runtime = new ToolRuntime({ sources: [source], logger, options });
  return { runtime, logger, source };
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; trace?: unknown }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the promise to reject');
}

describe('ToolRuntime.execute — the seven steps', () => {
  let ctx: PlanContext;

  it('runs a tool and records one successful trace with the output size in UTF-8 bytes', async () => {
    const echo = new TestTool({ name: 'echo', inputSchema: objectSchema, outputSchema: objectSchema });
    const { runtime } = setup([echo]);
    ctx = runtime.createPlan({ planId: 'plan-ok' });
    const result = await runtime.execute('echo', { text: 'héllo' }, ctx);
    expect(result).toMatchObject({ ok: true, output: { text: 'héllo' }, toolName: 'echo' });
    expect(ctx.traces).toHaveLength(1);
    const trace = ctx.traces[0]!;
    expect(trace).toMatchObject({ planId: 'plan-ok', toolName: 'echo', success: true, executionId: result.executionId });
    expect(trace.resultSizeBytes).toBe(Buffer.byteLength(JSON.stringify({ text: 'héllo' }), 'utf8'));
    expect(new Date(trace.startedAt).toISOString()).toBe(trace.startedAt);
    expect(Date.parse(trace.endedAt)).toBeGreaterThanOrEqual(Date.parse(trace.startedAt));
    expect(trace.durationMs).toBeGreaterThanOrEqual(0);
    expect(result.trace).toBe(trace);
    expect(echo.count('activate')).toBe(1);
  });

  it('1. a cancelled plan throws ToolCancelledError before anything, with one failed trace', async () => {
    const tool = new TestTool({ name: 'echo' });
    const { runtime } = setup([tool]);
    ctx = runtime.createPlan({ planId: 'plan-cancelled' });
    ctx.cancellationToken.cancel('user pressed stop');
    const error = await rejection(runtime.execute('echo', {}, ctx));
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect((error as ToolCancelledError).reason).toBe('user pressed stop');
    expect(tool.events).toEqual([]);
    expect(ctx.traces).toHaveLength(1);
    expect(ctx.traces[0]).toMatchObject({ success: false, error: { code: 'TOOL_CANCELLED' } });
    expect(error.trace).toBe(ctx.traces[0]);
  });

  it('2. a failed activation throws ToolActivationError with the cause, and is not cached', async () => {
    let attempts = 0;
    const tool = new TestTool({
      name: 'flaky',
      activate: () => {
        attempts++;
        if (attempts === 1) throw new Error('session refused');
      },
    });
    const { runtime } = setup([tool]);
    ctx = runtime.createPlan({ planId: 'plan-activation' });
    const error = await rejection(runtime.execute('flaky', {}, ctx));
    expect(ToolActivationError.isInstance(error)).toBe(true);
    expect(error.message).toContain("'flaky'");
    expect(error.message).toContain("'plan-activation'");
    expect((error.cause as Error).message).toBe('session refused');
    expect(tool.count('execute')).toBe(0);
    expect(runtime.isActive('flaky', ctx)).toBe(false);
    await expect(runtime.execute('flaky', {}, ctx)).resolves.toMatchObject({ ok: true });
    expect(attempts).toBe(2);
    expect(ctx.traces.map((trace) => trace.success)).toEqual([false, true]);
    const report = await runtime.endPlan(ctx);
    expect(report.deactivated).toEqual(['flaky']);
    expect(tool.count('deactivate')).toBe(1);
  });

  it('3a. a read-only plan refuses a writing tool with ToolAccessDeniedError; the tool never runs', async () => {
    const writer = new TestTool({ name: 'writer', capability: { writes: true, checkpointable: true } });
    const { runtime } = setup([writer]);
    ctx = runtime.createPlan({ planId: 'plan-ro', policy: { readOnly: true } });
    const error = await rejection(runtime.execute('writer', {}, ctx));
    expect(ToolAccessDeniedError.isInstance(error)).toBe(true);
    expect(error.code).toBe('TOOL_ACCESS_DENIED');
    expect(error.message).toMatch(/read-only/);
    expect(writer.count('execute')).toBe(0);
    expect(ctx.traces).toHaveLength(1);
    expect(ctx.traces[0]!.error).toMatchObject({ name: 'ToolAccessDeniedError', code: 'TOOL_ACCESS_DENIED' });
  });

  it('3b. a checkpoint-required plan refuses a non-checkpointable tool', async () => {
    const tool = new TestTool({ name: 'shell', capability: { writes: true, checkpointable: false } });
    const reader = new TestTool({ name: 'reader', capability: { writes: false, checkpointable: true } });
    const { runtime } = setup([tool, reader]);
    ctx = runtime.createPlan({ policy: { requireCheckpoint: true } });
    const error = await rejection(runtime.execute('shell', {}, ctx));
    expect(ToolCheckpointRequiredError.isInstance(error)).toBe(true);
    expect(tool.count('execute')).toBe(0);
    await expect(runtime.execute('reader', { a: 1 }, ctx)).resolves.toMatchObject({ ok: true });
  });

  it('3c. a tool that declares nothing is treated as writing and not checkpointable', async () => {
    const tool = new TestTool({ name: 'vague', capability: {} });
    const { runtime } = setup([tool]);
    const readOnly = runtime.createPlan({ policy: { readOnly: true } });
    await expect(runtime.execute('vague', {}, readOnly)).rejects.toMatchObject({ code: 'TOOL_ACCESS_DENIED' });
  });

  it('4. invalid input returns a failed result with every issue, and the tool is not called', async () => {
    const tool = new TestTool({ name: 'strict-in', inputSchema: objectSchema });
    const { runtime } = setup([tool]);
    ctx = runtime.createPlan({ planId: 'plan-input' });
    const result = await runtime.execute('strict-in', { text: 5, extra: true }, ctx);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(ToolSchemaValidationError.isInstance(result.error)).toBe(true);
    const error = result.error as ToolSchemaValidationError;
    expect(error.direction).toBe('input');
    expect(error.issues.map((issue) => issue.keyword).sort()).toEqual(['additionalProperties', 'type']);
    expect(error.issues.find((issue) => issue.keyword === 'type')!.instancePath).toBe('/text');
    expect(tool.count('execute')).toBe(0);
    expect(ctx.traces).toHaveLength(1);
    expect(ctx.traces[0]).toMatchObject({ success: false, error: { code: 'TOOL_SCHEMA_VALIDATION_FAILED' } });
  });

  it('5a. a tool that throws gives ToolExecutionError with the cause kept', async () => {
    const boom = new Error('disk on fire');
    const tool = new TestTool({ name: 'boom', execute: () => Promise.reject(boom) });
    const { runtime } = setup([tool]);
    ctx = runtime.createPlan({ planId: 'plan-throw' });
    const error = await rejection(runtime.execute('boom', {}, ctx));
    expect(ToolExecutionError.isInstance(error)).toBe(true);
    expect(error.cause).toBe(boom);
    expect(error.message).toContain('disk on fire');
    expect(ctx.traces).toHaveLength(1);
    expect(ctx.traces[0]).toMatchObject({ success: false, error: { code: 'TOOL_EXECUTION_FAILED' } });
  });

  it('5b. a tool that throws synchronously or rejects with a non-Error is wrapped too', async () => {
    const sync = new TestTool({ name: 'sync-throw', wrapOutput: false });
    (sync as unknown as { execute: () => never }).execute = () => {
      throw 'plain string';
    };
    const weird = new TestTool({ name: 'weird', execute: () => Promise.reject({ reason: 42 }) });
    const { runtime } = setup([sync, weird]);
    ctx = runtime.createPlan();
    await expect(runtime.execute('sync-throw', {}, ctx)).rejects.toMatchObject({ code: 'TOOL_EXECUTION_FAILED', cause: 'plain string' });
    await expect(runtime.execute('weird', {}, ctx)).rejects.toMatchObject({ code: 'TOOL_EXECUTION_FAILED', message: expect.stringContaining('42') });
    expect(ctx.traces).toHaveLength(2);
  });

  it('5c. a tool that reports a failure returns it as a failed result', async () => {
    const tool = new TestTool({ name: 'reports', execute: () => ({ ok: false as const, error: new Error('not today') }) });
    const { runtime } = setup([tool]);
    ctx = runtime.createPlan();
    const result = await runtime.execute('reports', {}, ctx);
    expect(result).toMatchObject({ ok: false });
    expect(ctx.traces[0]).toMatchObject({ success: false, error: { message: 'not today' } });
  });

  it('5d. a malformed result or an unserialisable output is a clear failure', async () => {
    const malformed = new TestTool({ name: 'malformed', wrapOutput: false, execute: () => 'just a string' as never });
    const circular = new TestTool({
      name: 'circular',
      execute: () => {
        const value: Record<string, unknown> = {};
        value.self = value;
        return value;
      },
    });
    const { runtime } = setup([malformed, circular]);
    ctx = runtime.createPlan();
    const first = await runtime.execute('malformed', {}, ctx);
    expect(first.ok).toBe(false);
    expect(!first.ok && first.error.message).toMatch(/instead of a ToolResult/);
    const second = await runtime.execute('circular', {}, ctx);
    expect(!second.ok && second.error.message).toMatch(/cannot be serialised to JSON/);
    expect(ctx.traces.map((trace) => trace.success)).toEqual([false, false]);
  });

  it('5e. cancellation during the call surfaces as ToolCancelledError, even if the tool ignores it', async () => {
    let release!: () => void;
    const stubborn = new TestTool({ name: 'stubborn', execute: () => new Promise<string>((resolve) => (release = () => resolve('late'))) });
    const { runtime } = setup([stubborn]);
    ctx = runtime.createPlan({ planId: 'plan-cancel-mid' });
    const running = runtime.execute('stubborn', {}, ctx);
    await new Promise((resolve) => setImmediate(resolve));
    ctx.cancellationToken.cancel('stop now');
    const error = await rejection(running);
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect((error as ToolCancelledError).reason).toBe('stop now');
    expect(ctx.traces).toHaveLength(1);
    const ending = runtime.endPlan(ctx, { graceMs: 1_000 });
    release();
    const report = await ending;
    expect(report).toMatchObject({ deactivated: ['stubborn'], abandonedExecutions: 0 });
  });

  it('5e2. changes a tool reports after it was cancelled are still recorded, so they can be rolled back', async () => {
    let finish!: () => void;
    const writer = new TestTool({
      name: 'late-writer',
      capability: { writes: true, checkpointable: true },
      execute: () => new Promise<string>((resolve) => (finish = () => resolve('partly done'))),
      changes: [{ kind: 'create', target: 'file:///tmp/partial.txt' }],
    });
    const { runtime } = setup([writer]);
    ctx = runtime.createPlan();
    const running = runtime.execute('late-writer', {}, ctx);
    await new Promise((resolve) => setImmediate(resolve));
    ctx.cancellationToken.cancel('stop');
    const error = await rejection(running);
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect(ctx.changes).toHaveLength(0);
    finish();
    await runtime.endPlan(ctx);
    expect(ctx.changes.map((change) => [change.kind, change.toolName, change.executionId])).toEqual([['create', 'late-writer', ctx.traces[0]!.executionId]]);
  });

  it('5f. the tool sees the per-execution context and the plan signal', async () => {
    let seen: ToolExecutionContext | undefined;
    const tool = new TestTool({
      name: 'inspect',
      execute: (_input, executionCtx) => {
        seen = executionCtx;
        return 'ok';
      },
    });
    const { runtime } = setup([tool]);
    ctx = runtime.createPlan({ planId: 'plan-view' });
    const result = await runtime.execute('inspect', {}, ctx);
    expect(seen?.planId).toBe('plan-view');
    expect(seen?.toolName).toBe('inspect');
    expect(seen?.executionId).toBe(result.executionId);
    expect(seen?.cancellationToken.signal).toBeInstanceOf(AbortSignal);
    expect(seen?.signal).toBe(seen?.cancellationToken.signal);
    // The tool's view cannot record traces, record changes in another's name, or make views.
    const view = seen as unknown as Record<string, unknown>;
    expect([view['traces'], view['recordTrace'], view['recordChange'], view['forExecution']]).toEqual([undefined, undefined, undefined, undefined]);
    // Nor can it run other tools through the runtime.
    await expect(runtime.execute('inspect', {}, seen as never)).rejects.toMatchObject({
      code: 'TOOL_INVALID_ARGUMENT',
      message: expect.stringContaining("A tool's view of its plan cannot run other tools"),
    });
  });

  it('5g. a change the tool reports as it goes is kept, attributed, even when the tool then throws', async () => {
    const tool = new TestTool({
      name: 'reporting-writer',
      capability: { writes: true, checkpointable: true },
      execute: (_input, executionCtx) => {
        executionCtx.reportChange({ kind: 'create', target: '/tmp/reported', undo: { type: 'absent' } });
        throw new Error('disk full after the first file');
      },
    });
    const { runtime } = setup([tool]);
    ctx = runtime.createPlan({ planId: 'plan-report' });
    const error = await runtime.execute('reporting-writer', {}, ctx).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'TOOL_EXECUTION_FAILED' });
    expect(ctx.changes.map(({ kind, target, toolName, executionId }) => ({ kind, target, toolName, executionId }))).toEqual([
      { kind: 'create', target: '/tmp/reported', toolName: 'reporting-writer', executionId: ctx.traces[0]!.executionId },
    ]);
  });

  it('6a. an output that does not match is a warning through the logger and the result is returned', async () => {
    const tool = new TestTool({ name: 'loose-out', outputSchema: objectSchema, execute: () => ({ text: 1 }) });
    const { runtime, logger } = setup([tool]);
    ctx = runtime.createPlan({ planId: 'plan-out' });
    const result = await runtime.execute('loose-out', {}, ctx);
    expect(result).toMatchObject({ ok: true, output: { text: 1 } });
    const warnings = logger.at('warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain("'loose-out'");
    expect(warnings[0]!.fields).toMatchObject({ toolName: 'loose-out', planId: 'plan-out', code: 'TOOL_SCHEMA_VALIDATION_FAILED' });
    expect(ctx.traces[0]!.success).toBe(true);
  });

  it('6b. with strict output the mismatch fails the result', async () => {
    const tool = new TestTool({ name: 'strict-out', outputSchema: objectSchema, strictOutput: true, execute: () => ({ text: 1 }) });
    const runtimeWide = new TestTool({ name: 'strict-by-runtime', outputSchema: objectSchema, execute: () => ({}) });
    const { runtime, logger } = setup([tool]);
    ctx = runtime.createPlan();
    const result = await runtime.execute('strict-out', {}, ctx);
    expect(result.ok).toBe(false);
    expect(!result.ok && (result.error as ToolSchemaValidationError).direction).toBe('output');
    expect(logger.at('warn')).toHaveLength(0);
    const strictRuntime = setup([runtimeWide], { strictOutput: true }).runtime;
    const other = strictRuntime.createPlan();
    await expect(strictRuntime.execute('strict-by-runtime', {}, other)).resolves.toMatchObject({ ok: false });
  });

  it('7. changes are recorded into the context, attributed to the tool and the execution', async () => {
    const tool = new TestTool({
      name: 'changer',
      capability: { writes: true, checkpointable: true },
      changes: [
        { kind: 'create', target: 'file:///tmp/a.txt', summary: 'created a' },
        { kind: 'modify', target: 'file:///tmp/b.txt' },
      ],
    });
    const { runtime } = setup([tool]);
    ctx = runtime.createPlan();
    const result = await runtime.execute('changer', {}, ctx);
    expect(ctx.changes).toHaveLength(2);
    expect(ctx.changes.map((change) => change.kind)).toEqual(['create', 'modify']);
    for (const change of ctx.changes) {
      expect(change.toolName).toBe('changer');
      expect(change.executionId).toBe(result.executionId);
      expect(Number.isNaN(Date.parse(change.at))).toBe(false);
    }
  });

  it('refuses unknown tools, bad contexts and ended plans with clear errors and a trace', async () => {
    const tool = new TestTool({ name: 'mcp.everything.echo' });
    const { runtime } = setup([tool]);
    ctx = runtime.createPlan({ planId: 'plan-errors' });
    const notFound = await rejection(runtime.execute('echo', {}, ctx));
    expect(ToolNotFoundError.isInstance(notFound)).toBe(true);
    expect(notFound.message).toContain("Did you mean 'mcp.everything.echo'");
    expect(ctx.traces).toHaveLength(1);
    await expect(runtime.execute('echo', {}, undefined as never)).rejects.toBeInstanceOf(ToolInvalidArgumentError);
    await expect(runtime.execute(42 as never, {}, ctx)).rejects.toMatchObject({ code: 'TOOL_INVALID_ARGUMENT' });
    await runtime.execute('mcp.everything.echo', {}, ctx);
    await runtime.endPlan(ctx);
    const ended = await rejection(runtime.execute('mcp.everything.echo', {}, ctx));
    expect(ToolPlanEndedError.isInstance(ended)).toBe(true);
    expect(ended.message).toContain("'plan-errors'");
    expect(tool.count('activate')).toBe(1);
    expect(tool.count('deactivate')).toBe(1);
  });

  it('with autoActivate false, an inactive tool throws ToolNotActivatedError until activated', async () => {
    const tool = new TestTool({ name: 'manual' });
    const { runtime } = setup([tool], { autoActivate: false });
    ctx = runtime.createPlan();
    await expect(runtime.execute('manual', {}, ctx)).rejects.toBeInstanceOf(ToolNotActivatedError);
    await runtime.activate('manual', ctx);
    await expect(runtime.execute('manual', { a: 1 }, ctx)).resolves.toMatchObject({ ok: true, output: { a: 1 } });
    expect(tool.count('activate')).toBe(1);
  });
});

describe('ToolRuntime with hostile tools', () => {
  function hostileError(): Error {
    const error = new Error('x');
    Object.defineProperty(error, 'message', {
      get() {
        throw new Error('boom');
      },
    });
    return error;
  }
  const hostileProxy = () =>
    new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
      },
    );

  it('wraps a thrown value whose getters or traps throw, and still records the trace', async () => {
    const getter = new TestTool({ name: 'getter', execute: () => Promise.reject(hostileError()) });
    const proxy = new TestTool({ name: 'proxy', execute: () => Promise.reject(hostileProxy()) });
    const { runtime } = setup([getter, proxy]);
    const ctx = runtime.createPlan();
    await expect(runtime.execute('getter', {}, ctx)).rejects.toMatchObject({ code: 'TOOL_EXECUTION_FAILED' });
    await expect(runtime.execute('proxy', {}, ctx)).rejects.toMatchObject({ code: 'TOOL_EXECUTION_FAILED' });
    expect(ctx.traces.map((trace) => trace.error?.code)).toEqual(['TOOL_EXECUTION_FAILED', 'TOOL_EXECUTION_FAILED']);
  });

  it('reports a hostile activation failure as ToolActivationError and a hostile deactivation failure without throwing', async () => {
    const activation = new TestTool({ name: 'bad-activate', activate: () => Promise.reject(hostileError()) });
    const deactivation = new TestTool({ name: 'bad-deactivate', deactivate: () => Promise.reject(hostileProxy()) });
    const { runtime } = setup([activation, deactivation]);
    const ctx = runtime.createPlan();
    await expect(runtime.execute('bad-activate', {}, ctx)).rejects.toMatchObject({ code: 'TOOL_ACTIVATION_FAILED' });
    await runtime.execute('bad-deactivate', {}, ctx);
    const report = await runtime.endPlan(ctx);
    expect(report.failures.map((failure) => failure.code)).toEqual(['TOOL_DEACTIVATION_FAILED']);
  });

  it('answers a cancelled caller at once even when the activation ignores cancellation', async () => {
    let finishActivation!: () => void;
    const slowStart = new TestTool({ name: 'slow-start', activate: () => new Promise<void>((resolve) => (finishActivation = resolve)) });
    const { runtime } = setup([slowStart], { endPlanGraceMs: 5 });
    const ctx = runtime.createPlan();
    const running = runtime.execute('slow-start', {}, ctx);
    await new Promise((resolve) => setImmediate(resolve));
    ctx.cancellationToken.cancel('user stop');
    await expect(running).rejects.toMatchObject({ code: 'TOOL_CANCELLED', reason: 'user stop' });
    expect(slowStart.count('execute')).toBe(0);
    await runtime.endPlan(ctx);
    finishActivation();
    await new Promise((resolve) => setImmediate(resolve));
    expect(slowStart.count('deactivate')).toBe(1);
  });
});

describe('ToolRuntime timeouts', () => {
  it('a per-tool timeout cancels the execution with the reason, through a child token', async () => {
    let sawAbort = false;
    const slow = new TestTool({
      name: 'slow',
      timeoutMs: 20,
      execute: (_input, ctx) =>
        new Promise((resolve) => {
          ctx.cancellationToken.signal.addEventListener('abort', () => {
            sawAbort = true;
            resolve('aborted');
          });
        }),
    });
    const { runtime } = setup([slow]);
    const ctx = runtime.createPlan();
    const error = await rejection(runtime.execute('slow', {}, ctx));
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect((error as ToolCancelledError).reason).toBe('timed out after 20 ms');
    // A per-execution deadline is not the plan's cancellation: the message says so.
    expect((error as ToolCancelledError).message).toMatch(/timed out after 20 ms\. Raise the timeout/);
    expect((error as ToolCancelledError).message).not.toMatch(/start a new plan/);
    expect(sawAbort).toBe(true);
    expect(ctx.cancellationToken.isCancelled).toBe(false);
    await expect(runtime.execute('slow', {}, ctx, { timeoutMs: 5 })).rejects.toMatchObject({
      reason: 'timed out after 5 ms',
    });
  });

  it('a runtime default timeout applies when the descriptor sets none', async () => {
    const hang = new TestTool({ name: 'hang', execute: () => new Promise(() => undefined) });
    const { runtime } = setup([hang], { defaultTimeoutMs: 10, endPlanGraceMs: 10 });
    const ctx = runtime.createPlan();
    await expect(runtime.execute('hang', {}, ctx)).rejects.toMatchObject({ code: 'TOOL_CANCELLED' });
    const report = await runtime.endPlan(ctx);
    expect(report.abandonedExecutions).toBe(1);
    expect(report.deactivated).toEqual(['hang']);
  });

  it('a plan timeout cancels every execution of the plan', async () => {
    const wait = new TestTool({
      name: 'wait',
      execute: (_input, ctx) => new Promise((_resolve, reject) => ctx.cancellationToken.onCancel((reason) => reject(new Error(reason)))),
    });
    const { runtime } = setup([wait]);
    const ctx = runtime.createPlan({ timeoutMs: 15 });
    const results = await Promise.allSettled([runtime.execute('wait', {}, ctx), runtime.execute('wait', {}, ctx)]);
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 'TOOL_CANCELLED', reason: 'plan timed out after 15 ms' });
    }
    expect(ctx.cancellationToken.isCancelled).toBe(true);
    await runtime.endPlan(ctx);
  });

  it('refuses invalid timeouts with a clear error', () => {
    expect(() => new ToolRuntime({ options: { defaultTimeoutMs: -1 } })).toThrow(/defaultTimeoutMs must be a positive number/);
    const runtime = new ToolRuntime();
    expect(() => runtime.createPlan({ timeoutMs: Number.NaN })).toThrow(ToolInvalidArgumentError);
  });
});

describe('ToolRuntime.discover', () => {
  it('lists every source, sorted, and refuses duplicate names across sources', async () => {
    const a = new InMemoryToolSource([new TestTool({ name: 'b.tool' }), new TestTool({ name: 'a.tool' })], { id: 'first' });
    const runtime = new ToolRuntime({ sources: [a], logger: new RecordingLogger() });
    const result = await runtime.discover();
    expect(result.tools.map((tool) => tool.name)).toEqual(['a.tool', 'b.tool']);

    const b = new InMemoryToolSource([new TestTool({ name: 'a.tool' })], { id: 'second' });
    const clash = new ToolRuntime({ sources: [a, b], logger: new RecordingLogger() });
    const error = await rejection(clash.discover());
    expect(ToolRegistrationError.isInstance(error)).toBe(true);
    expect(error.message).toContain("'a.tool' (from 'first' and 'second')");
  });

  it('reports a tool whose schema cannot be compiled as unavailable and keeps the others', async () => {
    const broken = new TestTool({ name: 'broken', inputSchema: { type: 'strnig' } });
    const good = new TestTool({ name: 'good' });
    const { runtime } = setup([broken, good]);
    const result = await runtime.discover();
    expect(result.tools.map((tool) => tool.name)).toEqual(['good']);
    expect(result.unavailable).toHaveLength(1);
    expect(result.unavailable[0]).toMatchObject({ name: 'broken' });
    const ctx = runtime.createPlan();
    await expect(runtime.execute('broken', {}, ctx)).rejects.toMatchObject({ code: 'TOOL_REGISTRATION_FAILED' });
    await expect(runtime.execute('good', {}, ctx)).resolves.toMatchObject({ ok: true });
  });

  it('reports invalid names and a failing source without losing the other sources', async () => {
    const failing = new InMemoryToolSource([], { id: 'down' });
    failing.discover = () => Promise.reject(new Error('server exited with code 1'));
    const badName = new InMemoryToolSource([new TestTool({ name: 'has space' })], { id: 'odd' });
    const fine = new InMemoryToolSource([new TestTool({ name: 'fine' })], { id: 'fine' });
    const runtime = new ToolRuntime({ sources: [failing, badName, fine], logger: new RecordingLogger() });
    const result = await runtime.discover();
    expect(result.tools.map((tool) => tool.name)).toEqual(['fine']);
    expect(result.sourceErrors).toEqual([{ sourceId: 'down', error: expect.objectContaining({ message: 'server exited with code 1' }) }]);
    expect(result.unavailable[0]!.reason).toMatch(/name 'has space' is not valid/);
  });

  it('caches discovery and refreshes when a source reports a change', async () => {
    const source = new InMemoryToolSource([new TestTool({ name: 'one' })]);
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    await runtime.listTools();
    await runtime.listTools();
    expect(source.discoverCount).toBe(1);
    source.add(new TestTool({ name: 'two' }));
    expect((await runtime.listTools()).map((tool) => tool.name)).toEqual(['one', 'two']);
    expect(source.discoverCount).toBe(2);
    await runtime.discover({ refresh: true });
    expect(source.discoverCount).toBe(3);
    await runtime.dispose();
  });

  it('describes a tool with its normalised capability', async () => {
    const { runtime } = setup([new TestTool({ name: 'desc', capability: { writes: false } })]);
    await expect(runtime.describe('desc')).resolves.toMatchObject({
      name: 'desc',
      capability: { writes: false, checkpointable: true, destructive: false },
    });
    await expect(runtime.describe('nope')).rejects.toBeInstanceOf(ToolNotFoundError);
  });

  it('rejects a source that is not a ToolSource at construction', () => {
    expect(() => new ToolRuntime({ sources: [{} as never] })).toThrow(/discover\(\) and get\(\)/);
  });
});

describe('ToolRuntime.runPlan', () => {
  it('always ends the plan, and cancels it first when fn throws', async () => {
    const tool = new TestTool({
      name: 't',
      execute: (_input, ctx) => new Promise((_resolve, reject) => ctx.cancellationToken.onCancel(() => reject(new Error('stopped')))),
    });
    const { runtime } = setup([tool]);
    let planCtx: PlanContext | undefined;
    let leftRunning: Promise<unknown> | undefined;
    const reports: unknown[] = [];
    await expect(
      runtime.runPlan({ planId: 'run-fail', onEnd: (report) => reports.push(report) }, async (ctx, rt) => {
        planCtx = ctx;
        leftRunning = rt.execute('t', {}, ctx).catch((error: unknown) => error);
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error('step 3 failed');
      }),
    ).rejects.toThrow('step 3 failed');
    expect(planCtx!.cancellationToken.isCancelled).toBe(true);
    await expect(leftRunning).resolves.toMatchObject({ code: 'TOOL_CANCELLED' });
    expect(tool.count('deactivate')).toBe(1);
    expect(reports).toEqual([expect.objectContaining({ planId: 'run-fail', deactivated: ['t'] })]);
  });

  it('returns what fn returns and ends the plan', async () => {
    const tool = new TestTool({ name: 'x' });
    const { runtime } = setup([tool]);
    const value = await runtime.runPlan({}, async (ctx, rt) => (await rt.execute('x', { n: 1 }, ctx)).ok);
    expect(value).toBe(true);
    expect(tool.count('deactivate')).toBe(1);
    await expect(runtime.runPlan({}, undefined as never)).rejects.toBeInstanceOf(ToolInvalidArgumentError);
  });

  it('follows an outside AbortSignal', async () => {
    const controller = new AbortController();
    const { runtime } = setup([new TestTool({ name: 'x' })]);
    const ctx = runtime.createPlan({ signal: controller.signal });
    controller.abort();
    await expect(runtime.execute('x', {}, ctx)).rejects.toMatchObject({ code: 'TOOL_CANCELLED' });
    await runtime.endPlan(ctx);
    const tokenCtx = runtime.createPlan({ cancellationToken: new CancellationToken() });
    await expect(runtime.execute('x', {}, tokenCtx)).resolves.toMatchObject({ ok: true });
  });
});
