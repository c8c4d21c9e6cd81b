import fs from 'node:fs';
import path from 'node:path';
import { createBuiltinAdapter } from '@ca/adapters-builtin';
import { WrappedToolError } from '@ca/adapters-wrapped';
import { ToolNotFoundError, type ToolInstance } from '@ca/tool-lifecycle';
import { ConfiguredWrappedSource } from './build-runtime';
import { CliError } from './cli-error';
import { captureIo, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import { EXIT_CODES, main } from './index';

jest.setTimeout(60_000);

afterEach(() => removeTemporaryFolders());

/** What `get` throws or rejects with, whichever it does. */
async function failureOf(call: () => ToolInstance | Promise<ToolInstance>): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('the wrapped entries of a configuration, served through a WrappedToolSource', () => {
  it('wraps the tools of the other sources; an unknown name is a ToolNotFoundError with the close names', async () => {
    const builtin = createBuiltinAdapter({ tools: ['builtin.fs.read', 'builtin.fs.list'] });
    const source = new ConfiguredWrappedSource([{ name: 'team.list', tool: 'builtin.fs.list', description: 'Lists files.' }], [builtin]);
    expect(source).toMatchObject({ kind: 'wrapped', id: 'config:wrapped', schemaTrust: 'untrusted' });
    expect((await source.discover()).map((descriptor) => [descriptor.name, descriptor.source, descriptor.description])).toEqual([
      ['team.list', 'wrapped', 'Lists files.'],
    ]);
    expect(source.unavailable()).toEqual([]);
    expect((await source.get('team.list')).descriptor.annotations).toMatchObject({ wrappedName: 'builtin.fs.list', wrappedSource: 'builtin' });

    const thrown = await failureOf(() => source.get('team.lst'));
    expect(ToolNotFoundError.isInstance(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: 'TOOL_NOT_FOUND', toolName: 'team.lst', sourceId: 'config:wrapped', suggestions: ['team.list'] });
  });

  it('refuses an entry whose tool no source offers with CLI_CONFIG_INVALID, naming the entry and the closest name', async () => {
    const builtin = createBuiltinAdapter({ tools: ['builtin.fs.read'] });
    const source = new ConfiguredWrappedSource([{ name: 'team.read', tool: 'builtin.fs.raed' }], [builtin]);
    const error = await source.discover().catch((thrown: unknown) => thrown);
    expect(CliError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'CLI_CONFIG_INVALID' });
    expect((error as Error).message).toMatch(
      /^wrapped tool 'team\.read' wraps 'builtin\.fs\.raed', which no configured source offers\. Did you mean 'builtin\.fs\.read'\?.* Run 'agents tools list'/,
    );
  });

  it('refuses two entries of one name with WRAP_DUPLICATE_TOOL', async () => {
    const builtin = createBuiltinAdapter({ tools: ['builtin.fs.read', 'builtin.fs.list'] });
    const source = new ConfiguredWrappedSource(
      [
        { name: 'team.files', tool: 'builtin.fs.read' },
        { name: 'team.files', tool: 'builtin.fs.list' },
      ],
      [builtin],
    );
    const error = await source.discover().catch((thrown: unknown) => thrown);
    expect(WrappedToolError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'WRAP_DUPLICATE_TOOL',
      toolName: 'team.files',
      message: expect.stringContaining("Wrapped tool source 'config:wrapped' already has a tool 'team.files'"),
    });
  });

  it('runs a wrapped entry from the command line with its fixed arguments, and reports one whose server cannot start as unavailable', async () => {
    const workspace = temporaryFolder();
    fs.writeFileSync(path.join(workspace, 'notes.txt'), 'x');
    const folder = temporaryFolder();
    writeFixture(
      folder,
      'agents.config.json',
      JSON.stringify({
        resources: [{ id: 'work', path: workspace, access: 'read' }],
        builtin: { tools: ['builtin.fs.list'] },
        mcpServers: { broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] } },
        wrapped: [
          { name: 'team.list', tool: 'builtin.fs.list', fixedArguments: { resource: 'work' } },
          { name: 'team.echo', tool: 'mcp.broken.echo' },
        ],
      }),
    );

    const run = captureIo({}, folder);
    expect(await main(['tools', 'run', 'team.list', '--input', '{"path":"."}', '--json'], run)).toBe(EXIT_CODES.ok);
    expect(JSON.parse(run.out())).toMatchObject({ ok: true, trace: { toolName: 'team.list', success: true } });
    expect(run.out()).toContain('notes.txt');

    const list = captureIo({}, folder);
    await main(['tools', 'list'], list);
    expect(list.out()).toMatch(/^team\.list\s+wrapped/m);
    expect(list.out()).not.toMatch(/^team\.echo/m);
    expect(list.err()).toMatch(/^unavailable: team\.echo — .*it wraps 'mcp\.broken\.echo', which is unavailable: MCP server 'broken' could not be started/m);
  });
});
