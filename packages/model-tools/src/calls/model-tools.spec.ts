import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourceFromPath } from '@ca/tool-context';
import { ToolRuntime, silentLogger } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { ModelTools } from './model-tools';

const searchSchema = {
  type: 'object',
  properties: { query: { type: 'string' }, limit: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
  required: ['query'],
  additionalProperties: false,
};

function setup(extra: TestTool[] = [], options: ConstructorParameters<typeof ModelTools>[1] = {}) {
  const search = new TestTool({ name: 'docs.search', description: 'Searches the docs.', inputSchema: searchSchema, capability: { writes: false } });
  const write = new TestTool({ name: 'fs.write', description: 'Writes a file.', capability: { writes: true, checkpointable: true } });
  const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([search, write, ...extra])], logger: silentLogger });
  return { runtime, search, write, modelTools: new ModelTools(runtime, options) };
}

const chatCall = (name: string, args: string, id = 'call_1') => ({ id, type: 'function', function: { name, arguments: args } });

describe('ModelTools.definitions', () => {
  it('lists only what the plan lets run, by policyRefusal, or marks the rest', async () => {
    const { modelTools } = setup();
    const readOnly = { policy: { readOnly: true, requireCheckpoint: false } };
    expect((await modelTools.definitions('openai-chat', readOnly)).map((tool) => tool.function.name)).toEqual(['docs_search']);
    const marked = new ModelTools(setup().runtime, { refused: 'mark' });
    const all = await marked.definitions('anthropic', readOnly);
    expect(all.map((tool) => tool.name)).toEqual(['docs_search', 'fs_write']);
    expect(all[1]!.description).toBe('[Not available in this plan: it changes things and this plan is read-only. Do not call it.] Writes a file.');
  });

  it('refuses an unknown format and something that is not a plan, with the field named', async () => {
    const { modelTools } = setup();
    await expect(modelTools.definitions('openai' as never, { policy: { readOnly: false, requireCheckpoint: false } })).rejects.toMatchObject({
      code: 'MODEL_TOOLS_INVALID_ARGUMENT',
      message: expect.stringContaining("'openai-responses', 'openai-chat', 'anthropic', 'gemini', 'mcp'"),
    });
    await expect(modelTools.definitions('mcp', {} as never)).rejects.toMatchObject({ code: 'MODEL_TOOLS_INVALID_ARGUMENT', field: 'plan' });
    expect(() => new ModelTools({} as never)).toThrow(/ToolRuntime/);
  });
});

describe('ModelTools.call', () => {
  it('repairs the arguments, records each repair in the trace, and passes the call id as the step', async () => {
    const { runtime, modelTools, search } = setup();
    await runtime.runPlan({}, async (ctx) => {
      const { message, outcome } = await modelTools.call('openai-chat', chatCall('docs_search', '{"query":"x","limit":"5","tags":"a"}'), ctx);
      expect(search.events.at(-1)?.input).toEqual({ query: 'x', limit: 5, tags: ['a'] });
      expect(ctx.traces.at(-1)!.repairs).toEqual([
        { rule: 'string-to-scalar', pointer: '/limit', from: 'string', to: 'integer' },
        { rule: 'single-to-array', pointer: '/tags', from: 'string', to: 'array' },
      ]);
      expect(outcome.repairs).toEqual(ctx.traces.at(-1)!.repairs);
      expect(message).toEqual({ role: 'tool', tool_call_id: 'call_1', content: JSON.stringify({ query: 'x', limit: 5, tags: ['a'] }) });
      // The same call id and arguments again: the recorded result, not a second execution.
      await modelTools.call('openai-chat', chatCall('docs_search', '{"query":"x","limit":"5","tags":"a"}'), ctx);
      expect(ctx.traces.at(-1)!.replayedFrom).toBe(ctx.traces.at(-2)!.executionId);
    });
  });

  it('an ambiguous value is not guessed: the tool is not called and the model reads why', async () => {
    const { runtime, modelTools, search } = setup();
    await runtime.runPlan({}, async (ctx) => {
      const { message, outcome } = await modelTools.call('openai-chat', chatCall('docs_search', '{"query":"x","tags":"[\\"a\\"]"}'), ctx);
      expect(search.events.filter((event) => event.type === 'execute')).toEqual([]);
      expect(outcome).toMatchObject({ ok: false, error: { code: 'TOOL_SCHEMA_VALIDATION_FAILED' }, declined: [{ pointer: '/tags' }] });
      expect(message.content).toContain('/tags was left as sent: it could be read as JSON text or as a single item of the array');
      expect(ctx.traces.at(-1)!.error?.code).toBe('TOOL_SCHEMA_VALIDATION_FAILED');
    });
  });

  it('a refusal by the plan goes back to the model as text built from the error fields, and is traced', async () => {
    const { runtime, modelTools, write } = setup();
    await runtime.runPlan({ policy: { readOnly: true } }, async (ctx) => {
      const { message, outcome } = await modelTools.call('anthropic', { type: 'tool_use', id: 'toolu_1', name: 'fs_write', input: {} }, ctx);
      expect(write.events.filter((event) => event.type === 'execute')).toEqual([]);
      expect(message).toEqual({
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        is_error: true,
        content:
          "Error TOOL_ACCESS_DENIED: 'fs_write' changes things and this plan is read-only, so it was not run. Use tools that only read, or tell the user the change needs a plan that may write.",
      });
      expect(outcome.trace?.error?.code).toBe('TOOL_ACCESS_DENIED');
    });
  });

  it('an unknown name is an error for the model with close names, and runs nothing', async () => {
    const { runtime, modelTools } = setup();
    await runtime.runPlan({}, async (ctx) => {
      const { message } = await modelTools.call('openai-responses', { type: 'function_call', call_id: 'c', name: 'docs_serch', arguments: '{}' }, ctx);
      expect(message.output).toBe(
        "Error MODEL_TOOL_UNKNOWN: there is no tool 'docs_serch' in this plan. Tools with close names: 'docs_search'. Call only the tools you were given.",
      );
      expect(ctx.traces).toEqual([]);
    });
  });

  it("a tool's own error reaches the model without its stack, secrets or host paths outside the plan's resources", async () => {
    const folder = await mkdtemp(join(tmpdir(), 'model-tools-'));
    try {
      const leaky = new TestTool({
        name: 'leaky',
        execute: () => {
          const error = new Error(
            `open ${folder}/notes.md failed after reading /etc/shadow with https://user:hunter2@db.internal/x?token=abc123 Authorization: Bearer sk-live-secret`,
          );
          throw error;
        },
      });
      const { runtime, modelTools } = setup([leaky]);
      await runtime.runPlan({ resources: [resourceFromPath({ id: 'work', path: folder, access: 'read' })] }, async (ctx) => {
        const { message } = await modelTools.call('openai-chat', chatCall('leaky', '{}'), ctx);
        expect(message.content).toContain(`${folder}/notes.md`);
        expect(message.content).not.toContain('/etc/shadow');
        expect(message.content).toContain('<path outside the plan>');
        for (const secret of ['hunter2', 'abc123', 'sk-live-secret', 'at TestTool', 'tool-runtime.ts']) expect(message.content).not.toContain(secret);
      });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('cuts an output over the budget with an explicit marker that names the execution', async () => {
    const big = new TestTool({ name: 'big', execute: () => 'x'.repeat(5_000) });
    const { runtime, modelTools } = setup([big], { maxResultCharacters: 1_000 });
    await runtime.runPlan({}, async (ctx) => {
      const { message, outcome } = await modelTools.call('openai-chat', chatCall('big', ''), ctx);
      expect(message.content.startsWith('x'.repeat(1_000))).toBe(true);
      expect(message.content.slice(1_000)).toBe(
        `\n…[truncated: 1000 of 5000 characters shown. The whole output is kept with execution ${outcome.result!.executionId}. Ask for less (a narrower range, a filter) to see the rest.]`,
      );
      expect(outcome.rendered.truncated).toBe(true);
      expect(outcome.result!.output).toHaveLength(5_000);
    });
  });

  it('passes images on where the provider takes them, and notes them where it does not', async () => {
    const image = new TestTool({
      name: 'shot',
      execute: () => ({
        ok: true,
        output: null,
        content: [
          { type: 'text', text: 'a chart' },
          { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        ],
      }),
    });
    const { runtime, modelTools } = setup([image]);
    await runtime.runPlan({}, async (ctx) => {
      const responses = await modelTools.call('openai-responses', { type: 'function_call', call_id: 'c1', name: 'shot', arguments: '{}' }, ctx);
      expect(responses.message.output).toEqual([
        { type: 'input_text', text: 'a chart' },
        { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
      ]);
      const anthropic = await modelTools.call('anthropic', { type: 'tool_use', id: 't', name: 'shot', input: {} }, ctx);
      expect(anthropic.message.content).toEqual([
        { type: 'text', text: 'a chart' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      ]);
      const chat = await modelTools.call('openai-chat', chatCall('shot', '{}', 'c2'), ctx);
      expect(chat.message.content).toBe('a chart\n[image image/png]');
    });
  });

  it('a cancelled plan answers every call with TOOL_CANCELLED and runs nothing', async () => {
    const { runtime, modelTools, search } = setup();
    const ctx = runtime.createPlan();
    ctx.cancellationToken.cancel('user stopped');
    const { message } = await modelTools.call('openai-chat', chatCall('docs_search', '{"query":"x"}'), ctx);
    expect(message.content).toMatch(/^Error TOOL_CANCELLED: the plan was cancelled/);
    expect(search.events.filter((event) => event.type === 'execute')).toEqual([]);
    await runtime.endPlan(ctx);
  });

  it('refuses a provider call without the provider fields, naming the field', async () => {
    const { runtime, modelTools } = setup();
    await runtime.runPlan({}, async (ctx) => {
      await expect(modelTools.call('openai-chat', { id: 'x', function: { name: 'docs_search' } }, ctx)).rejects.toMatchObject({
        code: 'MODEL_TOOLS_INVALID_CALL',
        field: 'call.function.arguments',
      });
    });
  });
});
