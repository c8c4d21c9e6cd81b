import fs from 'node:fs';
import path from 'node:path';
import { captureIo, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import { EXIT_CODES, main } from './index';

jest.setTimeout(60_000);
afterEach(() => removeTemporaryFolders());

function setup() {
  const workspace = temporaryFolder();
  const stateDir = temporaryFolder('ca-cli-state-');
  fs.writeFileSync(path.join(workspace, 'hello.txt'), 'hello\n');
  const run = async (planYaml: string, env: Record<string, string> = {}) => {
    const file = writeFixture(workspace, `plan-${Math.random().toString(36).slice(2)}.yaml`, planYaml);
    const io = captureIo({ TEST_WORKSPACE: workspace, ...env });
    const code = await main(['--state-dir', stateDir, 'plan', 'run', file], io);
    return { code, out: io.out(), err: io.err() };
  };
  return { workspace, run };
}

describe('agents plan run reaches every documented exit code', () => {
  it('1: a tool failed (reading a file that does not exist); later steps are skipped', async () => {
    const { run } = setup();
    const result = await run(
      'steps:\n  - { id: read, tool: builtin.fs.read, input: { resource: work, path: missing.txt } }\n  - { id: next, tool: test.echo, input: { text: x } }\n',
    );
    expect(result.code).toBe(EXIT_CODES.failed);
    expect(result.out).toMatch(/\[1\/2\] read builtin\.fs\.read … failed \(\d+ ms\) BUILTIN_/);
    expect(result.out).toMatch(/^next\s+test\.echo\s+skipped/m);
  });

  it('3: the policy refused a tool in a step that may fail', async () => {
    const { workspace, run } = setup();
    const result = await run(
      'policy: { readOnly: true }\nsteps:\n  - { id: write, tool: builtin.fs.write, input: { resource: work, path: w.txt, content: x }, continueOnError: true }\n  - { id: read, tool: builtin.fs.read, input: { resource: work, path: hello.txt } }\n',
    );
    expect(result.code).toBe(EXIT_CODES.refused);
    expect(result.err).toMatch(/^warning: step 1 \(write\) builtin\.fs\.write: TOOL_ACCESS_DENIED/);
    expect(result.out).toMatch(/\[1\/2\] write builtin\.fs\.write … refused/);
    expect(result.out).toMatch(/\[2\/2\] read builtin\.fs\.read … ok/);
    expect(fs.existsSync(path.join(workspace, 'w.txt'))).toBe(false);
  });

  it('4: a step that may fail names a tool no source offers', async () => {
    const { run } = setup();
    const result = await run(
      'steps:\n  - { id: gone, tool: test.gone, input: {}, continueOnError: true }\n  - { id: echo, tool: test.echo, input: { text: x } }\n',
    );
    expect(result.code).toBe(EXIT_CODES.notFound);
    expect(result.out).toMatch(/\[1\/2\] gone test\.gone … not-found \(\d+ ms\) TOOL_NOT_FOUND: /);
    expect(result.out).not.toMatch(/runtime\.listTools/);
  });

  it("130: the plan's deadline passed", async () => {
    const { workspace, run } = setup();
    const marker = path.join(workspace, 'marker');
    const result = await run(
      `timeoutMs: 300\nsteps:\n  - { id: wait, tool: test.wait-for-cancel, input: { marker: "${marker}" } }\n  - { id: never, tool: test.echo, input: { text: x } }\n`,
    );
    expect(result.code).toBe(EXIT_CODES.cancelled);
    expect(fs.readFileSync(marker, 'utf8')).toBe('plan timed out after 300 ms');
    expect(result.out).toMatch(/\[1\/2\] wait test\.wait-for-cancel … cancelled .*plan timed out after 300 ms\. Raise "timeoutMs" of the plan file/);
    expect(result.out).toMatch(/was cancelled; 1 tool\(s\) deactivated/);
  });

  it('0: every step did what it expected, refusals included', async () => {
    const { run } = setup();
    const result = await run(
      'policy: { readOnly: true }\nsteps:\n  - { tool: test.unsafe-write, input: {}, expect: refused }\n  - { tool: test.echo, input: { text: 3 }, expect: failure }\n',
    );
    expect(result.code).toBe(EXIT_CODES.ok);
  });
});

describe('usage, configuration and module errors exit 2 with their code', () => {
  it('CLI_CONFIG_NOT_FOUND', async () => {
    const io = captureIo();
    expect(await main(['-c', 'nowhere.json', 'tools', 'list'], io)).toBe(EXIT_CODES.usage);
    expect(io.err()).toMatch(/^CLI_CONFIG_NOT_FOUND: Configuration .*nowhere\.json does not exist\. Check the path\.\n$/);
  });

  it('CLI_MODULE_INVALID: a custom module that cannot be loaded, or exports no tool', async () => {
    const folder = temporaryFolder();
    writeFixture(folder, 'broken.js', "throw new Error('syntax of the future');\n");
    writeFixture(folder, 'empty.js', 'module.exports = { answer: 42 };\n');
    writeFixture(folder, 'agents.config.json', JSON.stringify({ custom: { modules: ['./broken.js'] } }));
    const broken = captureIo({}, folder);
    expect(await main(['tools', 'list'], broken)).toBe(EXIT_CODES.usage);
    expect(broken.err()).toMatch(/^CLI_MODULE_INVALID: Custom tool module .*broken\.js could not be loaded: syntax of the future\./);
    writeFixture(folder, 'agents.config.json', JSON.stringify({ custom: { modules: ['./empty.js'] } }));
    const empty = captureIo({}, folder);
    expect(await main(['tools', 'run', 'x.y'], empty)).toBe(EXIT_CODES.usage);
    expect(empty.err()).toMatch(/^CLI_MODULE_INVALID: Custom tool module .*empty\.js exports no tool\./);
  });

  it('CLI_USAGE: a bad --resource, --timeout or plan id', async () => {
    for (const argv of [
      ['tools', 'run', 'test.echo', '--resource', 'no-equals-sign'],
      ['tools', 'run', 'test.echo', '--timeout', 'soon'],
      ['tools', 'run', 'test.echo', '--plan-id', '../escape'],
    ]) {
      const io = captureIo({ TEST_WORKSPACE: temporaryFolder() });
      expect(await main(argv, io)).toBe(EXIT_CODES.usage);
      expect(io.err()).toMatch(/^CLI_USAGE: /);
    }
  });

  it('an input that does not match the schema exits 2, as the README lists input errors', async () => {
    const io = captureIo({ TEST_WORKSPACE: temporaryFolder() });
    expect(await main(['tools', 'run', 'test.echo', '--input', '{"text":"a","extra":1}'], io)).toBe(EXIT_CODES.usage);
    expect(io.err()).toContain('/extra: is not a known property.');
  });
});

describe('--help and --version', () => {
  it('--help lists the exit codes and how the configuration turns sources on', async () => {
    const io = captureIo();
    expect(await main(['--help'], io)).toBe(EXIT_CODES.ok);
    const help = io.out();
    expect(help).toMatch(/Exit codes:\n {2}0 {4}success/);
    for (const code of ['1', '2', '3', '4', '130']) expect(help).toMatch(new RegExp(`^  ${code} +\\S`, 'm'));
    expect(help).toContain('A configuration file turns\non exactly the sources it names');
    expect(help).toContain('plan');
  });

  it('--version prints the version of package.json', async () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const io = captureIo();
      expect(await main([flag], io)).toBe(EXIT_CODES.ok);
      expect(io.out()).toBe(`${manifest.version}\n`);
    }
  });
});
