import { normalizeCapability, type ToolCapabilityInput } from '@ca/domain';
import { RecordingLogger } from '../testing';
import { ToolSet, toolSuccess, type ToolInstance } from '../tool';
import { ToolRuntime } from '../tool-runtime';
import type { ToolsSearchOutput } from './search-tool';

function tool(name: string, description: string, capability: ToolCapabilityInput): ToolInstance {
  return {
    descriptor: {
      name,
      description,
      source: 'custom',
      capability: normalizeCapability(capability),
      inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'Which file' } } },
    },
    execute: async () => toolSuccess({ ran: name }),
  };
}

const tools = [
  tool('files.read_text', 'Read a text file and return its content.', { writes: false, checkpointable: true, openWorld: false }),
  tool('files.delete', 'Delete a file or a folder.', { writes: true, checkpointable: true, openWorld: false }),
  tool('web.fetch_page', 'Fetch a web page and return its text.', { writes: false, openWorld: true }),
];

function runtime(options: { searchTool?: boolean; outputBudget?: object } = { searchTool: true }): ToolRuntime {
  return new ToolRuntime({ logger: new RecordingLogger(), sources: [new ToolSet({ id: 'files', kind: 'custom', tools, schemaTrust: 'trusted' })], options });
}

describe('tools.search, the runtime’s search tool', () => {
  it('is offered only with searchTool, as a read-only built-in tool', async () => {
    expect((await runtime({}).listTools()).map((descriptor) => descriptor.name)).not.toContain('tools.search');
    const descriptor = await runtime().describe('tools.search');
    expect(descriptor.source).toBe('builtin');
    expect(descriptor.capability).toMatchObject({ writes: false, openWorld: false, destructive: false });
  });

  it('finds the tools of every source that the calling plan may run, never the runtime’s own tools', async () => {
    const made = runtime({ searchTool: true, outputBudget: { bytes: 4_096 } });
    await made.runPlan({ policy: { readOnly: true, network: 'deny' } }, async (ctx) => {
      const found = await made.execute('tools.search', { query: 'remove or read a file', k: 10 }, ctx);
      expect(found.ok).toBe(true);
      const names = (found.output as ToolsSearchOutput).tools.map((hit) => hit.name);
      expect(names).toEqual(['files.read_text']);
      const all = await made.execute('tools.search', { query: 'results search read stored tools', k: 20 }, ctx);
      expect((all.output as ToolsSearchOutput).tools.map((hit) => hit.name)).not.toEqual(expect.arrayContaining(['results.read']));
    });
    await made.runPlan({}, async (ctx) => {
      const found = await made.execute('tools.search', { query: 'remove a file', k: 1, schemas: true }, ctx);
      expect((found.output as ToolsSearchOutput).tools).toEqual([
        {
          name: 'files.delete',
          description: 'Delete a file or a folder.',
          source: 'custom',
          inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'Which file' } } },
        },
      ]);
    });
  });

  it('answers a pattern the linear-time engine cannot run with a failed result, and bad input with the schema’s error', async () => {
    const made = runtime();
    await made.runPlan({}, async (ctx) => {
      const pattern = await made.execute('tools.search', { query: '(a)\\1', mode: 'regex' }, ctx);
      expect(pattern.ok).toBe(false);
      if (!pattern.ok) expect(pattern.error.code).toBe('TOOL_INVALID_ARGUMENT');
      const regex = await made.execute('tools.search', { query: '^files\\.', mode: 'regex' }, ctx);
      expect((regex.output as ToolsSearchOutput).tools.map((hit) => hit.name)).toEqual(['files.delete', 'files.read_text']);
      const invalid = await made.execute('tools.search', { query: '', k: 50 }, ctx);
      expect(invalid.ok).toBe(false);
      if (!invalid.ok) expect(invalid.error.code).toBe('TOOL_SCHEMA_VALIDATION_FAILED');
    });
  });
});
