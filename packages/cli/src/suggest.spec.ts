import { captureIo, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import { EXIT_CODES, main } from './index';
import { didYouMean, editDistance, suggestNames } from './suggest';

afterEach(() => removeTemporaryFolders());

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and swaps of neighbours, ignoring case', () => {
    expect(editDistance('read', 'read')).toBe(0);
    expect(editDistance('reed', 'read')).toBe(1);
    expect(editDistance('wordcount', 'word-count')).toBe(1);
    expect(editDistance('get-summ', 'get-sum')).toBe(1);
    expect(editDistance('raed', 'read')).toBe(1);
    expect(editDistance('READ', 'read')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('suggestNames', () => {
  const tools = [
    'builtin.fs.read',
    'builtin.fs.grep',
    'builtin.fs.delete',
    'mcp.everything.get-sum',
    'mcp.everything.echo',
    'demo.word-count',
    'demo.echo-twice',
  ];

  it('finds the closest names by edit distance, also against the trailing segments', () => {
    expect(suggestNames('builtin.fs.reed', tools)).toEqual(['builtin.fs.read']);
    expect(suggestNames('get-summ', tools)).toEqual(['mcp.everything.get-sum']);
    expect(suggestNames('demo.wordcount', tools)).toEqual(['demo.word-count']);
    expect(suggestNames('echo', tools)).toEqual(['mcp.everything.echo']);
    expect(suggestNames('fs.read', tools)).toEqual(['builtin.fs.read']);
  });

  it('suggests nothing far away, nothing for an exact name, and nothing for absurd input', () => {
    expect(suggestNames('deploy.production', tools)).toEqual([]);
    expect(suggestNames('builtin.fs.read', tools)).toEqual([]);
    expect(suggestNames('x'.repeat(10_000), tools)).toEqual([]);
    expect(suggestNames('', tools)).toEqual([]);
  });

  it('phrases one or several', () => {
    expect(didYouMean('rootz', ['roots', 'strict'])).toBe(" Did you mean 'roots'?");
    expect(didYouMean('ab', ['aa', 'bb', 'zz'])).toBe(" Did you mean 'aa' or 'bb'?");
    expect(didYouMean('qqq', ['roots'])).toBe('');
  });
});

describe('unknown keys of the configuration and the plan file get a suggestion', () => {
  it('in the configuration: a source, a resource, an MCP server entry', async () => {
    const folder = temporaryFolder();
    writeFixture(
      folder,
      'agents.config.json',
      JSON.stringify({
        skills: { rootz: ['x'] },
        builtin: { fils: {} },
        resources: [{ id: 'w', pth: '.', access: 'read' }],
        mcpServers: { everything: { comand: 'node', command: 'node', callTimeOutMs: 5 } },
        wraped: [],
      }),
    );
    const io = captureIo({}, folder);
    expect(await main(['tools', 'list'], io)).toBe(EXIT_CODES.usage);
    const err = io.err();
    expect(err).toContain("/skills/rootz: is not a known key here. Did you mean 'roots'?");
    expect(err).toContain("/builtin/fils: is not a known key here. Did you mean 'files'?");
    expect(err).toContain("/resources/0/pth: is not a known key here. Did you mean 'path'?");
    expect(err).toContain("/mcpServers/everything/comand: is not a known key here. Did you mean 'command'?");
    expect(err).toContain("/mcpServers/everything/callTimeOutMs: is not a known key here. Did you mean 'callTimeoutMs'?");
    expect(err).toContain("/wraped: is not a known key here. Did you mean 'wrapped'?");
    // The unknown key is the problem, not the oneOf branch it fails to match.
    expect(err).not.toContain('/resources/0/uri: is required');
  });

  it('in a plan file, through a $ref into the configuration schema', async () => {
    const folder = temporaryFolder();
    const plan = writeFixture(folder, 'plan.yaml', 'steps:\n  - { tool: test.echo, inpt: {} }\nresources:\n  - { id: w, path: ., acess: read }\n');
    const io = captureIo({}, folder);
    expect(await main(['plan', 'check', plan], io)).toBe(EXIT_CODES.usage);
    expect(io.err()).toContain("/steps/0/inpt: is not a known key here. Did you mean 'input'?");
    expect(io.err()).toContain("/resources/0/acess: is not a known key here. Did you mean 'access'?");
  });
});
