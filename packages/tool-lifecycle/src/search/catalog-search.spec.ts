import { ToolRuntime } from '../tool-runtime';
import { InMemoryToolSource } from '../testing/in-memory-tool-source';
import { RecordingLogger } from '../testing/recording-logger';
import { TestTool } from '../testing/test-tool';

describe('runtime.searchTools', () => {
  function setUp(): { runtime: ToolRuntime; mcp: InMemoryToolSource; discovered: () => number } {
    const mcp = new InMemoryToolSource(
      [
        new TestTool({ name: 'mcp.github.create_issue', source: 'mcp', description: 'Open an issue in a repository.', capability: { writes: true } }),
        new TestTool({ name: 'mcp.github.list_issues', source: 'mcp', description: 'List the issues of a repository.', capability: { writes: false } }),
      ],
      { id: 'mcp:github', kind: 'mcp' },
    );
    const skills = new InMemoryToolSource([new TestTool({ name: 'skill.triage', source: 'skill', description: 'How to triage incoming bug reports.' })], {
      id: 'skills',
      kind: 'skill',
    });
    let discoveries = 0;
    const discover = mcp.discover.bind(mcp);
    mcp.discover = (signal?: AbortSignal) => {
      discoveries++;
      return discover(signal);
    };
    const runtime = new ToolRuntime({ sources: [mcp, skills], logger: new RecordingLogger() });
    return { runtime, mcp, discovered: () => discoveries };
  }

  it('searches the tools of every source, and lists them once until a source reports a change', async () => {
    const { runtime, discovered } = setUp();
    const hits = await runtime.searchTools('triage bug reports about issues', { k: 3 });
    expect(hits.map((hit) => hit.name)).toEqual(['skill.triage', 'mcp.github.create_issue', 'mcp.github.list_issues']);
    expect(hits[0]).toEqual({ name: 'skill.triage', description: 'How to triage incoming bug reports.', source: 'skill', score: expect.any(Number) });
    await runtime.searchTools('issues');
    expect(discovered()).toBe(1);
  });

  it('is kept current when a source reports a change (tools added, changed, removed)', async () => {
    const { runtime, mcp, discovered } = setUp();
    expect(await runtime.searchTools('pull request')).toEqual([]);
    mcp.add(new TestTool({ name: 'mcp.github.land', source: 'mcp', description: 'Merge a pull request.' }));
    expect((await runtime.searchTools('pull request')).map((hit) => hit.name)).toEqual(['mcp.github.land']);
    expect(discovered()).toBe(2);
    mcp.add(new TestTool({ name: 'mcp.github.land', source: 'mcp', description: 'Squash the commits of a branch.' }));
    expect(await runtime.searchTools('pull request')).toEqual([]);
    expect((await runtime.searchTools('squash')).map((hit) => hit.name)).toEqual(['mcp.github.land']);
    mcp.remove('mcp.github.land');
    expect(await runtime.searchTools('squash')).toEqual([]);
  });

  it('with the plan, finds only what its policy lets run; with sources and capability, only those', async () => {
    const { runtime } = setUp();
    const ctx = runtime.createPlan({ planId: 'read-only-search', policy: { readOnly: true } });
    try {
      expect((await runtime.searchTools('issue repository', { ctx })).map((hit) => hit.name)).toEqual(['mcp.github.list_issues']);
      expect((await runtime.searchTools('issue', { sources: ['skill'] })).map((hit) => hit.name)).toEqual([]);
      expect((await runtime.searchTools('issue', { capability: { writes: true } })).map((hit) => hit.name)).toEqual(['mcp.github.create_issue']);
      // What search left out, execute refuses: the same decision.
      await expect(runtime.execute('mcp.github.create_issue', {}, ctx)).rejects.toMatchObject({ code: 'TOOL_ACCESS_DENIED' });
    } finally {
      await runtime.endPlan(ctx);
    }
  });

  it('hands the lexical candidates to the reranker the service configured', async () => {
    const mcp = new InMemoryToolSource([
      new TestTool({ name: 'custom.alpha', description: 'Shared words here.' }),
      new TestTool({ name: 'custom.beta', description: 'Shared words here too.' }),
    ]);
    const runtime = new ToolRuntime({
      sources: [mcp],
      logger: new RecordingLogger(),
      searchReranker: { rerank: ({ candidates }) => candidates.map((candidate) => (candidate.descriptor.name === 'custom.beta' ? 10 : 1)) },
    });
    expect((await runtime.searchTools('shared words')).map((hit) => [hit.name, hit.score])).toEqual([
      ['custom.beta', 10],
      ['custom.alpha', 1],
    ]);
  });
});
