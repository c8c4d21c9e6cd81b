import { ToolCancelledError } from '@ca/tool-context';
import { InMemoryToolSource, RecordingLogger, TestTool } from '../testing/index';
// The package entry first: it loads reflect-metadata, which tsyringe needs.
import {
  TOOL_HOOK,
  TOOL_RUNTIME,
  TOOL_SOURCE,
  ToolExecutionError,
  ToolHookError,
  ToolHookRefusedError,
  ToolInvalidArgumentError,
  ToolRuntime,
  registerToolRuntime,
  type ToolHook,
  type ToolHookContext,
} from '../index';
import { container } from 'tsyringe';

const messageSchema = {
  type: 'object',
  properties: { to: { type: 'string', pattern: '^[a-z]+@example\\.com$' }, body: { type: 'string' } },
  required: ['to', 'body'],
  additionalProperties: false,
} as const;

function send(execute?: (input: { to: string; body: string }) => unknown) {
  return new TestTool<{ to: string; body: string }, unknown>({
    name: 'mail.send',
    inputSchema: messageSchema,
    outputSchema: { type: 'object', properties: { sent: { type: 'boolean' }, receipt: { type: 'string' } }, required: ['sent'] },
    capability: { writes: true, checkpointable: false },
    ...(execute === undefined ? { execute: (input) => ({ sent: true, receipt: `to ${input.to}: ${input.body}` }) } : { execute: execute as never }),
  });
}

function runtimeWith(hooks: readonly ToolHook[], ...tools: TestTool<any, any>[]): ToolRuntime {
  return new ToolRuntime({ sources: [new InMemoryToolSource(tools.length === 0 ? [send()] : tools)], hooks, logger: new RecordingLogger() });
}

async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, any>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, any>;
  }
  throw new Error('expected the promise to reject');
}

describe('hooks before a call', () => {
  it('rewrites the input: the tool gets the rewritten input, validated again, and the trace says so', async () => {
    const tool = send();
    const runtime = runtimeWith(
      [
        {
          name: 'signature',
          before: (input) => ({ decision: 'rewrite', input: { ...(input as object), body: `${(input as { body: string }).body}\n-- sent by the agent` } }),
        },
      ],
      tool,
    );
    const result = await runtime.runPlan({}, (ctx) => runtime.execute('mail.send', { to: 'ada@example.com', body: 'hi' }, ctx));
    expect(result.ok).toBe(true);
    expect(tool.events.find((event) => event.type === 'execute')?.input).toEqual({ to: 'ada@example.com', body: 'hi\n-- sent by the agent' });
    expect(result.trace.hooks).toEqual([{ hook: 'signature', stage: 'before', decision: 'rewrite', durationMs: expect.any(Number) }]);
  });

  it('fails closed when the rewritten input does not match the schema: the tool does not run', async () => {
    const tool = send();
    const runtime = runtimeWith([{ name: 'breaker', before: () => ({ decision: 'rewrite', input: { to: 'not an address', body: 'hi' } }) }], tool);
    const error = await rejection(runtime.runPlan({ planId: 'plan-r' }, (ctx) => runtime.execute('mail.send', { to: 'ada@example.com', body: 'hi' }, ctx)));
    expect(ToolHookError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'TOOL_HOOK_FAILED',
      hook: 'breaker',
      stage: 'before',
      failure: 'invalid-input',
      toolName: 'mail.send',
      planId: 'plan-r',
    });
    expect(error.message).toMatch(/Hook 'breaker' failed before the call; the tool did not run \(tool 'mail\.send', plan 'plan-r'\).*input schema/);
    expect(tool.count('execute')).toBe(0);
    expect(error.trace.hooks[0]).toMatchObject({ hook: 'breaker', decision: 'failed' });
  });

  it('refuses a call with a reason: ToolHookRefusedError, the tool does not run, the next hook does not either', async () => {
    const tool = send();
    const seen: string[] = [];
    const runtime2 = runtimeWith(
      [
        { name: 'no-outside-mail', before: () => ({ decision: 'refuse', reason: 'mail leaves the company' }) },
        { name: 'audit', before: () => void seen.push('audit') },
      ],
      tool,
    );
    const error = await rejection(runtime2.runPlan({ planId: 'plan-2' }, (ctx) => runtime2.execute('mail.send', { to: 'eve@example.com', body: 'x' }, ctx)));
    expect(ToolHookRefusedError.isInstance(error)).toBe(true);
    expect(error.message).toBe(
      "Tool 'mail.send' in plan 'plan-2' was refused by hook 'no-outside-mail': mail leaves the company. The tool did not run. Change the call, or the hook.",
    );
    expect(error.trace.hooks).toEqual([
      { hook: 'no-outside-mail', stage: 'before', decision: 'refuse', durationMs: expect.any(Number), reason: 'mail leaves the company' },
    ]);
    expect(seen).toEqual([]);
    expect(tool.count('execute', 'plan-2')).toBe(0);
  });

  it('runs after input validation: an invalid input never reaches a hook', async () => {
    const before = jest.fn();
    const runtime = runtimeWith([{ name: 'watch', before }]);
    const result = await runtime.runPlan({}, (ctx) => runtime.execute('mail.send', { to: 42 }, ctx));
    expect(result.ok).toBe(false);
    expect(before).not.toHaveBeenCalled();
  });

  it('adds notes for the model on the result, in order, and runs hooks in the order given', async () => {
    const runtime = runtimeWith([
      { name: 'first', before: () => ({ decision: 'continue', note: 'mail is logged' }) },
      { name: 'second', after: async () => ({ decision: 'continue', note: 'x'.repeat(10_000) }) },
    ]);
    const result = await runtime.runPlan({}, (ctx) => runtime.execute('mail.send', { to: 'ada@example.com', body: 'hi' }, ctx));
    expect(result.notes?.map((note) => [note.hook, note.stage, note.text.length])).toEqual([
      ['first', 'before', 14],
      ['second', 'after', 8_192],
    ]);
    expect(result.trace.hooks?.map((entry) => [entry.hook, entry.stage, entry.decision, entry.noted])).toEqual([
      ['first', 'before', 'continue', true],
      ['second', 'after', 'continue', true],
    ]);
  });
});

describe('hooks after a call', () => {
  it('redacts the output: the caller gets the redacted output, the trace counts the redactions by rule', async () => {
    const runtime = runtimeWith([
      {
        name: 'redact-receipts',
        after: ({ output }) => ({
          decision: 'redact',
          output: { ...(output as object), receipt: '***' },
          content: [{ type: 'text', text: '***' }],
          redactions: { receipt: 1 },
        }),
      },
    ]);
    const result = await runtime.runPlan({}, (ctx) => runtime.execute('mail.send', { to: 'ada@example.com', body: 'the code is 1234' }, ctx));
    expect(result).toMatchObject({ ok: true, output: { sent: true, receipt: '***' }, content: [{ type: 'text', text: '***' }] });
    expect(result.trace.hooks).toEqual([
      { hook: 'redact-receipts', stage: 'after', decision: 'redact', durationMs: expect.any(Number), redactions: { receipt: 1 } },
    ]);
    expect(result.trace.resultSizeBytes).toBe(JSON.stringify({ sent: true, receipt: '***' }).length);
  });

  it('replaces every representation: without content of its own, the content blocks of the old output are dropped', async () => {
    const tool = new TestTool({
      name: 'db.query',
      execute: () => ({ ok: true, output: { rows: ['secret row'] }, content: [{ type: 'text', text: 'secret row' }] }),
    });
    const replaced = { rows: ['(hidden by policy)'] };
    const runtime = runtimeWith(
      [
        { name: 'first', after: () => ({ decision: 'replace', output: replaced }) },
        // A later hook sees what the caller will get: the replacement, with no old blocks.
        { name: 'second', after: (call) => void seen.push(call) },
      ],
      tool,
    );
    const seen: unknown[] = [];
    const result = await runtime.runPlan({}, (ctx) => runtime.execute('db.query', {}, ctx));
    expect(result.ok && result.output).toEqual(replaced);
    expect(result).not.toHaveProperty('content');
    expect(JSON.stringify(result)).not.toContain('secret row');
    expect(seen).toEqual([{ input: {}, output: replaced }]);
    // With content of its own, the replacement's blocks are given.
    const withBlocks = runtimeWith(
      [{ name: 'blocks', after: () => ({ decision: 'replace', output: replaced, content: [{ type: 'text', text: 'hidden' }] }) }],
      tool,
    );
    const given = await withBlocks.runPlan({}, (ctx) => withBlocks.execute('db.query', {}, ctx));
    expect(given.ok && given.content).toEqual([{ type: 'text', text: 'hidden' }]);
  });

  it('fails closed when the replaced output does not match the output schema', async () => {
    const runtime = runtimeWith([{ name: 'mangler', after: () => ({ decision: 'replace', output: { sent: 'yes' } }) }]);
    const error = await rejection(runtime.runPlan({}, (ctx) => runtime.execute('mail.send', { to: 'ada@example.com', body: 'hi' }, ctx)));
    expect(error).toMatchObject({ code: 'TOOL_HOOK_FAILED', hook: 'mangler', stage: 'after', failure: 'invalid-output' });
    expect(error.message).toMatch(/after the call; the tool ran \(its changes are recorded\) but its output was not given back/);
  });

  it('withholds the output: a failed result with the reason; the tool ran and its changes are kept', async () => {
    const tool = new TestTool({
      name: 'notes.write',
      capability: { writes: true, checkpointable: true },
      execute: () => ({ ok: true, output: 'written', changes: [{ kind: 'create', target: '/tmp/n.md' }] }),
    });
    const later = jest.fn();
    const runtime = runtimeWith(
      [
        { name: 'withholder', after: () => ({ decision: 'withhold', reason: 'the output names a customer' }) },
        { name: 'later', after: later },
      ],
      tool,
    );
    const { result, changes } = await runtime.runPlan({ planId: 'plan-w' }, async (ctx) => ({
      result: await runtime.execute('notes.write', {}, ctx),
      changes: [...ctx.changes],
    }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(ToolHookRefusedError.isInstance(result.error)).toBe(true);
    expect(result.error.message).toBe(
      "The output of tool 'notes.write' in plan 'plan-w' was withheld by hook 'withholder': the output names a customer. The tool ran and its changes are recorded; its output was not given back.",
    );
    expect(result.output).toBeUndefined();
    expect(changes.map((change) => change.target)).toEqual(['/tmp/n.md']);
    expect(later).not.toHaveBeenCalled();
  });

  it('waits for an asynchronous hook, within its deadline; a hook past its deadline fails closed and its signal aborts', async () => {
    let signal: AbortSignal | undefined;
    const runtime = runtimeWith([
      {
        name: 'slow',
        timeoutMs: 50,
        after: (_call, context) => {
          signal = context.signal;
          return new Promise(() => undefined);
        },
      },
    ]);
    const error = await rejection(runtime.runPlan({ planId: 'plan-s' }, (ctx) => runtime.execute('mail.send', { to: 'ada@example.com', body: 'hi' }, ctx)));
    expect(error).toMatchObject({ code: 'TOOL_HOOK_FAILED', hook: 'slow', failure: 'timed-out', planId: 'plan-s' });
    expect(error.message).toMatch(/did not answer within 50 ms/);
    expect(signal?.aborted).toBe(true);
  });

  it('stops waiting for a hook when the plan is cancelled', async () => {
    const runtime = runtimeWith([{ name: 'stuck', before: () => new Promise(() => undefined) }]);
    const error = await rejection(
      runtime.runPlan({}, (ctx) => {
        setTimeout(() => ctx.cancellationToken.cancel('user pressed stop'), 10);
        return runtime.execute('mail.send', { to: 'ada@example.com', body: 'hi' }, ctx);
      }),
    );
    expect(ToolCancelledError.isInstance(error)).toBe(true);
  });
});

describe('hooks that fail', () => {
  it.each<[string, ToolHook, RegExp]>([
    [
      'throws',
      {
        name: 'broken',
        before: () => {
          throw new Error('database down');
        },
      },
      /database down/,
    ],
    [
      'rejects',
      {
        name: 'broken',
        after: async () => {
          throw new Error('database down');
        },
      },
      /database down/,
    ],
    ['answers a decision of another stage', { name: 'broken', before: () => ({ decision: 'withhold', reason: 'x' }) as never }, /cannot make/],
    ['answers a string', { name: 'broken', after: () => 'fine' as never }, /not a decision object/],
    ['refuses without a reason', { name: 'broken', before: () => ({ decision: 'refuse' }) as never }, /reason/],
    ['redacts without counting', { name: 'broken', after: () => ({ decision: 'redact', output: { sent: true } }) as never }, /counted by rule/],
  ])('fail closed when a hook %s, naming the hook, the tool and the plan', async (_label, hook, message) => {
    const tool = send();
    const runtime = runtimeWith([hook], tool);
    const error = await rejection(runtime.runPlan({ planId: 'plan-f' }, (ctx) => runtime.execute('mail.send', { to: 'ada@example.com', body: 'hi' }, ctx)));
    expect(ToolHookError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'TOOL_HOOK_FAILED', hook: 'broken', toolName: 'mail.send', planId: 'plan-f' });
    expect(error.message).toMatch(message);
    expect(error.trace).toMatchObject({ success: false, error: { code: 'TOOL_HOOK_FAILED' } });
    expect(error.trace.hooks.at(-1)).toMatchObject({ hook: 'broken', decision: 'failed' });
  });
});

describe('hooks on a failure', () => {
  it('see a thrown failure and a reported one, and add notes; they never see a cancellation', async () => {
    const seen: string[] = [];
    const onError: ToolHook['onError'] = ({ error }) => {
      seen.push(error.code ?? error.name);
      return { decision: 'continue', note: `try again later (${error.code})` };
    };
    const thrower = new TestTool({
      name: 'boom',
      execute: () => {
        throw new Error('kaput');
      },
    });
    const reporter = new TestTool({ name: 'nope', execute: () => ({ ok: false, error: Object.assign(new Error('quota'), { code: 'QUOTA' }) }) });
    const runtime = runtimeWith([{ name: 'advice', onError }], thrower, reporter);
    await runtime.runPlan({}, async (ctx) => {
      const thrown = await rejection(runtime.execute('boom', {}, ctx));
      expect(ToolExecutionError.isInstance(thrown)).toBe(true);
      expect(thrown.notes).toEqual([{ hook: 'advice', stage: 'error', text: 'try again later (TOOL_EXECUTION_FAILED)' }]);
      const reported = await runtime.execute('nope', {}, ctx);
      expect(reported.notes).toEqual([{ hook: 'advice', stage: 'error', text: 'try again later (QUOTA)' }]);
      expect(reported.trace.hooks).toEqual([{ hook: 'advice', stage: 'error', decision: 'continue', durationMs: expect.any(Number), noted: true }]);
      ctx.cancellationToken.cancel('stop');
      await rejection(runtime.execute('nope', {}, ctx));
    });
    expect(seen).toEqual(['TOOL_EXECUTION_FAILED', 'QUOTA']);
  });
});

describe('what a hook sees', () => {
  it('a read-only view: the call, the tool and the plan, and no way to write the plan records', async () => {
    let context: ToolHookContext | undefined;
    const runtime = runtimeWith([{ name: 'look', before: (_input, seen) => void (context = seen) }]);
    await runtime.runPlan({ planId: 'plan-v', policy: { readOnly: false }, metadata: { ticket: 'T-1' } }, (ctx) =>
      runtime.execute('mail.send', { to: 'ada@example.com', body: 'hi' }, ctx),
    );
    expect(context).toMatchObject({ planId: 'plan-v', toolName: 'mail.send', stage: 'before', metadata: { ticket: 'T-1' } });
    expect(context?.tool.name).toBe('mail.send');
    expect(context?.executionId).toEqual(expect.any(String));
    for (const writer of ['recordChange', 'reportChange', 'recordTrace', 'forExecution', 'cancellationToken']) {
      expect((context as unknown as Record<string, unknown>)[writer]).toBeUndefined();
    }
    expect(() => (context!.changes as unknown[]).push({})).toThrow(TypeError);
    expect(Object.isFrozen(context!.tool)).toBe(true);
    expect(JSON.parse(JSON.stringify(context))).toEqual({ planId: 'plan-v', executionId: context!.executionId, toolName: 'mail.send', stage: 'before' });
  });

  it('only the tools its patterns match', async () => {
    const before = jest.fn();
    const other = new TestTool({ name: 'notes.read' });
    const runtime = runtimeWith([{ name: 'mail-only', tools: 'mail.*', before }], send(), other);
    const result = await runtime.runPlan({}, async (ctx) => {
      await runtime.execute('notes.read', {}, ctx);
      return runtime.execute('mail.send', { to: 'ada@example.com', body: 'hi' }, ctx);
    });
    expect(before).toHaveBeenCalledTimes(1);
    expect(result.trace.hooks).toHaveLength(1);
  });
});

describe('no hook configured', () => {
  it('leaves no trace of the step', async () => {
    const runtime = runtimeWith([]);
    const result = await runtime.runPlan({}, (ctx) => runtime.execute('mail.send', { to: 'ada@example.com', body: 'hi' }, ctx));
    expect(result.trace.hooks).toBeUndefined();
    expect(result.notes).toBeUndefined();
  });
});

describe('hooks through DI', () => {
  it('every TOOL_HOOK registered runs, in the order registered', async () => {
    const order: string[] = [];
    const services = container.createChildContainer();
    registerToolRuntime(services);
    services.register(TOOL_SOURCE, { useValue: new InMemoryToolSource([send()]) });
    services.register(TOOL_HOOK, { useValue: { name: 'one', before: () => void order.push('one') } satisfies ToolHook });
    services.register(TOOL_HOOK, { useValue: { name: 'two', before: () => void order.push('two') } satisfies ToolHook });
    const runtime = services.resolve(TOOL_RUNTIME);
    await runtime.runPlan({}, (ctx) => runtime.execute('mail.send', { to: 'ada@example.com', body: 'hi' }, ctx));
    expect(order).toEqual(['one', 'two']);
  });

  it.each<[string, unknown, string]>([
    ['a hook without a name', [{ before: () => undefined }], 'hooks[0].name'],
    [
      'two hooks of one name',
      [
        { name: 'a', before: () => undefined },
        { name: 'a', after: () => undefined },
      ],
      'hooks[1].name',
    ],
    ['a hook that does nothing', [{ name: 'idle' }], 'hooks[0]'],
    ['a hook with a bad deadline', [{ name: 'a', before: () => undefined, timeoutMs: 0 }], 'hooks[0].timeoutMs'],
    ['a hook with an empty pattern list', [{ name: 'a', before: () => undefined, tools: [] }], 'hooks[0].tools'],
    ['a before that is not a function', [{ name: 'a', before: 'yes' }], 'hooks[0].before'],
  ])('refuses %s when the runtime is built', (_label, hooks, argument) => {
    let error: unknown;
    try {
      new ToolRuntime({ hooks: hooks as ToolHook[] });
    } catch (thrown) {
      error = thrown;
    }
    expect(ToolInvalidArgumentError.isInstance(error)).toBe(true);
    expect((error as ToolInvalidArgumentError).argument).toBe(argument);
  });
});
