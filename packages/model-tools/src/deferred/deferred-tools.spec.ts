import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ToolRuntime, ToolSet, type ToolInstance } from '@ca/tool-lifecycle';
import { TestTool } from '@ca/tool-lifecycle/testing';
import { ModelTools } from '../calls/model-tools';
import { ModelToolsError } from '../errors/model-tools-error';
import type { AnthropicTool, AnthropicToolResult } from '../providers/anthropic';
import type { OpenAiResponsesToolSearchOutput, OpenAiResponsesToolSearchTool } from '../providers/openai-responses';
import { DeferredTools } from './deferred-tools';

const fixtures = join(__dirname, '..', '__fixtures__');
const anthropicFixture = JSON.parse(readFileSync(join(fixtures, 'anthropic', 'tool-search-custom.json'), 'utf8')) as {
  deferred_tool: Record<string, unknown>;
  tool_result: Record<string, unknown> & { content: Record<string, unknown>[] };
};
const openAiFixture = JSON.parse(readFileSync(join(fixtures, 'openai-responses', 'client-tool-search.json'), 'utf8')) as {
  tool_search_tool: Record<string, unknown>;
  tool_search_call: Record<string, unknown>;
  tool_search_output: Record<string, unknown> & { tools: Record<string, unknown>[] };
};

function tools(): TestTool[] {
  return [
    new TestTool({
      name: 'weather.get_forecast',
      description: 'Returns the weather forecast for a city.',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
      capability: { writes: false, openWorld: false },
      execute: (input) => `sunny in ${(input as { city: string }).city}`,
    }),
    new TestTool({ name: 'files.delete', description: 'Deletes a file.', capability: { writes: true, checkpointable: true, openWorld: false } }),
    new TestTool({
      name: 'currency.convert',
      description: 'Converts an amount from one currency to another.',
      capability: { writes: false, openWorld: false },
    }),
    new TestTool({ name: 'notes.list', description: 'Lists the notes.', capability: { writes: false, openWorld: false } }),
  ];
}

function runtimeWith(searchTool = true): ToolRuntime {
  return new ToolRuntime({
    sources: [new ToolSet({ id: 'test', kind: 'custom', tools: tools() as ToolInstance[], schemaTrust: 'trusted' })],
    options: { searchTool, outputBudget: { bytes: 4_096 } },
  });
}

const keys = (value: object): string[] => Object.keys(value).sort();

describe('deferred loading, Anthropic (defer_loading and tool_reference)', () => {
  it('defers every tool but the runtime’s own and those always loaded, and answers a search with tool references', async () => {
    const runtime = runtimeWith();
    await runtime.runPlan({ policy: { readOnly: true } }, async (plan) => {
      const deferred = new DeferredTools(new ModelTools(runtime), plan, { format: 'anthropic', alwaysLoaded: ['notes.list'] });
      expect(deferred.loading).toBe('native');
      const definitions = await deferred.definitions();
      const byName = new Map(definitions.map((definition) => [definition.name, definition]));
      // A read-only plan: the tool that deletes is not offered at all.
      expect([...byName.keys()].sort()).toEqual(['currency_convert', 'notes_list', 'results_grep', 'results_read', 'tools_search', 'weather_get_forecast']);
      expect(byName.get('tools_search')?.defer_loading).toBeUndefined();
      expect(byName.get('results_read')?.defer_loading).toBeUndefined();
      expect(byName.get('notes_list')?.defer_loading).toBeUndefined();
      const forecast = byName.get('weather_get_forecast') as AnthropicTool;
      expect(keys(forecast)).toEqual(keys(anthropicFixture.deferred_tool));
      expect(forecast.defer_loading).toBe(true);

      const found = await deferred.call({ type: 'tool_use', id: 'toolu_1', name: 'tools_search', input: { query: 'weather forecast for a city' } });
      const result = found.message as AnthropicToolResult;
      expect(keys(result)).toEqual(keys(anthropicFixture.tool_result));
      expect(result.content[0]).toEqual({ type: 'tool_reference', tool_name: 'weather_get_forecast' });
      expect(keys(result.content[0] as object)).toEqual(keys(anthropicFixture.tool_result.content[0] as object));
      // Every reference names a tool of the request, deferred.
      for (const reference of result.content as unknown as { tool_name: string }[]) expect(byName.get(reference.tool_name)?.defer_loading).toBe(true);
      expect(found.found).toContain('weather.get_forecast');

      const called = await deferred.call({ type: 'tool_use', id: 'toolu_2', name: 'weather_get_forecast', input: { city: 'Lyon' } });
      expect(called.message).toEqual({ type: 'tool_result', tool_use_id: 'toolu_2', content: 'sunny in Lyon' });
      expect(plan.traces.map((trace) => trace.toolName)).toEqual(['tools.search', 'weather.get_forecast']);

      const none = await deferred.call({ type: 'tool_use', id: 'toolu_3', name: 'tools_search', input: { query: 'zzqx' } });
      expect((none.message as AnthropicToolResult).content).toEqual([{ type: 'text', text: 'No tool matched "zzqx". Try other words.' }]);
    });
  });
});

describe('deferred loading, OpenAI Responses (client-executed tool_search)', () => {
  it('offers the client tool_search, answers a tool_search_call with the definitions it loads, and runs a loaded tool', async () => {
    const runtime = runtimeWith();
    await runtime.runPlan({}, async (plan) => {
      const deferred = new DeferredTools(new ModelTools(runtime), plan, { format: 'openai-responses' });
      const definitions = await deferred.definitions();
      const search = definitions[0] as OpenAiResponsesToolSearchTool;
      expect(keys(search)).toEqual(keys(openAiFixture.tool_search_tool));
      expect(search).toMatchObject({ type: 'tool_search', execution: 'client' });
      expect(definitions.map((definition) => ('name' in definition ? definition.name : definition.type))).toEqual([
        'tool_search',
        'results_grep',
        'results_read',
      ]);

      const call = { ...openAiFixture.tool_search_call, arguments: { query: 'convert an amount of money to another currency', k: 2 } };
      const answered = await deferred.call(call);
      const output = answered.message as OpenAiResponsesToolSearchOutput;
      expect(keys(output)).toEqual(keys(openAiFixture.tool_search_output));
      expect(output).toMatchObject({ type: 'tool_search_output', call_id: 'call_search_1', execution: 'client', status: 'completed' });
      expect(output.tools[0]?.name).toBe('currency_convert');
      expect(keys(output.tools[0] as object)).toEqual([...keys(openAiFixture.tool_search_output.tools[0] as object), 'strict'].sort());
      expect(output.tools[0]?.defer_loading).toBe(true);
      expect(deferred.loaded).toContain('currency.convert');

      const run = await deferred.call({ type: 'function_call', call_id: 'call_2', name: 'currency_convert', arguments: '{}' });
      expect(run.outcome.ok).toBe(true);
      expect(run.message).toMatchObject({ type: 'function_call_output', call_id: 'call_2' });
    });
  });
});

describe('deferred loading, generic (the tools found join the next request)', () => {
  it('offers the runtime’s tools first, lists what a search found, and adds it to the next definitions', async () => {
    const runtime = runtimeWith();
    await runtime.runPlan({}, async (plan) => {
      const deferred = new DeferredTools(new ModelTools(runtime), plan, { format: 'openai-chat' });
      expect(deferred.loading).toBe('generic');
      expect((await deferred.definitions()).map((definition) => definition.function.name)).toEqual(['results_grep', 'results_read', 'tools_search']);
      const found = await deferred.call({ id: 'c1', type: 'function', function: { name: 'tools_search', arguments: '{"query":"delete a file"}' } });
      expect(found.message).toEqual({
        role: 'tool',
        tool_call_id: 'c1',
        content: 'Found 1 tool; it is offered from your next turn:\n- files_delete: Deletes a file.',
      });
      expect((await deferred.definitions()).map((definition) => definition.function.name)).toEqual([
        'files_delete',
        'results_grep',
        'results_read',
        'tools_search',
      ]);
    });
  });

  it('refuses native loading for a format without it, and a runtime without tools.search', async () => {
    const runtime = runtimeWith(false);
    const plan = runtime.createPlan();
    expect(() => new DeferredTools(new ModelTools(runtime), plan, { format: 'gemini', loading: 'native' })).toThrow(ModelToolsError);
    await expect(new DeferredTools(new ModelTools(runtime), plan, { format: 'anthropic' }).definitions()).rejects.toThrow(
      /tools\.search \(build it with options: \{ searchTool: true \}\)/,
    );
    await runtime.endPlan(plan);
  });
});
