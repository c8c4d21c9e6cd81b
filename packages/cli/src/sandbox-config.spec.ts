import fs from 'node:fs';
import path from 'node:path';
import { sandboxAvailableForTests } from '@ca/sandbox/testing';
import { captureIo, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import { EXIT_CODES, loadConfig, main } from './index';

jest.setTimeout(60_000);

afterEach(() => removeTemporaryFolders());

const sandboxWorks = sandboxAvailableForTests('the CLI with the kernel sandbox (bubblewrap)');

/** A configuration binding a workspace with write access, the command tool on, and `sandbox` as given. */
function setup(sandbox: unknown) {
  const workspace = temporaryFolder();
  fs.writeFileSync(path.join(workspace, 'hello.txt'), 'hello world\n');
  const folder = temporaryFolder('ca-cli-config-');
  writeFixture(
    folder,
    'agents.config.json',
    JSON.stringify({
      ...(sandbox === undefined ? {} : { sandbox }),
      resources: [{ id: 'work', path: workspace, access: 'write' }],
      builtin: { tools: ['builtin.command.run'] },
    }),
  );
  return { workspace, io: captureIo({}, folder) };
}

const readAndWrite = JSON.stringify({ command: ['sh', '-c', 'cat hello.txt; echo changed > hello.txt'] });

describe('the sandbox key of agents.config', () => {
  it('"off": a command in a read-only plan is refused, as without the sandbox', async () => {
    const { io, workspace } = setup('off');
    expect(await main(['tools', 'run', 'builtin.command.run', '--input', readAndWrite, '--read-only'], io)).toBe(EXIT_CODES.refused);
    expect(io.err()).toMatch(/^TOOL_ACCESS_DENIED: /);
    expect(fs.readFileSync(path.join(workspace, 'hello.txt'), 'utf8')).toBe('hello world\n');
  });

  it('"required" where the sandbox does not work: the command is not run, and the error names the install command', async () => {
    const { io, workspace } = setup({ mode: 'required', bwrapPath: '/nonexistent/ca-bwrap' });
    expect(await main(['tools', 'run', 'builtin.command.run', '--input', readAndWrite], io)).toBe(EXIT_CODES.failed);
    expect(io.err()).toMatch(
      /^TOOL_ACTIVATION_FAILED: .*the sandbox is required \(command\.sandbox\) but does not work on this machine: \/nonexistent\/ca-bwrap .*apt-get install bubblewrap/,
    );
    expect(fs.readFileSync(path.join(workspace, 'hello.txt'), 'utf8')).toBe('hello world\n');
  });

  it('refuses a value of the wrong shape at /sandbox', async () => {
    const { io } = setup('sometimes');
    expect(await main(['tools', 'list'], io)).toBe(EXIT_CODES.usage);
    expect(io.err()).toMatch(/^CLI_CONFIG_INVALID: Configuration .* is invalid:\n {2}\/sandbox: must be equal to one of the allowed values/);
  });

  it("resolves the relative paths of an MCP server's sandbox against the configuration's folder", () => {
    const folder = temporaryFolder('ca-cli-config-');
    writeFixture(
      folder,
      'agents.config.json',
      JSON.stringify({ mcpServers: { files: { command: 'node', sandbox: { mode: 'auto', writable: ['./cache'], readable: ['/tmp/data'] } } } }),
    );
    const config = loadConfig({ cwd: folder, env: {} });
    expect(config.mcpServers?.['files']?.['sandbox']).toEqual({ mode: 'auto', writable: [path.join(folder, 'cache')], readable: ['/tmp/data'] });
  });

  (sandboxWorks ? it : it.skip)('"required": a command in a read-only plan runs, reads the workspace, and its write fails with EROFS', async () => {
    const { io, workspace } = setup('required');
    expect(await main(['tools', 'run', 'builtin.command.run', '--input', readAndWrite, '--read-only', '--json'], io)).toBe(EXIT_CODES.ok);
    const result = JSON.parse(io.out()) as { output: { stdout: string; stderr: string; sandbox: string; exitCode: number } };
    expect(result.output).toMatchObject({ stdout: 'hello world\n', sandbox: 'read-only', exitCode: 2 });
    expect(result.output.stderr).toMatch(/hello\.txt: Read-only file system/);
    expect(fs.readFileSync(path.join(workspace, 'hello.txt'), 'utf8')).toBe('hello world\n');
  });
});
