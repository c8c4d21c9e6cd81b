import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { ToolRuntime, silentLogger, type ToolDescriptor } from '@ca/tool-lifecycle';
import { ModelTools } from '../calls/model-tools';

// Each format, both ways, on payloads from the providers' documentation and
// recorded from their APIs (see src/__fixtures__/SOURCE.md): the definition
// this package makes from a tool is the documented one, and the documented
// call, run through a real runtime, reaches the tool with the same arguments
// and comes back in the documented shape.
const fixture = (path: string): any => JSON.parse(readFileSync(join(__dirname, '..', '__fixtures__', path), 'utf8'));

function weatherTool(name: string, description: string, inputSchema: object, answer: unknown): TestTool {
  return new TestTool({
    name,
    description,
    inputSchema: inputSchema as ToolDescriptor['inputSchema'],
    capability: { writes: false, openWorld: false },
    execute: () => answer,
  });
}

async function harness(tools: TestTool[]): Promise<{ runtime: ToolRuntime; modelTools: ModelTools }> {
  const runtime = new ToolRuntime({ sources: [new InMemoryToolSource(tools)], logger: silentLogger });
  return { runtime, modelTools: new ModelTools(runtime) };
}

describe('OpenAI Responses', () => {
  const guide = fixture('openai-responses/function-calling-guide.json');

  it('defines the documented tool, runs the documented call, answers with the documented function_call_output', async () => {
    const [documented] = guide.request.tools;
    const tool = weatherTool('get_weather', documented.description, documented.parameters, '14');
    const { runtime, modelTools } = await harness([tool]);
    await runtime.runPlan({}, async (ctx) => {
      expect(await modelTools.definitions('openai-responses', ctx)).toEqual([documented]);
      const { message, outcome } = await modelTools.call('openai-responses', guide.response.output[0], ctx);
      expect(tool.events.find((event) => event.type === 'execute')?.input).toEqual({ location: 'Paris, France' });
      expect(message).toEqual(guide.next_input_item);
      expect(outcome).toMatchObject({ ok: true, toolName: 'get_weather', callId: 'call_12345xyz', repairs: [] });
    });
  });

  it('recorded o3 call: optional parameters made nullable in strict mode, the recorded arguments run as sent', async () => {
    const recorded = fixture('openai-responses/issue-7082-o3-optional-tool-parameters.json');
    const original = { ...recorded.tools[0].parameters, required: ['query'] };
    delete original.additionalProperties;
    const tool = weatherTool('semantic_scholar_search', recorded.tools[0].description, original, { papers: [] });
    const { runtime, modelTools } = await harness([tool]);
    await runtime.runPlan({}, async (ctx) => {
      const [definition] = await modelTools.definitions('openai-responses', ctx);
      expect(definition!.strict).toBe(true);
      expect((definition!.parameters as any).properties.year).toEqual({ type: ['integer', 'null'], description: 'The publication year, formatted as YYYY.' });
      const call = recorded.output.find((item: any) => item.type === 'function_call');
      const { outcome } = await modelTools.call('openai-responses', call, ctx);
      expect(outcome.ok).toBe(true);
      expect(tool.events.find((event) => event.type === 'execute')?.input).toEqual({ query: 'machine learning', limit: 10, offset: 0, year: 0 });
      // With the nullable schema a model can say "no year": the null is taken back out, not recorded as a repair.
      const { outcome: nulls } = await modelTools.call(
        'openai-responses',
        { ...call, call_id: 'call_2', arguments: '{"query":"ml","limit":null,"offset":null,"year":null}' },
        ctx,
      );
      expect(tool.events.filter((event) => event.type === 'execute').at(-1)?.input).toEqual({ query: 'ml' });
      expect(nulls.repairs).toEqual([]);
    });
  });
});

describe('OpenAI Chat Completions', () => {
  it('defines the documented tool and answers the documented call with a tool message', async () => {
    const guide = fixture('openai-chat/function-calling-guide.json');
    const [documented] = guide.request.tools;
    const tool = weatherTool('get_weather', documented.function.description, documented.function.parameters, 14);
    const { runtime, modelTools } = await harness([tool]);
    await runtime.runPlan({}, async (ctx) => {
      expect(await modelTools.definitions('openai-chat', ctx)).toEqual([documented]);
      const { message } = await modelTools.call('openai-chat', guide.response.choices[0].message.tool_calls[0], ctx);
      expect(message).toEqual(guide.next_message);
    });
  });

  it('recorded OpenAI-compatible call; arguments that are not JSON go back to the model as an error, not to the provider', async () => {
    const recorded = fixture('openai-chat/qwen-plus-normalized-replayed-tool-arguments-success.json');
    const tool = weatherTool('set_cell_range', 'Selects a range.', { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] }, 'ok');
    const { runtime, modelTools } = await harness([tool]);
    await runtime.runPlan({}, async (ctx) => {
      const call = recorded.choices[0].message.tool_calls[0];
      expect((await modelTools.call('openai-chat', call, ctx)).message).toEqual({ role: 'tool', tool_call_id: 'call_48dc828f33d7473fa345dd', content: 'ok' });
      // The recorded provider error says such arguments must not be replayed; the model is told instead.
      expect(fixture('openai-chat/qwen-plus-malformed-replayed-tool-arguments-error.json').error.message).toMatch(/must be in JSON format/);
      const broken = { ...call, function: { ...call.function, arguments: '{"label": "A1:B10"' } };
      const { message, outcome } = await modelTools.call('openai-chat', broken, ctx);
      expect(outcome).toMatchObject({ ok: false, error: { code: 'MODEL_ARGUMENTS_INVALID_JSON' } });
      expect(message.content).toMatch(/^Error MODEL_ARGUMENTS_INVALID_JSON: the arguments of 'set_cell_range' are not valid JSON/);
      // Refused before the runtime, and traced all the same (the front door's record, with the error's code).
      expect(ctx.traces.map((trace) => [trace.toolName, trace.success, trace.error?.code])).toEqual([
        ['set_cell_range', true, undefined],
        ['set_cell_range', false, 'MODEL_ARGUMENTS_INVALID_JSON'],
      ]);
    });
  });
});

describe('Anthropic Messages', () => {
  const guide = fixture('anthropic/tool-use-guide.json');

  it('defines the documented tool, answers the documented tool_use with the documented tool_result', async () => {
    const [documented] = guide.request.tools;
    const tool = weatherTool('get_weather', documented.description, documented.input_schema, '15 degrees');
    const { runtime, modelTools } = await harness([tool]);
    await runtime.runPlan({}, async (ctx) => {
      expect(await modelTools.definitions('anthropic', ctx)).toEqual([documented]);
      const toolUse = guide.response.content.find((block: any) => block.type === 'tool_use');
      const { message } = await modelTools.call('anthropic', toolUse, ctx);
      expect(message).toEqual(guide.next_user_content[0]);
      expect(tool.events.find((event) => event.type === 'execute')?.input).toEqual({ location: 'San Francisco, CA', unit: 'celsius' });
    });
  });

  it('a failure is a tool_result with is_error, in the documented shape', async () => {
    const [documented] = guide.request.tools;
    const tool = new TestTool({
      name: 'get_weather',
      inputSchema: documented.input_schema,
      execute: () => {
        throw new Error('ConnectionError: the weather service API is not available (HTTP 500)');
      },
    });
    const { runtime, modelTools } = await harness([tool]);
    await runtime.runPlan({}, async (ctx) => {
      const toolUse = guide.response.content.find((block: any) => block.type === 'tool_use');
      const { message } = await modelTools.call('anthropic', toolUse, ctx);
      expect(Object.keys(message).sort()).toEqual(Object.keys(guide.error_result).sort());
      expect(message).toMatchObject({ type: 'tool_result', tool_use_id: guide.error_result.tool_use_id, is_error: true });
      expect(message.content).toContain(guide.error_result.content);
    });
  });

  it('recorded tool_use with a host path in its input: the input reaches the tool unchanged', async () => {
    const recorded = fixture('anthropic/issue-11719-quoted-tool-input.json');
    const schema = {
      type: 'object',
      properties: { website_path: { type: 'string' }, tasks: { type: 'array', items: { type: 'object' } } },
      required: ['website_path', 'tasks'],
    };
    const tool = weatherTool('website_update', 'Updates a website.', schema, 'done');
    const { runtime, modelTools } = await harness([tool]);
    await runtime.runPlan({}, async (ctx) => {
      const { message } = await modelTools.call('anthropic', recorded.content[0], ctx);
      expect(message).toEqual({ type: 'tool_result', tool_use_id: 'toolu_01JKBd25gEfr9ZpVvn8quK2v', content: 'done' });
      expect(tool.events.find((event) => event.type === 'execute')?.input).toEqual(recorded.content[0].input);
    });
  });
});

describe('Gemini', () => {
  it('declares the documented function, runs the documented functionCall, answers with a functionResponse', async () => {
    const guide = fixture('gemini/function-calling-guide.json');
    const [documented] = guide.request.tools[0].functionDeclarations;
    const tool = weatherTool('schedule_meeting', documented.description, documented.parameters, { scheduled: true });
    const { runtime, modelTools } = await harness([tool]);
    await runtime.runPlan({}, async (ctx) => {
      expect(await modelTools.definitions('gemini', ctx)).toEqual([documented]);
      const part = guide.response.candidates[0].content.parts[0];
      const { message } = await modelTools.call('gemini', part, ctx);
      expect(message).toEqual({ functionResponse: { name: 'schedule_meeting', response: { output: { scheduled: true } } } });
      expect(tool.events.find((event) => event.type === 'execute')?.input).toEqual(part.functionCall.args);
    });
  });

  it('recorded Gemini 3 part (thought signature, no id): the call runs and the response carries no id', async () => {
    const recorded = fixture('gemini/google-tool-call.json');
    const tool = weatherTool('weather', 'Weather.', { type: 'object', properties: { location: { type: 'string' } } }, 'sunny');
    const { runtime, modelTools } = await harness([tool]);
    await runtime.runPlan({}, async (ctx) => {
      const { message } = await modelTools.call('gemini', recorded.candidates[0].content.parts[0], ctx);
      expect(message).toEqual({ functionResponse: { name: 'weather', response: { output: 'sunny' } } });
    });
  });
});

describe('MCP', () => {
  const spec = fixture('mcp/tools-spec.json');

  it('lists the documented Tool with annotations from the capability, answers the documented call with the documented result', async () => {
    const [documented] = spec.list_result.tools;
    const tool = new TestTool({
      name: 'get_weather',
      description: documented.description,
      inputSchema: documented.inputSchema,
      capability: { writes: false, openWorld: true, idempotent: true },
      execute: () => ({ ok: true, output: spec.call_result.content[0].text, content: spec.call_result.content }),
    });
    const titled = new InMemoryToolSource([
      Object.assign(Object.create(tool), { descriptor: Object.freeze({ ...tool.descriptor, annotations: { title: documented.title } }) }),
    ]);
    const runtime = new ToolRuntime({ sources: [titled], logger: silentLogger });
    const modelTools = new ModelTools(runtime);
    await runtime.runPlan({}, async (ctx) => {
      expect(await modelTools.definitions('mcp', ctx)).toEqual([
        { ...documented, annotations: { title: documented.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true } },
      ]);
      const { message } = await modelTools.call('mcp', spec.call_request.params, ctx);
      expect({ ...message, isError: false }).toEqual(spec.call_result);
    });
  });

  it('a tool failure is a CallToolResult with isError and the text for the model', async () => {
    const tool = new TestTool({
      name: 'get_weather',
      inputSchema: spec.list_result.tools[0].inputSchema,
      execute: () => ({ ok: false, error: Object.assign(new Error('rate limited'), { code: 'WEATHER_LIMIT' }), content: spec.error_result.content }),
    });
    const { runtime, modelTools } = await harness([tool]);
    await runtime.runPlan({}, async (ctx) => {
      const { message } = await modelTools.call('mcp', spec.call_request.params, ctx);
      expect(message.isError).toBe(true);
      expect(message.content[0]).toMatchObject({ type: 'text' });
      expect((message.content[0] as { text: string }).text).toMatch(/^Error WEATHER_LIMIT: 'get_weather' failed: rate limited/);
    });
  });
});
