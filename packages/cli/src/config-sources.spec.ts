import path from 'node:path';
import { captureIo, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import type { AgentsConfig } from './config';
import { selectSources } from './config-sources';
import { EXIT_CODES, main } from './index';

jest.setTimeout(60_000);
afterEach(() => removeTemporaryFolders());

describe('what a configuration turns on', () => {
  it('tools list says which sources are on and which are off, as text and as JSON', async () => {
    const io = captureIo({ TEST_WORKSPACE: temporaryFolder() });
    expect(await main(['tools', 'list'], io)).toBe(EXIT_CODES.ok);
    expect(io.out()).toMatch(
      /tool\(s\)\. Configuration agents\.config\.json — on: builtin \(only builtin\.fs\.read, builtin\.fs\.write, builtin\.fs\.list\), custom \(1 module\), wrapped \(1 tool\); off: mcp, skills\.\n$/,
    );
    const json = captureIo({ TEST_WORKSPACE: temporaryFolder() });
    expect(await main(['tools', 'list', '--json'], json)).toBe(EXIT_CODES.ok);
    const parsed = JSON.parse(json.out()) as { configuration: { file: string; sources: { source: string; enabled: boolean; detail: string }[] } };
    expect(parsed.configuration.file).toBe(path.join(json.cwd, 'agents.config.json'));
    expect(parsed.configuration.sources.map((source) => [source.source, source.enabled])).toEqual([
      ['builtin', true],
      ['custom', true],
      ['mcp', false],
      ['skills', false],
      ['wrapped', true],
    ]);
  });

  it('a configuration without "builtin" says the built-ins are off, and a command naming one says how to turn them on', async () => {
    const folder = temporaryFolder();
    writeFixture(folder, 'agents.config.json', JSON.stringify({ custom: { modules: [path.join(__dirname, '__fixtures__', 'slow-tools.js')] } }));
    const list = captureIo({}, folder);
    expect(await main(['tools', 'list'], list)).toBe(EXIT_CODES.ok);
    expect(list.out()).toMatch(
      /^4 tool\(s\)\. Configuration agents\.config\.json — on: custom \(1 module\); off: builtin \(no "builtin" key\), mcp, skills, wrapped\.$/m,
    );

    const run = captureIo({}, folder);
    expect(await main(['tools', 'run', 'builtin.fs.read', '--input', '{"path":"x"}'], run)).toBe(EXIT_CODES.notFound);
    expect(run.err()).toBe(
      'TOOL_NOT_FOUND: No configured source offers a tool named \'builtin.fs.read\'. The built-in tools are off in agents.config.json (it has no "builtin" key): add "builtin": true, or its settings, to turn them on. Run \'agents tools list\' to see every tool.\n',
    );

    const typo = captureIo({}, folder);
    expect(await main(['tools', 'run', 'builtin.fs.raed'], typo)).toBe(EXIT_CODES.notFound);
    expect(typo.err()).toMatch(/Did you mean 'builtin\.fs\.read'\? The built-in tools are off in agents\.config\.json/);

    writeFixture(folder, 'plan.yaml', 'steps:\n  - { tool: builtin.fs.list, input: {} }\n');
    const check = captureIo({}, folder);
    expect(await main(['plan', 'check', 'plan.yaml'], check)).toBe(EXIT_CODES.usage);
    expect(check.out()).toContain('step 1 (step-1) builtin.fs.list: TOOL_NOT_FOUND: ');
    expect(check.out()).toContain('The built-in tools are off in agents.config.json');

    const verbose = captureIo({}, folder);
    expect(await main(['-v', 'plan', 'check', 'plan.yaml'], verbose)).toBe(EXIT_CODES.usage);
    expect(verbose.err()).toContain('Configuration agents.config.json — on: custom (1 module); off: builtin (no "builtin" key), mcp, skills, wrapped.\n');
  });

  it('names the MCP server or the skills that are not configured', async () => {
    const folder = temporaryFolder();
    writeFixture(folder, 'agents.config.json', JSON.stringify({ builtin: true, mcpServers: { off: { command: 'node', disabled: true } } }));
    const server = captureIo({}, folder);
    expect(await main(['tools', 'run', 'mcp.everything.echo'], server)).toBe(EXIT_CODES.notFound);
    expect(server.err()).toContain("No MCP server 'everything' is configured in agents.config.json (its servers: off)");
    const disabled = captureIo({}, folder);
    expect(await main(['tools', 'run', 'mcp.off.echo'], disabled)).toBe(EXIT_CODES.notFound);
    expect(disabled.err()).toContain('MCP server \'off\' is disabled in agents.config.json ("disabled": true).');
    const skill = captureIo({}, folder);
    expect(await main(['tools', 'run', 'skill.release-notes'], skill)).toBe(EXIT_CODES.notFound);
    expect(skill.err()).toContain('Skills are off in agents.config.json (it has no "skills" key)');

    const empty = temporaryFolder();
    const none = captureIo({}, empty);
    expect(await main(['tools', 'list'], none)).toBe(EXIT_CODES.ok);
    expect(none.out()).toMatch(/No configuration file \(built-in tools only\) — on: builtin \(all built-in tools\); off: custom, mcp, skills, wrapped\.\n$/);
    const mcp = captureIo({}, empty);
    expect(await main(['tools', 'run', 'mcp.everything.echo'], mcp)).toBe(EXIT_CODES.notFound);
    expect(mcp.err()).toContain(
      `No configuration file was found (agents.config.json, .yaml or .yml in ${empty}; or pass -c <file>), so only the built-in tools are on.`,
    );
  });
});

describe('a tool outside the sources a command selected by its name', () => {
  it('is still found: a custom tool named like a built-in namespace', async () => {
    const folder = temporaryFolder();
    writeFixture(
      folder,
      'odd-names.js',
      `module.exports = [{
        descriptor: { name: 'skill.hand-made', description: 'A custom tool in the skills namespace.', source: 'custom', capability: { writes: false }, inputSchema: { type: 'object' } },
        execute: async () => ({ ok: true, output: 'made by hand' }),
      }];\n`,
    );
    writeFixture(folder, 'agents.config.json', JSON.stringify({ custom: { modules: ['./odd-names.js'] } }));
    const io = captureIo({}, folder);
    expect(await main(['tools', 'run', 'skill.hand-made'], io)).toBe(EXIT_CODES.ok);
    expect(io.out()).toBe('made by hand\n');
  });
});

describe('selectSources: a command builds only the sources its tools need', () => {
  const config = {
    file: '/x/agents.config.json',
    baseDir: '/x',
    resources: [],
    builtin: true,
    custom: { modules: ['/x/tools.js'] },
    mcpServers: { everything: { command: 'node' }, files: { command: 'node' }, off: { command: 'node', disabled: true } },
    skills: { roots: ['/x/skills'] },
    wrapped: [
      { name: 'demo.echo', tool: 'mcp.everything.echo' },
      { name: 'demo.echo-again', tool: 'demo.echo' },
      { name: 'demo.read', tool: 'builtin.fs.read' },
    ],
  } as unknown as AgentsConfig;

  it('everything configured when no tool is named (tools list), disabled servers left out', () => {
    expect(selectSources(config)).toEqual({ builtin: true, custom: true, mcpServers: ['everything', 'files'], skills: true, wrapped: config.wrapped });
  });

  it('no MCP server, skills or wrapped entry for a freely named tool, which the custom modules may offer', () => {
    expect(selectSources(config, ['demo.word-count'])).toEqual({ builtin: false, custom: true, mcpServers: [], skills: false, wrapped: [] });
  });

  it('the server of an MCP tool only, the built-ins for a built-in tool, and no custom module for either', () => {
    expect(selectSources(config, ['mcp.files.read', 'builtin.fs.list'])).toEqual({
      builtin: true,
      custom: false,
      mcpServers: ['files'],
      skills: false,
      wrapped: [],
    });
    expect(selectSources(config, ['mcp.off.read']).mcpServers).toEqual([]);
    expect(selectSources(config, ['skill.notes', 'demo.x'])).toMatchObject({ custom: true, skills: true });
  });

  it('a wrapped tool brings what it wraps, through other wrapped tools', () => {
    const selection = selectSources(config, ['demo.echo-again']);
    expect(selection.mcpServers).toEqual(['everything']);
    expect(selection.wrapped.map((entry) => entry.name).sort()).toEqual(['demo.echo', 'demo.echo-again']);
    expect(selection.builtin).toBe(false);
    // demo.echo-again and demo.echo could as well be custom tools.
    expect(selection.custom).toBe(true);
  });
});
