import { ToolRuntime, silentLogger } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { MODEL_TOOL_FORMATS } from '../names/provider-names';
import { createAiSdkTools } from '../ai-sdk';
import { ModelTools } from './model-tools';

// The code-mode offer of ModelTools on its own: which tools a model is given, and how the program
// tool is described per plan. The program tool here is a plain tool of that name; the tests with
// @ca/code-mode's own `code.run` are in the code-mode front-door suite.
function setup(options: ConstructorParameters<typeof ModelTools>[1]) {
  const program = new TestTool({
    name: 'code.run',
    description: 'Runs a program.',
    inputSchema: { type: 'object', properties: { program: { type: 'string' } }, required: ['program'], additionalProperties: false },
    capability: { writes: false },
    execute: (input) => ({ result: (input as { program: string }).program.length, logs: [] }),
  });
  const tools = [
    program,
    new TestTool({ name: 'docs.search', description: 'Searches the docs.', capability: { writes: false } }),
    new TestTool({ name: 'fs.write', description: 'Writes a file.', capability: { writes: true, checkpointable: true } }),
  ];
  const runtime = new ToolRuntime({ sources: [new InMemoryToolSource(tools)], logger: silentLogger, options: { searchTool: true } });
  return { runtime, modelTools: new ModelTools(runtime, options) };
}

const readWrite = { policy: { readOnly: false, requireCheckpoint: false } };
const readOnly = { policy: { readOnly: true, requireCheckpoint: false } };

describe('ModelTools in code mode', () => {
  it('offers the program tool and the search instead of the catalog, in every format', async () => {
    const { modelTools } = setup({ codeMode: true });
    const plain = new ModelTools(setup({}).runtime);
    expect((await plain.tools(readWrite)).map((tool) => tool.name)).toEqual(['code.run', 'docs.search', 'fs.write', 'tools.search']);
    for (const format of MODEL_TOOL_FORMATS) {
      const definitions = (await modelTools.definitions(format, readWrite)) as unknown as Record<string, unknown>[];
      const names = definitions.map((definition) => (definition['function'] as { name?: string } | undefined)?.name ?? definition['name']);
      expect({ format, names }).toEqual({
        format,
        names: format === 'mcp' || format === 'gemini' ? ['code.run', 'tools.search'] : ['code_run', 'tools_search'],
      });
    }
  });

  it('lists no stub of the tools the plan refuses (the frameworks get two tools, not the catalog)', async () => {
    const { runtime, modelTools } = setup({ codeMode: true, refused: 'omit' });
    await runtime.runPlan({ policy: { readOnly: true } }, async (plan) => {
      expect(Object.keys(await createAiSdkTools(modelTools, plan))).toEqual(['code_run', 'tools_search']);
    });
    expect((await modelTools.tools(readOnly, undefined, { refused: 'mark' })).map((tool) => tool.name)).toEqual(['code.run', 'tools.search']);
  });

  it("describes the program tool for each plan with the offer's describe, and leaves the search alone", async () => {
    const seen: boolean[] = [];
    const { modelTools } = setup({
      codeMode: {
        describe: (plan) => {
          seen.push(plan.policy.readOnly);
          return plan.policy.readOnly
            ? 'Runs a program. declare const tools: { docs_search(): Promise<unknown> };'
            : 'Runs a program. declare const tools: { docs_search(): Promise<unknown>; fs_write(): Promise<unknown> };';
        },
      },
    });
    const [forReading] = await modelTools.definitions('anthropic', readOnly);
    const [forWriting, search] = await modelTools.definitions('anthropic', readWrite);
    expect(forReading!.description).not.toContain('fs_write');
    expect(forWriting!.description).toContain('fs_write');
    expect(search!.description).not.toContain('declare');
    expect(seen).toEqual([true, false]);
  });

  it('offers no search with search: false, and another program tool by name', async () => {
    const { modelTools } = setup({ codeMode: { search: false } });
    expect((await modelTools.tools(readWrite)).map((tool) => tool.name)).toEqual(['code.run']);
    const other = setup({ codeMode: { toolName: 'docs.search', search: false } }).modelTools;
    expect((await other.tools(readWrite)).map((tool) => tool.name)).toEqual(['docs.search']);
  });

  it('runs a call of the program tool through the runtime, with its trace', async () => {
    const { runtime, modelTools } = setup({ codeMode: true });
    await runtime.runPlan({}, async (plan) => {
      const call = { id: 'call_Qx81mTz0', type: 'function', function: { name: 'code_run', arguments: '{"program":"return 1"}' } };
      const { message, outcome } = await modelTools.call('openai-chat', call, plan);
      expect(outcome.ok).toBe(true);
      expect(message.content).toBe('{"result":8,"logs":[]}');
      expect(plan.traces.map((trace) => trace.toolName)).toEqual(['code.run']);
    });
  });

  it('refuses an offer it cannot use, naming the field', () => {
    const { runtime } = setup({});
    expect(() => new ModelTools(runtime, { codeMode: 'yes' as never })).toThrow(
      expect.objectContaining({ code: 'MODEL_TOOLS_INVALID_ARGUMENT', message: expect.stringContaining('codeMode') }),
    );
    expect(() => new ModelTools(runtime, { codeMode: { toolName: '' } })).toThrow(
      expect.objectContaining({ message: expect.stringContaining('codeMode.toolName') }),
    );
    expect(() => new ModelTools(runtime, { codeMode: { describe: 'text' as never } })).toThrow(
      expect.objectContaining({ message: expect.stringContaining('codeMode.describe') }),
    );
  });
});
