// Tool search over real sources: server-everything and server-filesystem
// started over stdio, the built-in tools, the Agent Skills fixtures, and the
// 769 BFCL tools as distractors (a custom source). The questions were written
// before the ranking was tuned (see __fixtures__/search-questions/SOURCE.md);
// the search is measured against a plain BM25 over the same tools.
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createBuiltinAdapter } from '@ca/adapters-builtin';
import { createMcpAdapter } from '@ca/adapters-mcp';
import { createSkillsAdapter } from '@ca/adapters-skills';
import { normalizeCapability } from '@ca/domain';
import { ToolRuntime, ToolSet, toolSuccess, type ToolDescriptor, type ToolInstance } from '@ca/tool-lifecycle';
import { PlainBm25, RecordingLogger } from '@ca/tool-lifecycle/testing';

interface Question {
  readonly id: string;
  readonly query: string;
  readonly acceptable: readonly string[];
}

const workspace = join(__dirname, '..', '..', '..');
const server = (name: string): string => join(dirname(require.resolve(`@modelcontextprotocol/${name}/package.json`)), 'dist', 'index.js');

describe('tool search over real sources (MCP servers, built-ins, skills) among the BFCL tools', () => {
  let runtime: ToolRuntime;
  let folder: string;
  let questions: Question[];
  let tools: readonly ToolDescriptor[];

  beforeAll(async () => {
    folder = await realpath(await mkdtemp(join(tmpdir(), 'ca-search-')));
    questions = JSON.parse(await readFile(join(__dirname, '__fixtures__', 'search-questions', 'questions.json'), 'utf8')) as Question[];
    const bfcl = JSON.parse(
      await readFile(join(workspace, 'packages', 'tool-lifecycle', 'src', 'search', '__fixtures__', 'bfcl-nonlive', 'catalog.json'), 'utf8'),
    ) as Pick<ToolDescriptor, 'name' | 'description' | 'inputSchema'>[];
    const distractors: ToolInstance[] = bfcl.map((entry) => ({
      descriptor: { ...entry, source: 'custom', capability: normalizeCapability({ writes: false }) },
      execute: async () => toolSuccess(null),
    }));
    const logger = new RecordingLogger();
    runtime = new ToolRuntime({
      logger,
      sources: [
        createMcpAdapter({
          servers: {
            mcpServers: {
              everything: { command: process.execPath, args: [server('server-everything'), 'stdio'] },
              filesystem: { command: process.execPath, args: [server('server-filesystem'), folder] },
            },
          },
          logger,
        }),
        createBuiltinAdapter({}),
        createSkillsAdapter({ roots: [join(workspace, 'packages', 'adapters-skills', 'src', '__fixtures__', 'agent-skills')] }),
        new ToolSet({ id: 'bfcl', kind: 'custom', tools: distractors }),
      ],
    });
    const discovered = await runtime.discover();
    expect(discovered.sourceErrors).toEqual([]);
    tools = discovered.tools;
  }, 60_000);

  afterAll(async () => {
    await runtime?.dispose();
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  });

  it('offers every tool the questions name', () => {
    const names = new Set(tools.map((tool) => tool.name));
    expect(questions.flatMap((question) => question.acceptable).filter((name) => !names.has(name))).toEqual([]);
  });

  it('finds a tool for at least 80% of the questions at 5, and more of them than a plain BM25 over the same tools', async () => {
    const plain = new PlainBm25(tools);
    const found = { ours: 0, plain: 0 };
    for (const question of questions) {
      const ours = (await runtime.searchTools(question.query, { k: 5 })).map((hit) => hit.name);
      if (question.acceptable.some((name) => ours.includes(name))) found.ours++;
      if (question.acceptable.some((name) => plain.search(question.query, 5).includes(name))) found.plain++;
    }
    const ours = (100 * found.ours) / questions.length;
    const baseline = (100 * found.plain) / questions.length;
    console.log(`recall@5 over real sources among ${tools.length} tools: search ${ours}%, plain BM25 ${baseline}%`);
    expect(ours).toBeGreaterThanOrEqual(80);
    expect(ours).toBeGreaterThan(baseline + 5);
  });

  it('filters by source kind and by what a read-only plan lets run', async () => {
    expect((await runtime.searchTools('read a file', { sources: ['mcp'], k: 3 })).every((hit) => hit.name.startsWith('mcp.filesystem.'))).toBe(true);
    const ctx = runtime.createPlan({ policy: { readOnly: true } });
    try {
      const hits = await runtime.searchTools('delete or overwrite a file', { ctx, k: 20 });
      expect(hits.map((hit) => hit.name)).not.toContain('builtin.fs.delete');
      expect(hits.map((hit) => hit.name)).not.toContain('mcp.filesystem.write_file');
    } finally {
      await runtime.endPlan(ctx);
    }
  });
});
