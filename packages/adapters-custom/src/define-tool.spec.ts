import { ToolSchemaValidationError } from '@ca/schema';
import { ToolCancelledError, type ToolExecutionContext } from '@ca/tool-context';
import { ToolAccessDeniedError, ToolExecutionError, ToolRuntime, toolFailure, toolSuccess } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { CustomToolRegistrationError, createCustomAdapter, defineTool, type CustomToolEntry } from './index';

const greetInput = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1 }, times: { type: 'integer', minimum: 1 } },
  required: ['name'],
  additionalProperties: false,
} as const;

function greetTool() {
  return defineTool({
    name: 'custom.greet',
    description: 'Greets someone.',
    inputSchema: greetInput,
    outputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    capability: { writes: false, checkpointable: true, openWorld: false },
    execute(input) {
      // Compile-time checks (run by the typecheck target): the input type comes from the schema.
      const name: string = input.name;
      // @ts-expect-error `times` is optional, so it may be undefined
      const times: number = input.times;
      // @ts-expect-error `nickname` is not a property of the schema
      void input.nickname;
      void times;
      return { text: `Hello, ${name}!`.repeat(input.times ?? 1) };
    },
  });
}

function runtimeWith(...tools: CustomToolEntry[]) {
  const logger = new RecordingLogger();
  return { runtime: new ToolRuntime({ sources: [createCustomAdapter({ tools })], logger }), logger };
}

describe('defineTool', () => {
  it('builds a frozen custom ToolInstance with a normalised capability', () => {
    const tool = greetTool();
    expect(Object.isFrozen(tool)).toBe(true);
    expect(tool.descriptor).toMatchObject({
      name: 'custom.greet',
      source: 'custom',
      description: 'Greets someone.',
      capability: { writes: false, checkpointable: true, idempotent: false, destructive: false, openWorld: false },
      inputSchema: greetInput,
    });
    // Stateless definitions get no activate/deactivate, so the runtime skips the step.
    expect(tool.activate).toBeUndefined();
    expect(tool.deactivate).toBeUndefined();
  });

  it('fills a partial capability conservatively', () => {
    const tool = defineTool({
      name: 'custom.partial',
      description: 'd',
      inputSchema: { type: 'object' },
      capability: {},
      execute: () => null,
    });
    expect(tool.descriptor.capability).toEqual({ writes: true, checkpointable: false, idempotent: false, destructive: true, openWorld: true });
  });

  it('wraps a bare output and keeps a returned ToolResult as it is', async () => {
    const ctx = {} as ToolExecutionContext;
    await expect(greetTool().execute({ name: 'Ada' }, ctx)).resolves.toEqual({ ok: true, output: { text: 'Hello, Ada!' } });
    const failing = defineTool({
      name: 'custom.failing',
      description: 'Reports an expected failure.',
      inputSchema: { type: 'object' },
      capability: { writes: false },
      execute: () => toolFailure(Object.assign(new Error('no such record'), { code: 'NOT_FOUND' })),
    });
    const result = await failing.execute({}, ctx);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.code).toBe('NOT_FOUND');
    const detailed = defineTool({
      name: 'custom.detailed',
      description: 'Returns a full result.',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'number' },
      capability: { writes: false },
      execute: async () => toolSuccess(42, { metadata: { cached: true } }),
    });
    await expect(detailed.execute({}, ctx)).resolves.toEqual({ ok: true, output: 42, metadata: { cached: true } });
  });

  it('infers the output type from outputSchema', () => {
    defineTool({
      name: 'custom.typed-output',
      description: 'd',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'string' },
      capability: { writes: false },
      // @ts-expect-error the outputSchema says string, execute returns a number
      execute: () => 42,
    });
    expect(true).toBe(true);
  });

  it.each([
    ['an invalid name', { name: 'has space' }, /not a valid tool name.*custom\.<team>\.<tool>/],
    ['an empty description', { description: ' ' }, /'custom\.bad' needs a non-empty description/],
    ['no capability', { capability: undefined }, /'custom\.bad' needs a capability.*writes: false/],
    ['an unknown capability field', { capability: { readOnly: true } }, /unknown capability field 'readOnly'/],
    ['a non-boolean capability value', { capability: { writes: 'no' } }, /capability\.writes = 'no'; use true or false/],
    ['an input schema that does not compile', { inputSchema: { type: 'strnig' } }, /'custom\.bad' has an inputSchema that cannot be compiled/],
    ['an output schema with an unresolvable $ref', { outputSchema: { $ref: '#/$defs/missing' } }, /has an outputSchema that cannot be compiled/],
    ['a bad timeout', { timeoutMs: -1 }, /'custom\.bad' needs timeoutMs to be a positive number of milliseconds.*; got number -1\./],
    ['no execute function', { execute: undefined }, /needs an execute\(input, ctx\) function/],
  ])('refuses %s with CUSTOM_TOOL_INVALID naming the tool', (_label, override, message) => {
    const definition = {
      name: 'custom.bad',
      description: 'Bad tool.',
      inputSchema: { type: 'object' },
      capability: { writes: false },
      execute: () => null,
      ...override,
    };
    let thrown: unknown;
    try {
      defineTool(definition as never);
    } catch (error) {
      thrown = error;
    }
    expect(CustomToolRegistrationError.isInstance(thrown)).toBe(true);
    const error = thrown as CustomToolRegistrationError;
    expect(error.code).toBe('CUSTOM_TOOL_INVALID');
    expect(error.message).toMatch(message);
    if (definition.name === 'custom.bad' && !('name' in override)) expect(error.toolName).toBe('custom.bad');
  });

  it('keeps the schema compile error as the cause', () => {
    try {
      defineTool({ name: 'custom.bad', description: 'd', inputSchema: { type: 'strnig' } as never, capability: { writes: false }, execute: () => null });
      throw new Error('expected defineTool to throw');
    } catch (error) {
      expect((error as Error).cause).toMatchObject({ name: 'SchemaCompileError' });
    }
  });
});

describe('defineTool tools in a ToolRuntime', () => {
  it('validates input before calling execute and returns a failed result', async () => {
    const execute = jest.fn(() => 'never');
    const tool = defineTool({ name: 'custom.strict', description: 'd', inputSchema: greetInput, capability: { writes: false }, execute });
    const { runtime } = runtimeWith(tool);
    const ctx = runtime.createPlan({ planId: 'plan-input' });
    const result = await runtime.execute('custom.strict', { name: '', extra: true }, ctx);
    expect(result.ok).toBe(false);
    expect(ToolSchemaValidationError.isInstance(!result.ok && result.error)).toBe(true);
    expect(!result.ok && (result.error as ToolSchemaValidationError).issues.map((issue) => issue.keyword).sort()).toEqual([
      'additionalProperties',
      'minLength',
    ]);
    expect(execute).not.toHaveBeenCalled();
    expect(ctx.traces).toHaveLength(1);
    expect(ctx.traces[0]).toMatchObject({ toolName: 'custom.strict', success: false, error: { code: 'TOOL_SCHEMA_VALIDATION_FAILED' } });
  });

  it('runs a valid call and records a successful trace', async () => {
    const { runtime } = runtimeWith(greetTool());
    const ctx = runtime.createPlan({ policy: { readOnly: true } });
    const result = await runtime.execute('custom.greet', { name: 'Ada', times: 2 }, ctx);
    expect(result).toMatchObject({ ok: true, output: { text: 'Hello, Ada!Hello, Ada!' } });
    expect(ctx.traces[0]).toMatchObject({ toolName: 'custom.greet', success: true, resultSizeBytes: JSON.stringify(result.ok && result.output).length });
  });

  it('enforces the declared capability: a writing tool is refused in a read-only plan, unchecked', async () => {
    const execute = jest.fn(() => 'written');
    const writer = defineTool({ name: 'custom.write', description: 'Writes.', inputSchema: { type: 'object' }, capability: { writes: true }, execute });
    const undeclared = defineTool({ name: 'custom.unsure', description: 'Says nothing.', inputSchema: { type: 'object' }, capability: {}, execute });
    const { runtime } = runtimeWith(writer, undeclared);
    const readOnly = runtime.createPlan({ policy: { readOnly: true } });
    await expect(runtime.execute('custom.write', {}, readOnly)).rejects.toBeInstanceOf(ToolAccessDeniedError);
    await expect(runtime.execute('custom.unsure', {}, readOnly)).rejects.toMatchObject({ code: 'TOOL_ACCESS_DENIED' });
    const checkpointed = runtime.createPlan({ policy: { requireCheckpoint: true } });
    await expect(runtime.execute('custom.write', {}, checkpointed)).rejects.toMatchObject({ code: 'TOOL_CHECKPOINT_REQUIRED' });
    expect(execute).not.toHaveBeenCalled();
    const writable = runtime.createPlan();
    await expect(runtime.execute('custom.write', {}, writable)).resolves.toMatchObject({ ok: true, output: 'written' });
  });

  it('fails strict output that does not match, and only warns otherwise', async () => {
    const lenient = defineTool({
      name: 'custom.lenient',
      description: 'd',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'string' },
      capability: { writes: false },
      execute: () => 42 as unknown as string,
    });
    const strict = defineTool({
      name: 'custom.strict-output',
      description: 'd',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'string' },
      strictOutput: true,
      capability: { writes: false },
      execute: () => 42 as unknown as string,
    });
    const { runtime, logger } = runtimeWith(lenient, strict);
    const ctx = runtime.createPlan();
    await expect(runtime.execute('custom.lenient', {}, ctx)).resolves.toMatchObject({ ok: true, output: 42 });
    expect(logger.entries.some((entry) => entry.level === 'warn' && entry.message.includes('custom.lenient'))).toBe(true);
    const strictResult = await runtime.execute('custom.strict-output', {}, ctx);
    expect(strictResult.ok).toBe(false);
  });

  it('records the changes of a returned ToolResult and turns a throw into ToolExecutionError', async () => {
    const tool = defineTool({
      name: 'custom.touch',
      description: 'Touches a record.',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      capability: { writes: true, checkpointable: true },
      execute: ({ id }) => {
        if (id === 'boom') throw new Error('database unreachable');
        return toolSuccess({ touched: id }, { changes: [{ kind: 'modify', target: `record:${id}`, undo: { previous: 1 } }] });
      },
    });
    const { runtime } = runtimeWith(tool);
    const ctx = runtime.createPlan({ planId: 'plan-changes' });
    const result = await runtime.execute('custom.touch', { id: 'r1' }, ctx);
    expect(ctx.changes).toEqual([expect.objectContaining({ kind: 'modify', target: 'record:r1', toolName: 'custom.touch', executionId: result.executionId })]);
    const thrown = await runtime.execute('custom.touch', { id: 'boom' }, ctx).catch((error: unknown) => error);
    expect(ToolExecutionError.isInstance(thrown)).toBe(true);
    expect((thrown as Error).cause).toMatchObject({ message: 'database unreachable' });
    expect(ctx.traces.map((trace) => trace.success)).toEqual([true, false]);
  });

  it('activates once per plan, deactivates at the end, with the definition as this', async () => {
    const events: string[] = [];
    const definition = {
      name: 'custom.stateful',
      description: 'Holds a connection per plan.',
      inputSchema: { type: 'object' },
      capability: { writes: false },
      connections: new Map<string, string>(),
      async activate(ctx: ToolExecutionContext) {
        this.connections.set(ctx.planId, `connection-${ctx.planId}`);
        events.push(`activate:${ctx.planId}`);
      },
      execute(_input: unknown, ctx: ToolExecutionContext) {
        return this.connections.get(ctx.planId);
      },
      async deactivate(ctx: ToolExecutionContext) {
        this.connections.delete(ctx.planId);
        events.push(`deactivate:${ctx.planId}`);
      },
    } as const;
    const tool = defineTool(definition);
    const { runtime } = runtimeWith(tool);
    const output = await runtime.runPlan({ planId: 'p1' }, async (ctx) => {
      await runtime.execute('custom.stateful', {}, ctx);
      const second = await runtime.execute('custom.stateful', {}, ctx);
      return second.ok ? second.output : undefined;
    });
    expect(output).toBe('connection-p1');
    expect(events).toEqual(['activate:p1', 'deactivate:p1']);
    expect(definition.connections.size).toBe(0);
  });

  it('passes the plan signal to execute: cancelling the plan mid-call yields ToolCancelledError', async () => {
    let sawAbort = false;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const tool = defineTool({
      name: 'custom.slow',
      description: 'Waits until cancelled.',
      inputSchema: { type: 'object' },
      capability: { writes: false },
      execute: (_input, ctx) =>
        new Promise((_resolve, reject) => {
          const signal = ctx.cancellationToken.signal;
          signal.addEventListener(
            'abort',
            () => {
              sawAbort = true;
              reject(signal.reason);
            },
            { once: true },
          );
          started();
        }),
    });
    const { runtime } = runtimeWith(tool);
    const ctx = runtime.createPlan({ planId: 'plan-cancel' });
    const call = runtime.execute('custom.slow', {}, ctx);
    await running;
    ctx.cancellationToken.cancel('user pressed stop');
    const error = await call.catch((thrown: unknown) => thrown);
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'user pressed stop', toolName: 'custom.slow', planId: 'plan-cancel' });
    expect(sawAbort).toBe(true);
    await runtime.endPlan(ctx);
  }, 10_000);
});
