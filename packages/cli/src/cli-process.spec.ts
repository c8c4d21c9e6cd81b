import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fixtures, removeTemporaryFolders, temporaryFolder } from './cli.test-helper';

// These tests run the built `agents` binary (the test target depends on the
// build) as separate processes, as a user in two terminals would.
const bin = path.resolve(__dirname, '..', 'dist', 'bin.js');
const repositoryRoot = path.resolve(__dirname, '..', '..', '..');

jest.setTimeout(120_000);
afterEach(() => removeTemporaryFolders());

function start(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [bin, ...args], { cwd: fixtures, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exit };
}

async function waitFor(condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('the agents binary', () => {
  it('Ctrl-C cancels the running plan: the tool sees its token, everything is deactivated, exit code 130', async () => {
    const workspace = temporaryFolder();
    const stateDir = temporaryFolder('ca-cli-state-');
    const marker = path.join(workspace, 'marker');
    const run = start(['--state-dir', stateDir, 'plan', 'run', 'slow-plan.yaml', '--plan-id', 'ctrl-c'], { TEST_WORKSPACE: workspace, TEST_MARKER: marker });
    await waitFor(() => fs.existsSync(`${marker}.started`));
    run.child.kill('SIGINT');
    expect(await run.exit).toBe(130);
    expect(fs.readFileSync(marker, 'utf8')).toBe('interrupted (SIGINT)');
    expect(run.output()).toContain('Plan ctrl-c was cancelled; 1 tool(s) deactivated');
    expect(fs.readdirSync(path.join(stateDir, 'plans'))).toEqual([]);
  });

  it('`agents plan cancel` from another process cancels a plan running in this one', async () => {
    const workspace = temporaryFolder();
    const stateDir = temporaryFolder('ca-cli-state-');
    const marker = path.join(workspace, 'marker');
    const run = start(['--state-dir', stateDir, 'plan', 'run', 'slow-plan.yaml', '--plan-id', 'remote'], { TEST_WORKSPACE: workspace, TEST_MARKER: marker });
    await waitFor(() => fs.existsSync(`${marker}.started`));
    const list = spawnSync(process.execPath, [bin, '--state-dir', stateDir, 'plan', 'list'], { cwd: fixtures, encoding: 'utf8' });
    expect(list.stdout).toMatch(new RegExp(`^remote\\s+${run.child.pid}\\s`, 'm'));
    const cancel = spawnSync(process.execPath, [bin, '--state-dir', stateDir, 'plan', 'cancel', 'remote'], { cwd: fixtures, encoding: 'utf8' });
    expect(cancel.status).toBe(0);
    expect(cancel.stdout).toBe('Cancellation of plan remote requested.\n');
    expect(await run.exit).toBe(130);
    expect(fs.readFileSync(marker, 'utf8')).toBe("cancelled by 'agents plan cancel remote'");
  });

  it('writes errors on stderr with their code and exits 2 for a usage error', () => {
    const result = spawnSync(process.execPath, [bin, 'plan', 'run'], { cwd: fixtures, encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("error: missing required argument 'file'");
  });
});

describe("the README's quick start, as a new user runs it", () => {
  it('npm start runs the demo plans and they all behave as described', () => {
    const result = spawnSync('npm', ['start', '--silent'], { cwd: repositoryRoot, encoding: 'utf8', env: { ...process.env, NX_DAEMON: 'false' }, timeout: 110_000 });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(output).toContain('Workspace after rollback is byte-identical to before.');
    expect(output).toMatch(/TOOL_ACCESS_DENIED: Tool 'builtin\.fs\.write' writes, but plan 'demo-read-only' is read-only/);
    expect(output).toMatch(/TOOL_CHECKPOINT_REQUIRED: Tool 'builtin\.command\.run' is not checkpointable/);
    expect(output).toMatch(/mcp\.everything\.echo … ok .*Echo: hello from a plan/);
    expect(output).toMatch(/skill\.release-notes … ok/);
    expect(output).toMatch(/demo\.word-count … ok .*"words":4/);
    expect(output).toMatch(/demo\.echo-twice … ok/);
    expect(output).toContain('=== Traces (JSON Lines, one per execution)');
    expect(output).toContain('Demo finished: every plan behaved as expected.');
    expect(result.status).toBe(0);
  });

  it('agents tools list with the example configuration lists every source', () => {
    const result = spawnSync(process.execPath, [bin, '--config', path.join(repositoryRoot, 'examples', 'agents.config.json'), 'tools', 'list', '--json'], {
      cwd: repositoryRoot,
      encoding: 'utf8',
      env: { ...process.env, DEMO_WORKSPACE: temporaryFolder(), DEMO_ROOT: repositoryRoot },
    });
    expect(result.status).toBe(0);
    const sources = new Set((JSON.parse(result.stdout) as { tools: { source: string }[] }).tools.map((tool) => tool.source));
    expect([...sources].sort()).toEqual(['builtin', 'custom', 'mcp', 'skill', 'wrapped']);
  });
});
