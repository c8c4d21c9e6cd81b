// A model's way through many tools, over the five real sources: server-everything
// and server-filesystem over stdio, the built-in tools, the Agent Skills
// fixtures, custom tools and a wrapped tool. The MCP servers' tool lists are
// cached by a first runtime; the second searches everything without starting a
// server, loads what it found the way Anthropic's API loads deferred tools, runs
// it (starting only that tool's server), and reads a large output by parts.
import { spawn, type SpawnOptions } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createBuiltinAdapter } from '@ca/adapters-builtin';
import { createCustomAdapter, defineTool } from '@ca/adapters-custom';
import { MemoryToolListCache, createMcpAdapter, type McpSpawn } from '@ca/adapters-mcp';
import { createSkillsAdapter } from '@ca/adapters-skills';
import { createWrappedAdapter, fromFunction } from '@ca/adapters-wrapped';
import { DeferredTools, ModelTools, type AnthropicToolResult } from '@ca/model-tools';
import { resourceFromPath } from '@ca/tool-context';
import { MemoryResultStore, ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';

const workspace = join(__dirname, '..', '..', '..');
const server = (name: string): string => join(dirname(require.resolve(`@modelcontextprotocol/${name}/package.json`)), 'dist', 'index.js');
const LINES = 20_000;

describe('search over five real sources, deferred loading, and a large output read by parts', () => {
  let folder: string;
  const pids: number[] = [];
  const cache = new MemoryToolListCache();
  const store = new MemoryResultStore();
  const countingSpawn: McpSpawn = (command, args, options: SpawnOptions) => {
    const child = spawn(command, [...args], options);
    if (child.pid !== undefined) pids.push(child.pid);
    return child;
  };

  beforeAll(async () => {
    folder = await realpath(await mkdtemp(join(tmpdir(), 'ca-handles-')));
    const log = Array.from({ length: LINES }, (_, index) =>
      index === 12_344 ? `${index + 1} ERROR disk full on /var/data, api_key=sk-${'x'.repeat(30)}` : `${index + 1} INFO request served`,
    ).join('\n');
    await writeFile(join(folder, 'access.log'), log);
  });

  afterAll(async () => {
    for (const pid of pids) expect(isProcessAlive(pid)).toBe(false);
    await rm(folder, { recursive: true, force: true });
  });

  function runtime(): ToolRuntime {
    const logger = new RecordingLogger();
    const words = defineTool({
      name: 'text.count-words',
      description: 'Counts the words of a text.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      capability: { writes: false, openWorld: false },
      execute: ({ text }) => ({ words: text.split(/\s+/).filter(Boolean).length }),
    });
    const shout = fromFunction(async ({ text }: { text: string }) => text.toUpperCase(), {
      name: 'text.shout',
      description: 'Turns a text into capital letters.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      capability: { writes: false, idempotent: true, openWorld: false },
    });
    return new ToolRuntime({
      logger,
      resultStore: store,
      options: { searchTool: true, outputBudget: { bytes: 16_384 } },
      sources: [
        createMcpAdapter({
          servers: {
            mcpServers: {
              everything: { command: process.execPath, args: [server('server-everything'), 'stdio'], trustAnnotations: true },
              filesystem: { command: process.execPath, args: [server('server-filesystem'), folder], trustAnnotations: true },
            },
          },
          logger,
          spawn: countingSpawn,
          toolListCache: cache,
        }),
        createBuiltinAdapter({}),
        createSkillsAdapter({ roots: [join(workspace, 'packages', 'adapters-skills', 'src', '__fixtures__', 'agent-skills')] }),
        createCustomAdapter({ tools: [words] }),
        createWrappedAdapter({ tools: [shout] }),
      ],
    });
  }

  it('finds tools of every source without starting a server, runs one, and reads its large output by parts', async () => {
    // A first process lists the servers once: their lists are cached.
    const first = runtime();
    expect((await first.discover()).sourceErrors).toEqual([]);
    await first.dispose();
    expect(pids).toHaveLength(2);

    const second = runtime();
    await second.runPlan({ policy: { readOnly: true }, resources: [resourceFromPath({ id: 'logs', path: folder, access: 'read' })] }, async (plan) => {
      const modelTools = new ModelTools(second);
      const deferred = new DeferredTools(modelTools, plan, { format: 'anthropic' });
      const definitions = await deferred.definitions();
      const sources = new Set(
        (await second.listTools())
          .filter((tool) => definitions.some((definition) => definition.defer_loading === true && definition.name === tool.name.replace(/\./g, '_')))
          .map((tool) => tool.source),
      );
      expect([...sources].sort()).toEqual(['builtin', 'custom', 'mcp', 'skill', 'wrapped']);

      const search = async (id: string, query: string): Promise<string[]> => {
        const { message } = await deferred.call({ type: 'tool_use', id, name: 'tools_search', input: { query, k: 5 } });
        return ((message as AnthropicToolResult).content as { type: string; tool_name?: string }[]).map((block) => block.tool_name ?? '');
      };
      expect(await search('s1', 'add two numbers')).toContain('mcp_everything_get-sum');
      expect(await search('s2', 'write an internal status report or newsletter')).toContain('skill_internal-comms');
      expect(await search('s3', 'count the words of a text')).toContain('text_count-words');
      expect(await search('s4', 'turn text into capital letters')).toContain('text_shout');
      expect(await search('s5', 'search a text file for lines that match a pattern')).toContain('builtin_fs_grep');
      expect(await search('s6', 'read the complete contents of a text file')).toContain('mcp_filesystem_read_text_file');
      // Seven searches over five sources, and not one server started.
      expect(pids).toHaveLength(2);

      const sum = await deferred.call({ type: 'tool_use', id: 'c1', name: 'mcp_everything_get-sum', input: { a: 19, b: 23 } });
      expect((sum.message as AnthropicToolResult).content).toBe('The sum of 19 and 23 is 42.');
      expect(pids).toHaveLength(3);

      const read = await deferred.call({ type: 'tool_use', id: 'c2', name: 'mcp_filesystem_read_text_file', input: { path: join(folder, 'access.log') } });
      expect(pids).toHaveLength(4);
      const handle = read.outcome.result?.handle;
      expect(handle).toMatchObject({ format: 'text', lines: LINES });
      const text = (read.message as AnthropicToolResult).content as string;
      expect(text).toContain(`it is kept as ${handle?.handle} for the rest of the plan`);
      expect(text).toContain('First lines:\n1 INFO request served\n2 INFO request served');
      expect(text).toContain(`results_read {"handle":"${handle?.handle}"`);

      const lines = await deferred.call({
        type: 'tool_use',
        id: 'c3',
        name: 'results_read',
        input: { handle: handle?.handle, lines: { from: 12_345, to: 12_346 } },
      });
      expect(JSON.parse((lines.message as AnthropicToolResult).content as string)).toMatchObject({
        text: '12345 ERROR disk full on /var/data, api_key=***\n12346 INFO request served\n',
      });
      const grep = await deferred.call({ type: 'tool_use', id: 'c4', name: 'results_grep', input: { handle: handle?.handle, pattern: 'ERROR' } });
      expect(JSON.parse((grep.message as AnthropicToolResult).content as string)).toMatchObject({ matches: [{ line: 12_345 }], truncated: false });
      expect(store.bytesHeld).toBeGreaterThan(0);
    });
    expect(store.bytesHeld).toBe(0);
    await second.dispose();
  });
});
