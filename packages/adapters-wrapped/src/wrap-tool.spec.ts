import { ToolSchemaValidationError } from '@ca/schema';
import { ToolCancelledError, createExecutionContext, type PlanContext, type ToolExecutionContext } from '@ca/tool-context';
import { ToolRuntime, toolFailure, type ToolInstance, type ToolResult } from '@ca/tool-lifecycle';
import { InMemoryToolSource, RecordingLogger, TestTool } from '@ca/tool-lifecycle/testing';
import { WrappedToolError, createWrappedAdapter, wrapTool, type WrapExecuteMiddleware } from './index';

const readSchema = {
  type: 'object',
  properties: {
    path: { type: 'string' },
    encoding: { type: 'string', enum: ['utf8', 'base64'] },
    limit: { type: 'integer', minimum: 1 },
  },
  required: ['path', 'encoding', 'limit'],
  additionalProperties: false,
} as const;

function readTool(options: Partial<ConstructorParameters<typeof TestTool>[0]> = {}) {
  return new TestTool({
    name: 'mcp.files.read',
    source: 'mcp',
    description: 'Reads a file.',
    capability: { writes: false, checkpointable: true, idempotent: true, openWorld: false },
    inputSchema: readSchema,
    ...options,
  });
}

function runtimeOf(...tools: ToolInstance[]) {
  return new ToolRuntime({ sources: [createWrappedAdapter({ tools })], logger: new RecordingLogger() });
}

function thrownBy(fn: () => unknown): WrappedToolError {
  try {
    fn();
  } catch (error) {
    if (WrappedToolError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a WrappedToolError');
}

const plan = (options: Parameters<typeof createExecutionContext>[0] = {}): PlanContext => createExecutionContext(options);

describe('wrapTool: identity', () => {
  it('renames, namespaces and redescribes, keeping the inner source in annotations', () => {
    const inner = readTool({ description: 'Reads.' });
    const renamed = wrapTool(inner, { name: 'files.read', description: 'Reads a workspace file.' });
    expect(renamed.descriptor).toMatchObject({
      name: 'files.read',
      description: 'Reads a workspace file.',
      source: 'wrapped',
      annotations: { wrappedSource: 'mcp', wrappedName: 'mcp.files.read' },
    });
    expect(wrapTool(inner, { namespace: 'team' }).descriptor.name).toBe('team.mcp.files.read');
    expect(wrapTool(inner, { namespace: 'team', name: 'read' }).descriptor.name).toBe('team.read');
    // Wrapping a wrapped tool keeps the original source.
    const twice = wrapTool(renamed, { namespace: 'outer' });
    expect(twice.descriptor.annotations).toMatchObject({ wrappedSource: 'mcp', wrappedName: 'files.read' });
    expect(Object.isFrozen(renamed)).toBe(true);
    expect(Object.isFrozen(renamed.descriptor)).toBe(true);
  });

  it('refuses invalid names and options with WRAP_INVALID_OPTIONS', () => {
    const inner = readTool();
    expect(thrownBy(() => wrapTool(inner, { name: 'has space' })).message).toBe(
      "Wrapper of tool 'mcp.files.read': name must be a valid tool name (1–200 letters, digits, '_', '.', ':' or '-'); got 'has space'.",
    );
    expect(thrownBy(() => wrapTool(inner, { namespace: '' })).code).toBe('WRAP_INVALID_OPTIONS');
    expect(thrownBy(() => wrapTool(inner, { namespace: 'x'.repeat(200) })).message).toMatch(
      /longer than a tool name may be \(200 characters\); choose a shorter name or namespace/,
    );
    const notATool = thrownBy(() => wrapTool({} as never));
    expect(notATool).toMatchObject({ code: 'WRAP_INVALID_OPTIONS', problem: 'not-a-tool' });
    expect(notATool.message).toMatch(/^wrapTool\(tool, options\) needs a ToolInstance .*; got an object\. Make one of a plain function with fromFunction\(\)/);
    expect(thrownBy(() => wrapTool(inner, { wrapExecute: [async (next, input, ctx) => next(input, ctx), 'x' as never] })).message).toMatch(
      /wrapExecute\[1\] must be a function \(next, input, ctx\) => Promise<ToolResult>; got 'x'\./,
    );
    const timeout = thrownBy(() => wrapTool(inner, { name: 'files.read', timeoutMs: 0 }));
    expect(timeout).toMatchObject({ code: 'WRAP_INVALID_OPTIONS', problem: 'invalid-option', toolName: 'files.read' });
    expect(timeout.message).toBe(
      "Wrapper 'files.read' of tool 'mcp.files.read': timeoutMs must be a positive number of milliseconds (at most 2147483647); got number 0.",
    );
  });
});

describe('wrapTool: capability', () => {
  it('may make a capability stricter', async () => {
    const inner = readTool();
    const stricter = wrapTool(inner, { name: 'files.read-strict', capability: { writes: true, checkpointable: false } });
    expect(stricter.descriptor.capability).toMatchObject({ writes: true, checkpointable: false, destructive: false, idempotent: true });
    const runtime = runtimeOf(stricter);
    const readOnly = runtime.createPlan({ policy: { readOnly: true } });
    await expect(runtime.execute('files.read-strict', { path: 'a', encoding: 'utf8', limit: 1 }, readOnly)).rejects.toMatchObject({
      code: 'TOOL_ACCESS_DENIED',
    });
    expect(inner.count('execute')).toBe(0);
  });

  it.each([
    [{ writes: false }, 'writes: true → false, destructive: true → false'],
    [{ checkpointable: true }, 'checkpointable: false → true'],
    [{ destructive: false }, 'destructive: true → false'],
    [{ openWorld: false }, 'openWorld: true → false'],
  ])('refuses to loosen %j with WRAP_CAPABILITY_LOOSENED', (change, detail) => {
    const writer = new TestTool({ name: 'builtin.write', source: 'builtin', capability: { writes: true } });
    const error = thrownBy(() => wrapTool(writer, { name: 'safe.write', capability: change }));
    expect(error.code).toBe('WRAP_CAPABILITY_LOOSENED');
    expect(error.toolName).toBe('safe.write');
    expect(error.message).toContain(`Wrapper 'safe.write' of tool 'builtin.write' would loosen its capability (${detail})`);
  });

  it('refuses a claim of idempotence the tool does not make, and unknown fields', () => {
    const tool = new TestTool({ name: 'custom.t', capability: { writes: false } });
    expect(thrownBy(() => wrapTool(tool, { capability: { idempotent: true } })).code).toBe('WRAP_CAPABILITY_LOOSENED');
    expect(thrownBy(() => wrapTool(tool, { capability: { readOnly: true } as never })).message).toMatch(/unknown capability field 'readOnly'/);
  });
});

describe('wrapTool: arguments and mapping', () => {
  it('removes fixed arguments from the schema, merges them over the input, and relaxes defaults', async () => {
    const inner = readTool();
    const tool = wrapTool(inner, { name: 'files.read-text', fixedArguments: { encoding: 'utf8' }, defaultArguments: { limit: 100 } });
    expect(tool.descriptor.inputSchema).toEqual({
      type: 'object',
      properties: { path: { type: 'string' }, limit: { type: 'integer', minimum: 1, default: 100 } },
      required: ['path'],
      additionalProperties: false,
    });
    // The inner tool's schema is untouched.
    expect(inner.descriptor.inputSchema).toBe(readSchema);
    const runtime = runtimeOf(tool);
    const ctx = runtime.createPlan();
    await runtime.execute('files.read-text', { path: 'a.txt' }, ctx);
    await runtime.execute('files.read-text', { path: 'b.txt', limit: 5 }, ctx);
    expect(inner.events.filter((event) => event.type === 'execute').map((event) => event.input)).toEqual([
      { path: 'a.txt', encoding: 'utf8', limit: 100 },
      { path: 'b.txt', encoding: 'utf8', limit: 5 },
    ]);
    // A model cannot set a fixed argument: the wrapper's schema refuses it.
    const refused = await runtime.execute('files.read-text', { path: 'c.txt', encoding: 'base64' }, ctx);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.error.code).toBe('TOOL_SCHEMA_VALIDATION_FAILED');
    expect(inner.count('execute')).toBe(2);
  });

  it('merges fixed arguments over the input even where the schema allows extra properties', async () => {
    const inner = new TestTool({ name: 'custom.echo', inputSchema: { type: 'object', properties: { mode: { type: 'string' } } } });
    const tool = wrapTool(inner, { name: 'echo.safe', fixedArguments: { mode: 'dry-run' } });
    await expect(tool.execute({ mode: 'for-real', other: 1 }, plan())).resolves.toEqual({ ok: true, output: { mode: 'dry-run', other: 1 } });
  });

  it('refuses fixed arguments the tool does not accept, and one argument both fixed and default', () => {
    expect(thrownBy(() => wrapTool(readTool(), { fixedArguments: { recursive: true } })).message).toMatch(
      /has 'recursive' in fixedArguments, but the tool accepts no such argument/,
    );
    expect(thrownBy(() => wrapTool(readTool(), { fixedArguments: { limit: 1 }, defaultArguments: { limit: 2 } })).message).toMatch(
      /'limit' in both fixedArguments and defaultArguments/,
    );
  });

  it('maps input and output, with a new output schema', async () => {
    const inner = readTool({ execute: (input) => ({ text: `content of ${(input as { path: string }).path}`, bytes: 10 }) });
    const tool = wrapTool(inner, {
      name: 'files.cat',
      inputSchema: { type: 'object', properties: { file: { type: 'string' } }, required: ['file'], additionalProperties: false },
      mapInput: (input: { file: string }) => ({ path: `/work/${input.file}`, encoding: 'utf8', limit: 10 }),
      mapOutput: (output: unknown, ctx) => `${(output as { text: string }).text} (${ctx.planId})`,
      outputSchema: { type: 'string' },
    });
    expect(tool.descriptor).toMatchObject({ inputSchema: { required: ['file'] }, outputSchema: { type: 'string' } });
    const runtime = runtimeOf(tool);
    const ctx = runtime.createPlan({ planId: 'plan-map' });
    await expect(runtime.execute('files.cat', { file: 'a.txt' }, ctx)).resolves.toMatchObject({ ok: true, output: 'content of /work/a.txt (plan-map)' });
  });

  it('drops the inner output schema when the output is mapped without a new one', () => {
    const inner = readTool({ outputSchema: { type: 'object' } });
    expect(wrapTool(inner, { mapOutput: () => 'x' }).descriptor.outputSchema).toBeUndefined();
    expect(wrapTool(inner, { name: 'kept' }).descriptor.outputSchema).toEqual({ type: 'object' });
  });

  it('checks the input it built against the inner tool schema, without calling the inner tool', async () => {
    const inner = readTool();
    const tool = wrapTool(inner, {
      name: 'files.broken',
      inputSchema: { type: 'object' },
      mapInput: () => ({ path: 'x', encoding: 'latin1', limit: 1 }),
    });
    const result = await tool.execute({}, plan({ planId: 'plan-bad-map' }));
    expect(result.ok).toBe(false);
    const error = (result as { error: unknown }).error;
    expect(ToolSchemaValidationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /Tool 'files.broken' \(plan 'plan-bad-map'\) built an input that tool 'mcp.files.read' does not accept.*Fix the wrapper's mapInput/,
    );
    expect(inner.count('execute')).toBe(0);
  });

  it('returns WRAP_INPUT_NOT_OBJECT when arguments cannot be merged into the input', async () => {
    const inner = new TestTool({ name: 'custom.any' });
    const tool = wrapTool(inner, { name: 'any.fixed', fixedArguments: { a: 1 } });
    const result = await tool.execute('text', plan({ planId: 'plan-text' }));
    expect(result.ok).toBe(false);
    const error = (result as unknown as { error: WrappedToolError }).error;
    expect(WrappedToolError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'WRAP_INPUT_NOT_OBJECT', toolName: 'any.fixed', planId: 'plan-text' });
    expect(error.message).toBe(
      "Tool 'any.fixed' in plan 'plan-text' got 'text' as input, but its fixed or default arguments need an object. Call it with an object.",
    );
    await expect(tool.execute(undefined, plan())).resolves.toEqual({ ok: true, output: { a: 1 } });
  });

  it('refuses a schema that does not compile at wrap time', () => {
    const error = thrownBy(() => wrapTool(readTool(), { outputSchema: { type: 'strnig' } }));
    expect(error.code).toBe('WRAP_SCHEMA_INVALID');
    expect(error.message).toMatch(/its outputSchema cannot be compiled/);
  });
});

describe('wrapTool: middleware', () => {
  const tag =
    (label: string, log: string[]): WrapExecuteMiddleware =>
    async (next, input, ctx) => {
      log.push(`${label}:in`);
      const result = await next({ ...(input as object), trail: [...((input as { trail?: string[] }).trail ?? []), label] }, ctx);
      log.push(`${label}:out`);
      return result;
    };

  it('applies an array outermost first, and wrapping a wrapped tool composes outside it', async () => {
    const log: string[] = [];
    const inner = new TestTool({ name: 'custom.echo' });
    const first = wrapTool(inner, { name: 'echo.first', wrapExecute: [tag('a', log), tag('b', log)] });
    const second = wrapTool(first, { name: 'echo.second', wrapExecute: tag('c', log) });
    const result = await second.execute({}, plan());
    expect(result).toEqual({ ok: true, output: { trail: ['c', 'a', 'b'] } });
    expect(log).toEqual(['c:in', 'a:in', 'b:in', 'b:out', 'a:out', 'c:out']);
  });

  it('can short-circuit and rewrite results; runs inside the runtime with traces', async () => {
    const inner = new TestTool({ name: 'custom.echo' });
    const cache: WrapExecuteMiddleware = async (next, input, ctx) => {
      if ((input as { cached?: boolean }).cached) return { ok: true, output: 'from cache' };
      const result: ToolResult = await next(input, ctx);
      return result.ok ? { ...result, metadata: { cache: 'miss' } } : result;
    };
    const runtime = runtimeOf(wrapTool(inner, { name: 'echo.cached', wrapExecute: cache }));
    const ctx = runtime.createPlan();
    await expect(runtime.execute('echo.cached', { cached: true }, ctx)).resolves.toMatchObject({ ok: true, output: 'from cache' });
    await expect(runtime.execute('echo.cached', { v: 1 }, ctx)).resolves.toMatchObject({ ok: true, output: { v: 1 }, metadata: { cache: 'miss' } });
    expect(inner.count('execute')).toBe(1);
    expect(ctx.traces.map((trace) => [trace.toolName, trace.success])).toEqual([
      ['echo.cached', true],
      ['echo.cached', true],
    ]);
  });
});

describe('wrapTool: retry', () => {
  const idempotent = { writes: false, idempotent: true };

  it('is refused for a tool that is not idempotent', () => {
    const error = thrownBy(() => wrapTool(new TestTool({ name: 'custom.send', capability: { writes: true } }), { retry: { attempts: 3 } }));
    expect(error.code).toBe('WRAP_RETRY_NOT_IDEMPOTENT');
    expect(error.message).toMatch(/not idempotent.*idempotent: true/);
  });

  it('validates its options', () => {
    const tool = new TestTool({ name: 'custom.get', capability: idempotent });
    expect(thrownBy(() => wrapTool(tool, { retry: { attempts: 0 } })).message).toMatch(/retry\.attempts must be an integer from 1 to 100 .*; got number 0\./);
    expect(thrownBy(() => wrapTool(tool, { retry: { attempts: 2, backoffMs: -5 } })).message).toMatch(/retry\.backoffMs/);
  });

  it('retries thrown errors up to the number of attempts, waiting between them', async () => {
    let calls = 0;
    const tool = new TestTool({
      name: 'custom.flaky',
      capability: idempotent,
      execute: () => {
        calls++;
        if (calls < 3) throw new Error(`transient ${calls}`);
        return 'ok';
      },
    });
    const waits: number[] = [];
    const wrapped = wrapTool(tool, { retry: { attempts: 3, backoffMs: (attempt) => (waits.push(attempt), 1) } });
    await expect(wrapped.execute({}, plan())).resolves.toEqual({ ok: true, output: 'ok' });
    expect(calls).toBe(3);
    expect(waits).toEqual([1, 2]);

    calls = -10;
    const exhausted = wrapTool(tool, { retry: { attempts: 2, backoffMs: 0 } });
    await expect(exhausted.execute({}, plan())).rejects.toThrow('transient -8');
    expect(calls).toBe(-8);
  });

  it('returns a failed result without retrying by default, and retries it when retryOn says so', async () => {
    let calls = 0;
    const tool = new TestTool({
      name: 'custom.status',
      capability: idempotent,
      execute: () => (++calls < 2 ? toolFailure(Object.assign(new Error('503'), { code: 'HTTP_503' })) : 'up'),
    });
    const plain = await wrapTool(tool, { retry: { attempts: 3, backoffMs: 0 } }).execute({}, plan());
    expect(plain.ok).toBe(false);
    expect(calls).toBe(1);
    calls = 0;
    const retryOn = jest.fn((failure: { result?: unknown; error: unknown }) => (failure.error as { code?: string }).code === 'HTTP_503');
    const retried = await wrapTool(tool, { retry: { attempts: 3, backoffMs: 0, retryOn } }).execute({}, plan());
    expect(retried).toEqual({ ok: true, output: 'up' });
    expect(retryOn).toHaveBeenCalledWith(expect.objectContaining({ attempt: 1, result: expect.objectContaining({ ok: false }) }));
  });

  it('never retries after cancellation, and stops backing off when the plan is cancelled', async () => {
    const ctx = plan({ planId: 'plan-backoff' });
    let calls = 0;
    const tool = new TestTool({
      name: 'custom.down',
      capability: idempotent,
      execute: () => {
        calls++;
        throw new Error('down');
      },
    });
    const wrapped = wrapTool(tool, { retry: { attempts: 5, backoffMs: 60_000 } });
    const running = wrapped.execute({}, ctx);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toBe(1);
    ctx.cancellationToken.cancel('stop now');
    const error = await running.catch((thrown: unknown) => thrown);
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'stop now', planId: 'plan-backoff' });
    expect(calls).toBe(1);

    // Already cancelled when the first attempt fails: no retry at all.
    const cancelled = plan();
    let attempts = 0;
    const cancelling = new TestTool({
      name: 'custom.cancelling',
      capability: idempotent,
      execute: () => {
        attempts++;
        cancelled.cancellationToken.cancel('gone');
        throw new Error('aborted');
      },
    });
    await expect(wrapTool(cancelling, { retry: { attempts: 3, backoffMs: 0 } }).execute({}, cancelled)).rejects.toThrow('aborted');
    expect(attempts).toBe(1);
  }, 10_000);
});

describe('wrapTool: lifecycle and deadline', () => {
  it("delegates activate and deactivate to the inner tool with the tool's own view of the plan", async () => {
    const seen: ToolExecutionContext[] = [];
    const inner = new TestTool({ name: 'custom.stateful', activate: (ctx) => void seen.push(ctx), deactivate: (ctx) => void seen.push(ctx) });
    const runtime = runtimeOf(wrapTool(inner, { namespace: 'w' }));
    await runtime.runPlan({ planId: 'plan-life' }, async (ctx) => {
      await runtime.execute('w.custom.stateful', {}, ctx);
      await runtime.execute('w.custom.stateful', {}, ctx);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ planId: 'plan-life', toolName: 'w.custom.stateful', executionId: undefined });
      expect(seen[0]).not.toBe(ctx);
    });
    expect(inner.count('activate', 'plan-life')).toBe(1);
    expect(inner.count('deactivate', 'plan-life')).toBe(1);
    expect(seen[1]).toBe(seen[0]);
    expect(wrapTool(new TestTool({ name: 'custom.stateless', stateless: true })).activate).toBeUndefined();
  });

  it('sets the deadline the runtime enforces: a slow inner tool is cancelled with a timeout reason', async () => {
    let aborted = false;
    const slow = new TestTool({
      name: 'custom.slow',
      execute: (_input, ctx) =>
        new Promise((_resolve, reject) =>
          ctx.cancellationToken.signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          }),
        ),
    });
    const tool = wrapTool(slow, { name: 'slow.limited', timeoutMs: 30 });
    expect(tool.descriptor.timeoutMs).toBe(30);
    const runtime = runtimeOf(tool);
    const ctx = runtime.createPlan();
    const error = await runtime.execute('slow.limited', {}, ctx).catch((thrown: unknown) => thrown);
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect((error as ToolCancelledError).reason).toMatch(/timed out after 30 ms/);
    expect(aborted).toBe(true);
    await runtime.endPlan(ctx);
  }, 10_000);
});

describe('wrapping a tool served by another source', () => {
  it('serves the wrapper next to the original in one runtime', async () => {
    const original = readTool({ execute: (input) => `read ${(input as { path: string }).path}` });
    const runtime = new ToolRuntime({
      sources: [
        new InMemoryToolSource([original], { kind: 'mcp', id: 'mcp:files' }),
        createWrappedAdapter({ tools: [wrapTool(original, { namespace: 'team', fixedArguments: { encoding: 'utf8', limit: 10 } })] }),
      ],
      logger: new RecordingLogger(),
    });
    expect((await runtime.listTools()).map((descriptor) => [descriptor.name, descriptor.source])).toEqual([
      ['mcp.files.read', 'mcp'],
      ['team.mcp.files.read', 'wrapped'],
    ]);
    const ctx = runtime.createPlan();
    await expect(runtime.execute('team.mcp.files.read', { path: 'x' }, ctx)).resolves.toMatchObject({ ok: true, output: 'read x' });
  });
});
