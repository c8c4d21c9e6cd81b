import { TestTool } from '../testing/index';
import { ToolNotFoundError, ToolRegistrationError, ToolRuntime, ToolSet, closestNames, silentLogger } from '../index';

describe('ToolSet', () => {
  const read = new TestTool({ name: 'team.files.read' });
  const write = new TestTool({ name: 'team.files.write' });

  it('lists its tools and hands out their instances', async () => {
    const set = new ToolSet({ id: 'team', kind: 'jira', tools: [read, write] });
    expect((await set.discover()).map((descriptor) => descriptor.name)).toEqual(['team.files.read', 'team.files.write']);
    expect(set.get('team.files.write')).toBe(write);
    expect(set.names).toEqual(['team.files.read', 'team.files.write']);
    expect(set.has('team.files.read')).toBe(true);
  });

  it('answers an unknown name with ToolNotFoundError and suggestions, like every source', () => {
    const set = new ToolSet({ id: 'team', kind: 'custom', tools: [read, write] });
    let error: unknown;
    try {
      set.get('team.files.reed');
    } catch (thrown) {
      error = thrown;
    }
    expect(ToolNotFoundError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'TOOL_NOT_FOUND', toolName: 'team.files.reed', sourceId: 'team', suggestions: ['team.files.read'] });
    expect((error as Error).message).toMatch(/^Source 'team' has no tool named 'team\.files\.reed'\. Did you mean 'team\.files\.read'\?/);
  });

  it('refuses two tools of one name', () => {
    expect(() => new ToolSet({ id: 'team', kind: 'custom', tools: [read, read] })).toThrow(ToolRegistrationError);
  });

  it("serves a team's own source kind through the runtime", async () => {
    const tool = new TestTool({ name: 'jira.ping', source: 'jira' });
    const runtime = new ToolRuntime({ sources: [new ToolSet({ id: 'jira', kind: 'jira', tools: [tool] })], logger: silentLogger });
    const result = await runtime.runPlan({}, (ctx) => runtime.execute('jira.ping', { hello: 1 }, ctx));
    expect(result).toMatchObject({ ok: true, output: { hello: 1 } });
    expect((await runtime.describe('jira.ping')).source).toBe('jira');
  });
});

describe('closestNames', () => {
  const names = ['builtin.fs.read', 'builtin.fs.write', 'builtin.fs.grep', 'mcp.everything.get-sum', 'demo.word-count'];

  it.each([
    ['builtin.fs.reed', ['builtin.fs.read']],
    ['get-summ', ['mcp.everything.get-sum']],
    ['get-sum', ['mcp.everything.get-sum']],
    ['demo.wordcount', ['demo.word-count']],
    ['fs.read', ['builtin.fs.read']],
  ])('suggests for %s', (wanted, expected) => expect(closestNames(wanted, names)).toEqual(expected));

  it('suggests nothing for a name far from every tool, and survives odd input', () => {
    expect(closestNames('completely-different', names)).toEqual([]);
    expect(closestNames('', names)).toEqual([]);
    expect(closestNames('x'.repeat(10_000), names)).toEqual([]);
  });
});
