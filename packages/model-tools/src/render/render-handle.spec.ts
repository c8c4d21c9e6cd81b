import { MemoryResultStore, ToolRuntime, ToolSet, toolSuccess, type ToolInstance } from '@ca/tool-lifecycle';
import { TestTool } from '@ca/tool-lifecycle/testing';
import { ModelTools } from '../calls/model-tools';

const LOG = Array.from({ length: 2_000 }, (_, index) => `${index + 1} request served`).join('\n');

function runtimeWith(options: { outputBudget?: { bytes: number } }, store = new MemoryResultStore()): ToolRuntime {
  const linked: ToolInstance = {
    descriptor: {
      name: 'reports.find',
      description: 'Finds a report.',
      source: 'custom',
      capability: { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false },
    },
    execute: async () =>
      toolSuccess('one report', {
        content: [
          { type: 'text', text: 'one report' },
          { type: 'resource_link', uri: 'file:///reports/q3.pdf', name: 'q3.pdf', mimeType: 'application/pdf', description: 'The third quarter.' },
        ],
      }),
  };
  const tools = [
    new TestTool({ name: 'logs.dump', description: 'Dumps the log.', capability: { writes: false, openWorld: false }, execute: () => LOG }),
    new TestTool({
      name: 'data.rows',
      description: 'Returns rows.',
      capability: { writes: false, openWorld: false },
      execute: () => ({ rows: Array.from({ length: 1_000 }, (_, id) => ({ id })) }),
    }),
  ];
  return new ToolRuntime({
    resultStore: store,
    sources: [new ToolSet({ id: 'test', kind: 'custom', tools: [...(tools as ToolInstance[]), linked], schemaTrust: 'trusted' })],
    options,
  });
}

const call = (id: string, name: string, args: object) => ({ id, type: 'function' as const, function: { name, arguments: JSON.stringify(args) } });

describe('results kept behind handles, as a model reads them', () => {
  it('renders a handle with its preview and how to read the rest by the names the model knows', async () => {
    const runtime = runtimeWith({ outputBudget: { bytes: 4_096 } });
    const modelTools = new ModelTools(runtime);
    await runtime.runPlan({}, async (plan) => {
      const { message, outcome } = await modelTools.call('openai-chat', call('c1', 'logs_dump', {}), plan);
      const handle = outcome.result?.handle?.handle as string;
      expect(handle).toMatch(/^res-/);
      expect(message.content).toContain(`it is kept as ${handle} for the rest of the plan (text, ${Buffer.byteLength(LOG)} bytes, 2000 lines)`);
      expect(message.content).toContain('First lines:\n1 request served\n2 request served');
      expect(message.content).toContain('Last lines:');
      expect(message.content.endsWith('2000 request served\n' + message.content.split('\n').at(-1))).toBe(true);
      expect(message.content).toContain(`results_read {"handle":"${handle}","lines":{"from":1,"to":100}}`);
      expect(message.content).toContain(`results_grep {"handle":"${handle}"`);
      // The model reads on, by the name it was told.
      const lines = await modelTools.call('openai-chat', call('c2', 'results_read', { handle, lines: { from: 1500, to: 1501 } }), plan);
      expect(JSON.parse(lines.message.content)).toMatchObject({ text: '1500 request served\n1501 request served\n' });
      const json = await modelTools.call('gemini', { name: 'data.rows', args: {} }, plan);
      expect(json.outcome.rendered.text).toContain('(JSON, ');
      expect(json.outcome.rendered.text).toContain('Its shape:\n{ "rows": [ 1000 × { "id": number } ] }');
      expect(json.outcome.rendered.text).toContain('results.read {"handle":"');
      const unknown = await modelTools.call('openai-chat', call('c3', 'results_read', { handle: 'res-aaaaaaaaaaaaaaaaaaaaaaaa' }), plan);
      expect(unknown.message.content).toMatch(/^Error TOOL_RESULT_NOT_FOUND: this plan has no stored result with that handle/);
      const outOfRange = await modelTools.call('openai-chat', call('c4', 'results_read', { handle, lines: { from: 9_000 } }), plan);
      expect(outOfRange.message.content).toBe(
        'Error TOOL_RESULT_READ_INVALID: line 9000 is not in it (it has 2000 lines, from 1). Ask for lines from 1 to 2000.',
      );
    });
  });

  it('keeps an output behind a handle when it is over the door’s own limit and the runtime has a store; cuts it with a marker otherwise', async () => {
    const stored = runtimeWith({ outputBudget: { bytes: 1_000_000 } });
    await stored.runPlan({}, async (plan) => {
      const { outcome } = await new ModelTools(stored, { maxResultCharacters: 1_000 }).call('openai-chat', call('c1', 'logs_dump', {}), plan);
      expect(outcome.result?.handle).toBeDefined();
      expect(outcome.rendered.truncated).toBe(false);
      expect(outcome.rendered.text).toContain('results_read');
    });
    const plain = runtimeWith({});
    await plain.runPlan({}, async (plan) => {
      const { outcome } = await new ModelTools(plain, { maxResultCharacters: 1_000 }).call('openai-chat', call('c1', 'logs_dump', {}), plan);
      expect(outcome.result?.handle).toBeUndefined();
      expect(outcome.rendered.truncated).toBe(true);
      expect(outcome.rendered.text).toMatch(/…\[truncated: 1000 of \d+ characters shown\. The whole output is kept with execution /);
    });
  });

  it('passes a resource link on as a resource_link block in MCP results, and names it in text for the other APIs', async () => {
    const runtime = runtimeWith({});
    const modelTools = new ModelTools(runtime);
    await runtime.runPlan({}, async (plan) => {
      const mcp = await modelTools.call('mcp', { name: 'reports.find', arguments: {} }, plan);
      expect(mcp.message.content).toEqual([
        { type: 'text', text: 'one report' },
        { type: 'resource_link', uri: 'file:///reports/q3.pdf', name: 'q3.pdf', description: 'The third quarter.', mimeType: 'application/pdf' },
      ]);
      const chat = await modelTools.call('openai-chat', call('c1', 'reports_find', {}), plan);
      expect(chat.message.content).toBe('one report\n[resource link file:///reports/q3.pdf (q3.pdf)]');
    });
  });
});
