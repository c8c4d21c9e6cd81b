import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { isProcessAlive, sandboxAvailableForTests } from '@ca/sandbox/testing';
import { fixtures, removeTemporaryFolders, temporaryFolder, withMcpFixtures } from './cli.test-helper';

// These tests run the built `agents` binary (the test target depends on the
// build) as separate processes, as a user in two terminals would.
const bin = path.resolve(__dirname, '..', 'dist', 'bin.js');
const repositoryRoot = path.resolve(__dirname, '..', '..', '..');

jest.setTimeout(120_000);
afterEach(() => removeTemporaryFolders());

function start(args: string[], env: Record<string, string>, cwd = fixtures): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
  it('prints no EPIPE stack when its reader goes away (agents --help | head -1): it stops writing and exits with its own code', async () => {
    // The reader is gone before the command writes anything: every write of the help meets a closed pipe.
    for (const args of [['--help'], ['tools', 'list']]) {
      const child = spawn(process.execPath, [bin, ...args], {
        cwd: fixtures,
        env: { ...process.env, TEST_WORKSPACE: temporaryFolder() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout?.destroy();
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (...result) => resolve(result)));
      expect(stderr).not.toMatch(/EPIPE|Error|at /);
      expect(code).toBe(0);
    }
  });

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

describe('the agents binary in a pipe, as CI runs it', () => {
  it('prints --version and, in --help, the exit codes', () => {
    const manifest = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
    const version = spawnSync(process.execPath, [bin, '--version'], { cwd: fixtures, encoding: 'utf8' });
    expect(version.status).toBe(0);
    expect(version.stdout).toBe(`${manifest.version}\n`);
    const help = spawnSync(process.execPath, [bin, '--help'], { cwd: fixtures, encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/Exit codes:\n {2}0 {4}success[^]*\n {2}130 {2}cancelled/);
  });

  it('refuses --input @/dev/zero with a coded error instead of running out of memory', () => {
    const result = spawnSync(process.execPath, [bin, 'tools', 'run', 'test.echo', '--input', '@/dev/zero'], {
      cwd: fixtures,
      encoding: 'utf8',
      env: { ...process.env, TEST_WORKSPACE: temporaryFolder() },
      timeout: 60_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^CLI_INPUT_INVALID: --input @\/dev\/zero: \/dev\/zero is not a regular file/);
  });

  it('shows a step that started, and its MCP progress, while the step is still running', async () => {
    const workspace = temporaryFolder();
    const starts = path.join(workspace, 'starts');
    const run = start(
      ['--state-dir', temporaryFolder('ca-cli-state-'), 'plan', 'run', 'progress-plan.yaml'],
      { TEST_WORKSPACE: workspace, TEST_FIXTURES: fixtures, TEST_STARTS: starts },
      withMcpFixtures,
    );
    let exited = false;
    void run.exit.then(() => (exited = true));
    await waitFor(() => /\[1\/2\] long mcp\.everything\.trigger-long-running-operation … progress 1\/3 /.test(run.output()) || exited);
    // The line came through the pipe before the step, let alone the plan, was over.
    expect(exited).toBe(false);
    expect(run.output()).toContain('[1/2] long mcp.everything.trigger-long-running-operation … started\n');
    expect(run.output()).not.toMatch(/… ok \(/);
    expect(await run.exit).toBe(0);
    expect(run.output()).toMatch(/\[1\/2\] long mcp\.everything\.trigger-long-running-operation … ok \(1\.\d s\)/);
    const pids = fs.readFileSync(starts, 'utf8').trim().split('\n').map(Number);
    expect(pids).toHaveLength(1);
    expect(isProcessAlive(pids[0] as number)).toBe(false);
  });

  it('an MCP server that cannot start: its error once on stderr, and a non-zero exit', () => {
    const folder = temporaryFolder();
    fs.writeFileSync(
      path.join(folder, 'agents.config.json'),
      JSON.stringify({ mcpServers: { broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] } } }),
    );
    const result = spawnSync(process.execPath, [bin, 'tools', 'run', 'mcp.broken.echo'], { cwd: folder, encoding: 'utf8' });
    expect(result.status).toBe(4);
    expect(result.stderr.match(/MCP server 'broken' could not be started/g)).toHaveLength(1);
    expect(result.stderr).toMatch(/^MCP_SERVER_START_FAILED: /);
  });
});

/**
 * The bound of one part of the demo (a plan, the model loop, the tool search,
 * the traces): a hang guard sized for a loaded 2-core machine, where a part
 * takes a few seconds (the slowest, plan 8, about 5 s unloaded) — not a
 * speed requirement.
 */
const DEMO_PART_BOUND_MS = 180_000;
/** The parts the demo announces: 8 plans, the model loop, the tool search, the traces, and its start. */
const DEMO_PARTS = 12;

/** Process groups of demos still running: ended after the tests, whatever stopped a test early. */
const demoGroups = new Set<number>();
afterAll(() => {
  for (const group of demoGroups) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
});

/** What `npm start` printed, how it ended, and the part it was in when it ended (or was stopped). */
interface DemoRun {
  readonly output: string;
  readonly code: number | null;
  readonly part: string;
  /** Set when a part outlived its bound and the demo was stopped. */
  readonly stopped?: string;
}

/**
 * Runs `npm start`'s program (tools/scripts/start.js) without its build — the
 * test target's build dependency made the packages — in a process group of
 * its own. Each part of the demo gets DEMO_PART_BOUND_MS from its header on
 * (`=== N. …`, then `$ agents plan run <file>` for a plan); a part that
 * outlives it stops the demo: SIGTERM to the group (the running plan is
 * cancelled and the demo ends, its MCP servers with it), SIGKILL 30 s later.
 */
function runDemo(): Promise<DemoRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repositoryRoot, 'tools', 'scripts', 'start.js'), '--no-build'], {
      cwd: repositoryRoot,
      env: { ...process.env, NX_DAEMON: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    demoGroups.add(child.pid as number);
    let output = '';
    let part = 'its start (before the first plan)';
    let stopped: string | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const signalGroup = (signal: NodeJS.Signals): void => {
      try {
        process.kill(-(child.pid as number), signal);
      } catch {
        // Gone already.
      }
    };
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        stopped = `${part} did not finish within ${DEMO_PART_BOUND_MS / 1000} s (the bound of one part of the demo)`;
        signalGroup('SIGTERM');
        setTimeout(() => signalGroup('SIGKILL'), 30_000).unref();
      }, DEMO_PART_BOUND_MS);
    };
    const read = (chunk: Buffer): void => {
      const before = output.length;
      output += chunk.toString();
      // Headers are whole lines; look again from the start of the last line read before.
      const from = output.lastIndexOf('\n', Math.max(0, before - 1)) + 1;
      for (const match of output.slice(from).matchAll(/^(?:=== (.+)|\$ agents plan run (\S+))$/gm)) {
        part = match[2] === undefined ? `part '${match[1] as string}'` : `plan ${match[2]}`;
        arm();
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    arm();
    child.on('close', (code) => {
      clearTimeout(timer);
      demoGroups.delete(child.pid as number);
      resolve({ output, code, part, ...(stopped === undefined ? {} : { stopped }) });
    });
  });
}

describe("the README's quick start, as a new user runs it", () => {
  it(
    'npm start runs the demo plans and they all behave as described',
    async () => {
      const run = await runDemo();
      const output = run.output;
      if (run.stopped !== undefined || run.code !== 0) {
        const why = run.stopped ?? `it exited with ${run.code} while running ${run.part}`;
        throw new Error(`npm start (the demo, on the packages as built): ${why}. Its output:\n${output.slice(-20_000)}`);
      }
      expect(output).toContain('Workspace after rollback is byte-identical to before.');
      expect(output).toMatch(/TOOL_ACCESS_DENIED: Tool 'builtin\.fs\.write' writes, but plan 'demo-read-only' is read-only/);
      expect(output).toMatch(/TOOL_CHECKPOINT_REQUIRED: Tool 'builtin\.http\.request' is not checkpointable/);
      if (sandboxAvailableForTests('the demo plans of the kernel sandbox')) {
        expect(output).toMatch(/read-and-try-to-write builtin\.command\.run … ok .*"stdout":"read 8 words; write: EROFS\\n"/);
        expect(output).toContain('Workspace after the read-only plan is byte-identical to before.');
        expect(output).toMatch(/line-after-sed builtin\.command\.run … ok .*"stdout":"Goodbye from the agents demo\."/);
        expect(output).toMatch(/line-after-rollback builtin\.command\.run … ok .*"stdout":"Hello from the agents demo\."/);
        expect(output).toContain('Workspace after the rollback of sed -i is byte-identical to before.');
      } else {
        expect(output.match(/skipped: the kernel sandbox does not work here .*apt-get install bubblewrap/g)).toHaveLength(2);
      }
      expect(output).toMatch(/mcp\.everything\.echo … ok .*Echo: hello from a plan/);
      expect(output).toMatch(/skill\.release-notes … ok/);
      expect(output).toMatch(/demo\.word-count … ok .*"words":4/);
      expect(output).toMatch(/demo\.echo-twice … ok/);
      expect(output).toMatch(
        /CLI_PLAN_CHECK_FAILED: Plan plans\/05-checked-before-running\.yaml cannot run as written; no step was run:\n {2}step 2 \(typo\) builtin\.fs\.raed: TOOL_NOT_FOUND: .*Did you mean 'builtin\.fs\.read'\?/,
      );
      expect(output).toContain('(exit code 2, as expected)');
      expect(output).toContain('=== Traces (JSON Lines, one per execution)');
      expect(output).toContain('Demo finished: every plan behaved as expected.');
    },
    DEMO_PARTS * DEMO_PART_BOUND_MS + 30_000,
  );

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
