import { spawn, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CaError } from '@ca/domain';
import { isProcessAlive, processesWithArgument, uniqueSleep, waitUntil, waitUntilProcessesGone } from '../testing';
import { ProcessError } from './process-error';
import type { ProcessLauncher } from './process-launcher';
import { ProcessLaunchError } from './process-launch-error';
import { ProcessOptionsError } from './process-options-error';
import { ProcessStartError } from './process-start-error';
import type { ProcessExit, ProcessSpawn } from './process-types';
import { runProcess } from './run-process';

// Child processes start slowly on a loaded machine; a hang guard, not a speed requirement.
jest.setTimeout(30_000);

const node = process.execPath;

/** Runs the program in a new PID namespace: what a kernel sandbox (`bwrap --unshare-pid`) does. */
const pidNamespace: ProcessLauncher = {
  name: 'pid-namespace',
  prepare: async (launch) => ({
    ...launch,
    command: 'unshare',
    args: ['--user', '--map-root-user', '--pid', '--fork', '--kill-child', '--', launch.command, ...launch.args],
  }),
};

describe('runProcess', () => {
  const leftovers: number[] = [];
  let folder: string;

  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'ca-process-'));
  });

  afterEach(() => {
    for (const pid of leftovers.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(folder, { recursive: true, force: true });
  });

  it('runs a program without a shell and returns its exit code, output and durations', async () => {
    const result = await runProcess({
      command: node,
      args: ['-e', 'console.log(process.argv[1]); console.error("warn"); process.exit(3)', '$HOME; echo injected `id`'],
    });
    expect(result).toMatchObject({ exitCode: 3, signal: null, timedOut: false, cancelled: false });
    expect(result.stdout).toEqual({ text: '$HOME; echo injected `id`\n', keptBytes: 26, totalBytes: 26, truncated: false });
    expect(result.stderr.text).toBe('warn\n');
    expect(result.pid).toEqual(expect.any(Number));
    const { startMs, runMs, totalMs } = result.durations;
    expect(startMs).toBeGreaterThan(0);
    expect(runMs).toBeGreaterThan(0);
    expect(totalMs).toBeGreaterThanOrEqual(startMs + runMs);
    expect(Object.isFrozen(result)).toBe(true);
  });

  it('runs in cwd and reports a signal that ended the program', async () => {
    const where = await runProcess({ command: 'pwd', cwd: folder });
    expect(where.stdout.text).toBe(`${folder}\n`);
    const killed = await runProcess({ command: 'sh', args: ['-c', 'kill -KILL $$'] });
    expect(killed).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: false, cancelled: false });
  });

  it('passes only the minimal environment, the inherited names asked for and env on top', async () => {
    process.env['CA_PROCESS_TEST_SECRET'] = 'do-not-leak';
    process.env['CA_PROCESS_TEST_ASKED'] = 'asked-for';
    try {
      const printEnv = ['-e', 'process.stdout.write(JSON.stringify(process.env))'];
      const minimal = JSON.parse((await runProcess({ command: node, args: printEnv, env: { GIVEN: 'yes', HOME: undefined } })).stdout.text) as Record<
        string,
        string
      >;
      expect(minimal['CA_PROCESS_TEST_SECRET']).toBeUndefined();
      expect(minimal).toMatchObject({ GIVEN: 'yes', PATH: process.env['PATH'] });
      expect(minimal['HOME']).toBeUndefined();
      expect(
        Object.keys(minimal).every((name) => ['GIVEN', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'LOGNAME', 'PATH', 'TERM', 'TMPDIR', 'TZ', 'USER'].includes(name)),
      ).toBe(true);
      const asked = JSON.parse((await runProcess({ command: node, args: printEnv, inheritEnv: ['PATH', 'CA_PROCESS_TEST_ASKED'] })).stdout.text) as Record<
        string,
        string
      >;
      expect(asked).toEqual({ PATH: process.env['PATH'], CA_PROCESS_TEST_ASKED: 'asked-for' });
    } finally {
      delete process.env['CA_PROCESS_TEST_SECRET'];
      delete process.env['CA_PROCESS_TEST_ASKED'];
    }
  });

  it('keeps the first bytes of each stream up to its cap and counts the rest', async () => {
    const result = await runProcess({
      command: node,
      args: ['-e', 'process.stdout.write("x".repeat(100000)); process.stderr.write("e".repeat(5000))'],
      maxStdoutBytes: 1000,
      maxStderrBytes: 0,
    });
    expect(result.stdout).toEqual({ text: 'x'.repeat(1000), keptBytes: 1000, totalBytes: 100_000, truncated: true });
    expect(result.stderr).toEqual({ text: '', keptBytes: 0, totalBytes: 5000, truncated: true });
    expect(result.exitCode).toBe(0);
  });

  it('feeds stdin as text or bytes, and gives none (end of file at once) when there is no stdin', async () => {
    const echo = ['-e', 'process.stdin.pipe(process.stdout)'];
    expect((await runProcess({ command: node, args: echo, stdin: 'from stdin' })).stdout.text).toBe('from stdin');
    expect((await runProcess({ command: node, args: echo, stdin: Buffer.from([0xe2, 0x82, 0xac]) })).stdout.text).toBe('€');
    expect((await runProcess({ command: node, args: echo })).stdout.text).toBe('');
    // A program that never reads a large stdin does not break the run.
    expect((await runProcess({ command: 'true', stdin: 'y'.repeat(1 << 20) })).exitCode).toBe(0);
  });

  it('at timeoutMs stops a program that ignores SIGTERM, with SIGKILL after the grace, and its group, keeping the partial output', async () => {
    const script = `
      const { spawn } = require('node:child_process');
      const grandchild = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
      process.on('SIGTERM', () => process.stdout.write('ignoring SIGTERM\\n'));
      process.stdout.write('grandchild ' + grandchild.pid + '\\n');
      setInterval(() => {}, 1000);`;
    const result = await runProcess({ command: node, args: ['-e', script], timeoutMs: 1000, killGraceMs: 300 });
    const grandchild = Number(/grandchild (\d+)/.exec(result.stdout.text)?.[1]);
    leftovers.push(grandchild);
    expect(result).toMatchObject({ timedOut: true, cancelled: false, exitCode: null, signal: 'SIGKILL' });
    expect(result.stdout.text).toContain('ignoring SIGTERM');
    expect(await waitUntilProcessesGone([grandchild])).toBe(true);
  });

  it('on abort stops the process group with SIGTERM, resolves cancelled and removes its listener', async () => {
    const controller = new AbortController();
    const signal = controller.signal;
    const added: unknown[] = [];
    const removed: unknown[] = [];
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((type: string, listener: never, options?: never) => {
      added.push(listener);
      add(type, listener, options);
    }) as typeof signal.addEventListener;
    signal.removeEventListener = ((type: string, listener: never, options?: never) => {
      removed.push(listener);
      remove(type, listener, options);
    }) as typeof signal.removeEventListener;
    const pidFile = join(folder, 'pid');
    const running = runProcess({ command: 'sh', args: ['-c', `sleep 30 & echo $! > ${pidFile}; wait`], signal });
    const background = await readPid(pidFile);
    leftovers.push(background);
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ cancelled: true, timedOut: false, signal: 'SIGTERM' });
    expect(await waitUntilProcessesGone([background])).toBe(true);
    expect(added).toHaveLength(1);
    expect(removed).toEqual(added);
  });

  it('does not start a program when the signal has already aborted', async () => {
    const spawned: string[] = [];
    const counting: ProcessSpawn = (command, args, options: SpawnOptions) => {
      spawned.push(command);
      return spawn(command, [...args], options);
    };
    const controller = new AbortController();
    controller.abort();
    const result = await runProcess({ command: 'true', signal: controller.signal, spawn: counting });
    expect(result).toMatchObject({ pid: undefined, exitCode: null, cancelled: true, stdout: { text: '', totalBytes: 0 } });
    expect(spawned).toEqual([]);
  });

  it('kills what the program left in its group once it exits, and returns without waiting for it', async () => {
    const pidFile = join(folder, 'pid');
    // The background child keeps the stdout pipe open: only the group kill lets the run end early.
    const result = await runProcess({ command: 'sh', args: ['-c', `sleep 30 & echo $! > ${pidFile}; echo started`], outputDrainMs: 20_000 });
    const background = await readPid(pidFile);
    leftovers.push(background);
    expect(result).toMatchObject({ exitCode: 0, stdout: { text: 'started\n' } });
    expect(result.durations.totalMs).toBeLessThan(20_000);
    expect(await waitUntilProcessesGone([background])).toBe(true);
  });

  it('does NOT reach a descendant that left the process group (setsid): the limit without a PID namespace', async () => {
    const sleep = uniqueSleep(40);
    // The escaped sleeper holds stdout: the run ends after outputDrainMs instead of waiting for it.
    const result = await runProcess({ command: 'sh', args: ['-c', `setsid sleep ${sleep} & sleep 0.2; echo started`], outputDrainMs: 200 });
    expect(result).toMatchObject({ exitCode: 0, stdout: { text: 'started\n' } });
    const escaped = processesWithArgument(sleep);
    leftovers.push(...escaped);
    expect(escaped).toHaveLength(1);
    expect(isProcessAlive(escaped[0] as number)).toBe(true);
  });

  it('reaches that descendant when a launcher runs the program in its own PID namespace (the sandbox seam)', async () => {
    const sleep = uniqueSleep(40);
    const seen: ProcessExit[] = [];
    const launcher: ProcessLauncher = {
      name: pidNamespace.name,
      prepare: async (launch, signal) => ({ ...(await pidNamespace.prepare(launch, signal)), release: async (exit) => void seen.push(exit) }),
    };
    const result = await runProcess({
      command: 'sh',
      args: ['-c', `setsid sleep ${sleep} < /dev/null > /dev/null 2>&1 & child=$!; sleep 0.2; kill -0 $child && echo "running in the namespace"`],
      launcher,
    });
    leftovers.push(...processesWithArgument(sleep));
    expect(result).toMatchObject({ exitCode: 0, stdout: { text: 'running in the namespace\n' } });
    expect(await waitUntil(() => processesWithArgument(sleep).length === 0)).toBe(true);
    expect(seen).toEqual([expect.objectContaining({ pid: result.pid, exitCode: 0 })]);
  });

  it("gives the program a launcher's further pipes as descriptors 3 and 4: one to read to its end, one whose output the launcher gets", async () => {
    const written: Buffer[] = [];
    const launcher: ProcessLauncher = {
      name: 'pipes',
      prepare: async (launch) => ({
        ...launch,
        pipes: [{ input: Buffer.from('kept off the command line\0second\0') }, { onOutput: (chunk) => void written.push(chunk) }],
      }),
    };
    const result = await runProcess({
      command: process.execPath,
      args: [
        '-e',
        "const fs = require('fs'); const text = fs.readFileSync(3, 'utf8'); fs.writeSync(4, text.split('\\0').join('|')); console.log('read', text.length);",
      ],
      launcher,
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: { text: 'read 33\n' } });
    expect(Buffer.concat(written).toString()).toBe('kept off the command line|second|');
    const wrong: ProcessLauncher = { name: 'wrong', prepare: async (launch) => ({ ...launch, pipes: [{ input: 'text' } as never] }) };
    await expect(runProcess({ command: 'true', launcher: wrong })).rejects.toMatchObject({ code: 'PROCESS_LAUNCH_FAILED', stage: 'prepare' });
  });

  it('reports a launcher that fails to prepare or to release, with the stage', async () => {
    const spawned: string[] = [];
    const counting: ProcessSpawn = (command, args, options: SpawnOptions) => {
      spawned.push(command);
      return spawn(command, [...args], options);
    };
    const broken: ProcessLauncher = { name: 'broken', prepare: async () => Promise.reject(new Error('bwrap is not installed')) };
    const refused = await runProcess({ command: 'true', launcher: broken, spawn: counting, toolName: 'builtin.command.run', planId: 'p1' }).catch(
      (error: unknown) => error,
    );
    expect(ProcessLaunchError.isInstance(refused)).toBe(true);
    expect(refused).toMatchObject({
      code: 'PROCESS_LAUNCH_FAILED',
      stage: 'prepare',
      launcher: 'broken',
      command: 'true',
      toolName: 'builtin.command.run',
      planId: 'p1',
    });
    expect((refused as Error).message).toBe(
      "Tool 'builtin.command.run' in plan 'p1': the launcher 'broken' could not prepare 'true', which was not started: bwrap is not installed. Check the launcher's requirements and settings.",
    );
    expect(spawned).toEqual([]);
    const failingRelease: ProcessLauncher = {
      name: 'overlay',
      prepare: async (launch) => ({ ...launch, release: () => Promise.reject(new Error('upper layer unreadable')) }),
    };
    const released = await runProcess({ command: 'true', launcher: failingRelease }).catch((error: unknown) => error);
    expect(released).toMatchObject({
      code: 'PROCESS_LAUNCH_FAILED',
      stage: 'release',
      message: expect.stringContaining("failed after 'true' exited: upper layer unreadable"),
    });
  });

  it('rejects with ProcessStartError, the OS error as cause, for a program or a folder that does not exist', async () => {
    const missing = await runProcess({ command: 'ca-no-such-program', toolName: 't', planId: 'p' }).catch((error: unknown) => error);
    expect(ProcessStartError.isInstance(missing)).toBe(true);
    expect(ProcessError.isInstance(missing)).toBe(true);
    expect(CaError.isInstance(missing)).toBe(true);
    expect(missing).toMatchObject({ code: 'PROCESS_START_FAILED', command: 'ca-no-such-program', systemCode: 'ENOENT', toolName: 't', planId: 'p' });
    expect((missing as Error).cause).toMatchObject({ code: 'ENOENT', syscall: 'spawn ca-no-such-program' });
    expect((missing as Error).message).toMatch(
      /^Tool 't' in plan 'p': could not start 'ca-no-such-program': spawn ca-no-such-program ENOENT\. Check that the program is installed/,
    );
    const noFolder = await runProcess({ command: 'true', cwd: join(folder, 'missing') }).catch((error: unknown) => error);
    expect(noFolder).toMatchObject({ code: 'PROCESS_START_FAILED', systemCode: 'ENOENT', cwd: join(folder, 'missing') });
  });

  it.each([
    [{ command: '' }, 'command'],
    [{ command: 'ls', args: ['ok', 'nul\0byte'] }, 'args[1]'],
    [{ command: 'ls', args: 'not-an-array' }, 'args'],
    [{ command: 'ls', env: { 'A=B': 'x' } }, 'env'],
    [{ command: 'ls', env: { A: 'nul\0' } }, 'env.A'],
    [{ command: 'ls', env: { A: 42 } }, 'env.A'],
    [{ command: 'ls', inheritEnv: [''] }, 'inheritEnv[0]'],
    [{ command: 'ls', timeoutMs: -1 }, 'timeoutMs'],
    [{ command: 'ls', killGraceMs: Number.NaN }, 'killGraceMs'],
    [{ command: 'ls', maxStdoutBytes: 1.5 }, 'maxStdoutBytes'],
    [{ command: 'ls', stdin: 42 }, 'stdin'],
    [{ command: 'ls', signal: { aborted: 'no' } }, 'signal'],
    [{ command: 'ls', launcher: { name: 'x' } }, 'launcher'],
    [null, 'options'],
  ])('refuses %j with PROCESS_INVALID_OPTIONS naming %s, starting nothing', async (options, option) => {
    const error = await runProcess(options as never).catch((caught: unknown) => caught);
    expect(ProcessOptionsError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'PROCESS_INVALID_OPTIONS', option });
    expect((error as Error).message).toContain(`the process option ${option} must be`);
  });
});

/** Polls `file` for a pid; never answers synchronously, so the runner has seen the start by then. */
async function readPid(file: string): Promise<number> {
  for (let attempt = 0; attempt < 400; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const text = (() => {
      try {
        return readFileSync(file, 'utf8').trim();
      } catch {
        return '';
      }
    })();
    if (/^\d+$/.test(text)) return Number(text);
  }
  throw new Error(`no pid in ${file}`);
}
