import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourceFromPath } from '@ca/tool-context';
import { MemoryCallJournal, ToolRuntime, silentLogger } from '@ca/tool-lifecycle';
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

const chatCall = (name: string, args: string, id = 'call_DdmO9pD3xa9XTPNJ32zg2hcA') => ({ id, type: 'function', function: { name, arguments: args } });

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
      expect(message).toEqual({ role: 'tool', tool_call_id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', content: JSON.stringify({ query: 'x', limit: 5, tags: ['a'] }) });
      // The same call id and arguments again: the recorded result, not a second execution.
      await modelTools.call('openai-chat', chatCall('docs_search', '{"query":"x","limit":"5","tags":"a"}'), ctx);
      expect(ctx.traces.at(-1)!.replayedFrom).toBe(ctx.traces.at(-2)!.executionId);
    });
  });

  it('the same call id made again in the plan (a durable loop replaying a turn) is answered from the recorded result, not run twice', async () => {
    const { runtime, search } = setup();
    const modelTools = new ModelTools(runtime);
    const runs = () => search.events.filter((event) => event.type === 'execute').length;
    await runtime.runPlan({}, async (ctx) => {
      const id = 'toolu_01A09q90qw90lq917835lq9';
      const first = await modelTools.call('anthropic', { type: 'tool_use', id, name: 'docs_search', input: { query: 'plans' } }, ctx);
      const again = await modelTools.call('anthropic', { type: 'tool_use', id, name: 'docs_search', input: { query: 'plans' } }, ctx);
      expect(runs()).toBe(1);
      expect(again.message).toEqual(first.message);
      expect(again.outcome.trace?.replayedFrom).toBe(first.outcome.trace?.executionId);
      // The key is the plan, the tool, the arguments and the id: other arguments under the same id are another call.
      await modelTools.call('anthropic', { type: 'tool_use', id, name: 'docs_search', input: { query: 'other' } }, ctx);
      expect(runs()).toBe(2);
    });
    // Without callIdAsStep, every call runs.
    const plain = new ModelTools(runtime, { callIdAsStep: false });
    await runtime.runPlan({}, async (ctx) => {
      for (let turn = 0; turn < 2; turn++) await plain.call('openai-chat', chatCall('docs_search', '{"query":"q"}'), ctx);
      expect(runs()).toBe(4);
      expect(ctx.traces.map((trace) => trace.replayedFrom)).toEqual([undefined, undefined]);
    });
  });

  it("a turn replayed by another process from the plan's call journal does not run the tool again; an id that names nothing is refused there", async () => {
    const journal = new MemoryCallJournal({ host: 'host-a' });
    const a = setup();
    const planA = a.runtime.createPlan({ planId: 'durable-1', journal });
    const toolUse = { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'docs_search', input: { query: 'plans' } };
    const first = await a.modelTools.call('anthropic', toolUse, planA);
    expect(a.search.events.filter((event) => event.type === 'execute')).toHaveLength(1);
    await a.runtime.endPlan(planA);
    // Another process: a new runtime, the journal's records, the same plan id, the same turn of the model.
    const b = setup();
    const planB = b.runtime.createPlan({ planId: 'durable-1', journal: new MemoryCallJournal({ records: journal.records() }) });
    const again = await b.modelTools.call('anthropic', toolUse, planB);
    expect(b.search.events.filter((event) => event.type === 'execute')).toEqual([]);
    expect(again.message).toEqual(first.message);
    expect(again.outcome.trace?.replayedFrom).toBe(first.outcome.trace?.executionId);
    // An id that cannot tell calls apart names nothing: in a plan that keeps a journal the call is refused, not run under a guessed key.
    const weak = await b.modelTools.call('openai-chat', chatCall('docs_search', '{"query":"other"}', 'call_0'), planB);
    expect(weak.outcome).toMatchObject({ ok: false, error: { code: 'TOOL_INVALID_ARGUMENT' } });
    expect(weak.message.content).toMatch(/^Error TOOL_INVALID_ARGUMENT: this plan records every call under the id the model API gives it/);
    expect(b.search.events.filter((event) => event.type === 'execute')).toEqual([]);
    await b.runtime.endPlan(planB);
  });

  it('an id that cannot tell calls apart (numbered per response, derived from the name, empty) is not a step: a later identical call runs', async () => {
    const { runtime, modelTools, search } = setup();
    const runs = () => search.events.filter((event) => event.type === 'execute').length;
    await runtime.runPlan({}, async (ctx) => {
      // Two turns of a server that numbers each response's calls from 0, one that derives ids from the name, one that sends none.
      for (const id of ['call_0', 'call_0', 'call-docs_search', 'call-docs_search', '', '']) {
        await modelTools.call('openai-chat', chatCall('docs_search', '{"query":"weather"}', id), ctx);
      }
      expect(runs()).toBe(6);
      expect(ctx.traces.every((trace) => trace.replayedFrom === undefined && trace.success)).toBe(true);
      // Gemini's functionCall without an id: no step either.
      await modelTools.call('gemini', { functionCall: { name: 'docs.search', args: { query: 'weather' } } }, ctx);
      await modelTools.call('gemini', { functionCall: { name: 'docs.search', args: { query: 'weather' } } }, ctx);
      expect(runs()).toBe(8);
    });
  });

  it('every call the model makes is traced: a name no tool has and arguments that are not JSON leave a trace with their code, and no argument text', async () => {
    const { runtime, modelTools, search } = setup();
    await runtime.runPlan({}, async (ctx) => {
      const unknown = await modelTools.call('openai-chat', chatCall('docs_serch', '{"query":"x"}'), ctx);
      const broken = await modelTools.call('openai-chat', chatCall('docs_search', '{"query":"sk-live-0123456789abcdef", '), ctx);
      const ran = await modelTools.run(ctx, 'no.such.tool', { value: {} }, { callId: 'call_DdmO9pD3xa9XTPNJ32zg2hcB', providerName: 'no_such_tool' });
      expect(search.events.filter((event) => event.type === 'execute')).toEqual([]);
      expect(ctx.traces.map((trace) => [trace.toolName, trace.success, trace.error?.code, trace.resultSizeBytes])).toEqual([
        ['docs_serch', false, 'MODEL_TOOL_UNKNOWN', 0],
        ['docs.search', false, 'MODEL_ARGUMENTS_INVALID_JSON', 0],
        ['no.such.tool', false, 'MODEL_TOOL_UNKNOWN', 0],
      ]);
      expect([unknown.outcome.trace, broken.outcome.trace, ran.trace]).toEqual([...ctx.traces]);
      expect(new Set(ctx.traces.map((trace) => trace.executionId)).size).toBe(3);
      expect(JSON.stringify(ctx.traces)).not.toContain('sk-live');
      // The model still reads the parser's reason; the trace keeps none of the text.
      expect(broken.message.content).toMatch(/^Error MODEL_ARGUMENTS_INVALID_JSON/);
      // A name the model made up is kept as a label: capped, secrets redacted.
      const hostile = await modelTools.call('openai-chat', chatCall(`Bearer sk-live-0123456789abcdef ${'y'.repeat(100_000)}`, '{}'), ctx);
      expect(hostile.outcome.trace?.error?.code).toBe('MODEL_TOOL_UNKNOWN');
      expect(hostile.outcome.trace!.toolName.length).toBeLessThan(300);
      expect(hostile.outcome.trace!.error!.message.length).toBeLessThan(600);
      expect(JSON.stringify(ctx.traces)).not.toContain('sk-live');
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
      expect(ctx.traces.map((trace) => [trace.toolName, trace.success, trace.error?.code])).toEqual([['docs_serch', false, 'MODEL_TOOL_UNKNOWN']]);
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
