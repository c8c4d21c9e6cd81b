import { tool as langChainTool } from '@langchain/core/tools';
import { toJsonSchema as langChainToJsonSchema } from '@langchain/core/utils/json_schema';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolCancelledError } from '@ca/tool-context';
import { ToolExecutionError, ToolRuntime, type ToolInstance } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { jsonSchema, tool as aiTool, zodSchema } from 'ai';
import { z } from 'zod';
import {
  WrappedToolError,
  createWrappedAdapter,
  fromAiSdkTool,
  fromFunction,
  fromLangChainTool,
  wrapTool,
  type AiSdkToolLike,
  type LangChainToolLike,
} from './index';

function runtimeOf(...tools: ToolInstance[]) {
  return new ToolRuntime({ sources: [createWrappedAdapter({ id: 'wrapped:foreign', tools })], logger: new RecordingLogger() });
}

/** A promise that resolves when the foreign tool started, and the state it saw when aborted. */
function abortProbe() {
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const seen = { aborted: false, reason: undefined as unknown };
  const waitForAbort = (signal: AbortSignal | undefined): Promise<string> =>
    new Promise((_resolve, reject) => {
      if (signal === undefined) return reject(new Error('no signal given'));
      signal.addEventListener(
        'abort',
        () => {
          seen.aborted = signal.aborted;
          seen.reason = signal.reason;
          reject(signal.reason);
        },
        { once: true },
      );
      markStarted();
    });
  return { started, seen, waitForAbort };
}

async function cancelMidCall(runtime: ToolRuntime, name: string, input: unknown, started: Promise<void>) {
  const ctx = runtime.createPlan({ planId: `plan-cancel-${name}`, policy: { readOnly: true } });
  const call = runtime.execute(name, input, ctx);
  await started;
  ctx.cancellationToken.cancel('user cancelled the plan');
  const error = await call.catch((thrown: unknown) => thrown);
  await runtime.endPlan(ctx);
  return { error, ctx };
}

describe('fromFunction', () => {
  it('turns a plain async function into a wrapped tool that runs in a runtime', async () => {
    const add = fromFunction(async ({ a, b }: { a: number; b: number }) => a + b, {
      name: 'math.add',
      description: 'Adds two numbers.',
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      outputSchema: { type: 'number' },
      capability: { writes: false, idempotent: true, openWorld: false },
    });
    expect(add.descriptor).toMatchObject({
      name: 'math.add',
      source: 'wrapped',
      annotations: { foreignKind: 'function' },
      capability: { writes: false, idempotent: true },
    });
    const runtime = runtimeOf(add);
    const ctx = runtime.createPlan({ policy: { readOnly: true } });
    await expect(runtime.execute('math.add', { a: 2, b: 3 }, ctx)).resolves.toMatchObject({ ok: true, output: 5 });
    const invalid = await runtime.execute('math.add', { a: 2 }, ctx);
    expect(invalid.ok).toBe(false);
  });

  it('defaults to the conservative capability when none is given', async () => {
    const tool = fromFunction(() => 'done', { name: 'fn.unsure', description: 'Declares nothing.' } as never);
    expect(tool.descriptor.capability).toEqual({ writes: true, checkpointable: false, idempotent: false, destructive: true, openWorld: true });
    const runtime = runtimeOf(tool);
    await expect(runtime.execute('fn.unsure', {}, runtime.createPlan({ policy: { readOnly: true } }))).rejects.toMatchObject({ code: 'TOOL_ACCESS_DENIED' });
  });

  it('gives the function the plan signal; cancellation surfaces as ToolCancelledError', async () => {
    const probe = abortProbe();
    const tool = fromFunction((_input: unknown, { signal }) => probe.waitForAbort(signal), {
      name: 'fn.wait',
      description: 'Waits.',
      capability: { writes: false },
    });
    const { error } = await cancelMidCall(runtimeOf(tool), 'fn.wait', {}, probe.started);
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect(probe.seen.aborted).toBe(true);
  });

  it('turns a throw into ToolExecutionError and refuses bad definitions', async () => {
    const tool = fromFunction(
      () => {
        throw new Error('kaput');
      },
      { name: 'fn.throws', description: 'Throws.', capability: { writes: false } },
    );
    const runtime = runtimeOf(tool);
    const error = await runtime.execute('fn.throws', {}, runtime.createPlan()).catch((thrown: unknown) => thrown);
    expect(ToolExecutionError.isInstance(error)).toBe(true);
    expect((error as Error).cause).toMatchObject({ message: 'kaput' });
    expect(() => fromFunction('nope' as never, { name: 'fn.x', description: 'd', capability: {} })).toThrow(/expects a function/);
    expect(() => fromFunction(() => 1, { name: 'fn.x', description: '', capability: {} })).toThrow(/has no description/);
    expect(() => fromFunction(() => 1, { name: 'fn x', description: 'd', capability: {} })).toThrow(/needs a valid name/);
    expect(() => fromFunction(() => 1, { name: 'fn.x', description: 'd', capability: { write: false } as never })).toThrow(/unknown capability field 'write'/);
  });
});

describe('fromAiSdkTool (real `ai` package)', () => {
  const weather = aiTool({
    description: 'Current temperature of a city.',
    inputSchema: z.object({ city: z.string().min(1) }),
    execute: async ({ city }, { toolCallId }) => ({ city, celsius: 21, toolCallId }),
  });

  it('takes an ai 7 tool whose description is a function of the call context: the description must then be given', () => {
    const contextual = { description: () => 'Depends on the call.', inputSchema: jsonSchema({ type: 'object' }), execute: async () => 1 };
    expect(() => fromAiSdkTool('ai.contextual', contextual, { capability: { writes: false } })).toThrow(
      expect.objectContaining({ code: 'WRAP_FOREIGN_TOOL_INVALID' }),
    );
    expect(fromAiSdkTool('ai.contextual', contextual, { capability: { writes: false }, description: 'Fixed.' }).descriptor.description).toBe('Fixed.');
  });

  it('converts a raw zod input schema and runs under a read-only plan', async () => {
    const tool = fromAiSdkTool('ai.weather', weather, { capability: { writes: false } });
    expect(tool.descriptor).toMatchObject({
      name: 'ai.weather',
      description: 'Current temperature of a city.',
      source: 'wrapped',
      annotations: { foreignKind: 'ai-sdk' },
      inputSchema: { type: 'object', properties: { city: { type: 'string', minLength: 1 } }, required: ['city'] },
    });
    const runtime = runtimeOf(tool);
    const ctx = runtime.createPlan({ policy: { readOnly: true } });
    const result = await runtime.execute('ai.weather', { city: 'Paris' }, ctx);
    expect(result).toMatchObject({ ok: true, output: { city: 'Paris', celsius: 21, toolCallId: result.executionId } });
    const invalid = await runtime.execute('ai.weather', { city: '' }, ctx);
    expect(invalid.ok).toBe(false);
    expect(!invalid.ok && invalid.error.code).toBe('TOOL_SCHEMA_VALIDATION_FAILED');
  });

  it('refuses a writing AI SDK tool in a read-only plan without running it', async () => {
    const execute = jest.fn(async () => 'sent');
    const send = aiTool({ description: 'Sends an e-mail.', inputSchema: zodSchema(z.object({ to: z.string() })), execute });
    const tool = fromAiSdkTool('ai.send-mail', send, { capability: { writes: true, openWorld: true } });
    expect(tool.descriptor.inputSchema).toMatchObject({ type: 'object', properties: { to: { type: 'string' } } });
    const runtime = runtimeOf(tool);
    await expect(runtime.execute('ai.send-mail', { to: 'a@b.c' }, runtime.createPlan({ policy: { readOnly: true } }))).rejects.toMatchObject({
      code: 'TOOL_ACCESS_DENIED',
    });
    expect(execute).not.toHaveBeenCalled();
    await expect(runtime.execute('ai.send-mail', { to: 'a@b.c' }, runtime.createPlan())).resolves.toMatchObject({ ok: true, output: 'sent' });
  });

  it('passes the plan signal as abortSignal: cancelling the plan mid-call aborts the tool', async () => {
    const probe = abortProbe();
    const slow = aiTool({
      description: 'Waits for a slow service.',
      inputSchema: jsonSchema<{ query: string }>({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] }),
      execute: async (_input, { abortSignal }) => probe.waitForAbort(abortSignal),
    });
    const tool = fromAiSdkTool('ai.slow', slow, { capability: { writes: false } });
    expect(tool.descriptor.inputSchema).toEqual({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] });
    const { error } = await cancelMidCall(runtimeOf(tool), 'ai.slow', { query: 'q' }, probe.started);
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'user cancelled the plan', toolName: 'ai.slow' });
    expect(probe.seen.aborted).toBe(true);
    expect(ToolCancelledError.isInstance(probe.seen.reason)).toBe(true);
  });

  it('drains a streaming execute and keeps its last value', async () => {
    const stream = aiTool({
      description: 'Streams progress.',
      inputSchema: z.object({}),
      async *execute() {
        yield { status: 'working' as const };
        yield { status: 'done' as const };
      },
    });
    const tool = fromAiSdkTool('ai.stream', stream, { capability: { writes: false } });
    const runtime = runtimeOf(tool);
    await expect(runtime.execute('ai.stream', {}, runtime.createPlan())).resolves.toMatchObject({ ok: true, output: { status: 'done' } });
  });

  it('can be wrapped further, e.g. with a fixed argument', async () => {
    const tool = wrapTool(fromAiSdkTool('ai.weather', weather, { capability: { writes: false, idempotent: true } }), {
      name: 'ai.paris-weather',
      fixedArguments: { city: 'Paris' },
      retry: { attempts: 2, backoffMs: 0 },
    });
    expect(tool.descriptor.annotations).toMatchObject({ wrappedSource: 'wrapped', foreignKind: 'ai-sdk' });
    await expect(tool.execute({}, runtimeOf().createPlan())).resolves.toMatchObject({ ok: true, output: { city: 'Paris' } });
  });

  it('uses options.toJsonSchema for schemas it cannot convert, and explains when there is none', () => {
    const opaque = {
      description: 'Has an opaque schema.',
      inputSchema: { '~standard': { version: 1, vendor: 'x', validate: () => ({ value: {} }) } },
      execute: async () => 1,
    };
    const error = (() => {
      try {
        fromAiSdkTool('ai.opaque', opaque, { capability: { writes: false } });
      } catch (thrown) {
        return thrown;
      }
      return undefined;
    })();
    expect(WrappedToolError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'WRAP_SCHEMA_UNCONVERTIBLE', toolName: 'ai.opaque' });
    expect((error as Error).message).toMatch(/input schema of AI SDK tool 'ai.opaque'.*options\.toJsonSchema/);
    const converted = fromAiSdkTool('ai.opaque', opaque, { capability: { writes: false }, toJsonSchema: () => ({ type: 'object' }) });
    expect(converted.descriptor.inputSchema).toEqual({ type: 'object' });
  });

  it('refuses a tool without execute', () => {
    const clientSide = aiTool({ description: 'Runs in the browser.', inputSchema: z.object({}), outputSchema: z.string() });
    expect(() => fromAiSdkTool('ai.client', clientSide as AiSdkToolLike, { capability: { writes: false } })).toThrow(/has no execute function/);
  });
});

describe('fromLangChainTool (real `@langchain/core` package)', () => {
  const search = langChainTool(async ({ query }: { query: string }) => `results for ${query}`, {
    name: 'search_docs',
    description: 'Searches the documentation.',
    schema: z.object({ query: z.string() }),
  });

  it('converts the zod schema by itself (zod 4) and runs under a read-only plan', async () => {
    const tool = fromLangChainTool(search, { capability: { writes: false } });
    expect(tool.descriptor).toMatchObject({
      name: 'search_docs',
      description: 'Searches the documentation.',
      source: 'wrapped',
      annotations: { foreignKind: 'langchain' },
      inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    });
    const runtime = runtimeOf(tool);
    await expect(runtime.execute('search_docs', { query: 'retry' }, runtime.createPlan({ policy: { readOnly: true } }))).resolves.toMatchObject({
      ok: true,
      output: 'results for retry',
    });
  });

  it("uses LangChain's own toJsonSchema when given, and a new name", () => {
    const tool = fromLangChainTool(search, { name: 'lc.search', capability: { writes: false }, toJsonSchema: langChainToJsonSchema });
    expect(tool.descriptor.name).toBe('lc.search');
    expect(tool.descriptor.inputSchema).toMatchObject({ type: 'object', required: ['query'] });
  });

  it('refuses a writing LangChain tool in a read-only plan', async () => {
    const invoked = jest.fn(async () => 'deleted');
    const remove = langChainTool(invoked, { name: 'delete_page', description: 'Deletes a page.', schema: z.object({ id: z.string() }) });
    const runtime = runtimeOf(fromLangChainTool(remove, { capability: { writes: true } }));
    await expect(runtime.execute('delete_page', { id: 'p' }, runtime.createPlan({ policy: { readOnly: true } }))).rejects.toMatchObject({
      code: 'TOOL_ACCESS_DENIED',
    });
    expect(invoked).not.toHaveBeenCalled();
  });

  it('passes the plan signal to invoke: cancelling the plan mid-call aborts the tool', async () => {
    const probe = abortProbe();
    const slow = langChainTool(async (_input: { q: string }, config) => probe.waitForAbort(config?.signal), {
      name: 'slow_search',
      description: 'A slow search.',
      schema: z.object({ q: z.string() }),
    });
    const { error } = await cancelMidCall(runtimeOf(fromLangChainTool(slow, { capability: { writes: false } })), 'slow_search', { q: 'x' }, probe.started);
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'user cancelled the plan', toolName: 'slow_search' });
    expect(probe.seen.aborted).toBe(true);
  });

  it('accepts a structural object of the same shape, with a JSON Schema', async () => {
    const structural: LangChainToolLike = {
      name: 'plain_tool',
      description: 'Structural.',
      schema: { type: 'object', properties: { n: { type: 'integer' } } },
      invoke: async (input: never, config) => ({ input, hasSignal: config?.signal instanceof AbortSignal, metadata: config?.metadata }),
    };
    const runtime = runtimeOf(fromLangChainTool(structural, { capability: { writes: false } }));
    const ctx = runtime.createPlan({ planId: 'plan-lc' });
    const result = await runtime.execute('plain_tool', { n: 1 }, ctx);
    expect(result).toMatchObject({ ok: true, output: { input: { n: 1 }, hasSignal: true, metadata: { planId: 'plan-lc', executionId: result.executionId } } });
    expect(() => fromLangChainTool({} as never, { capability: {} })).toThrow(/invoke\(\) method/);
  });
});

describe('foreign tools keep no hard dependency', () => {
  it('does not import ai, @langchain/core or zod from the sources', async () => {
    const files = (await readdir(__dirname)).filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const text = await readFile(join(__dirname, file), 'utf8');
      expect({
        file,
        imports: text.match(
          /^\s*(?:import|export)\b[^;]*?from '(?:ai|zod|@langchain\/[^']*)'|\brequire\('(?:ai|zod|@langchain\/[^']*)'\)|\bimport\('(?:ai|zod|@langchain\/[^']*)'\)/gm,
        ),
      }).toEqual({ file, imports: null });
    }
  });
});
