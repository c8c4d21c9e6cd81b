import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { createExecutionContext, ToolCancelledError, type PlanContext } from '@ca/tool-context';
import type { ToolRuntime } from '@ca/tool-lifecycle';
import { isProcessAlive, waitUntilProcessesGone } from '@ca/tool-lifecycle/testing';
import { codeOf, folderResource, makeTemporaryFolder, removeTemporaryFolders, strictRuntime } from './workspace.test-helper';

const node = process.execPath;
const fixture = join(__dirname, '__fixtures__', 'spawn-grandchild.js');

async function waitForPids(file: string): Promise<number[]> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (/^\d+ \d+$/.test(text)) return text.split(' ').map(Number);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no pids in ${file}`);
}

describe('builtin.command.run', () => {
  let work: string;
  let runtime: ToolRuntime;
  let ctx: PlanContext;
  const started: number[] = [];
  const run = (input: unknown, context = ctx) => runtime.execute<any>('builtin.command.run', input, context);

  beforeEach(async () => {
    work = await makeTemporaryFolder();
    ({ runtime } = strictRuntime({ command: { killGraceMs: 300, maxOutputBytes: 1000, env: { FIXED: 'from-settings' } } }));
    ctx = createExecutionContext({ planId: 'plan-command', resources: [folderResource('work', work)] });
  });

  afterEach(async () => {
    for (const pid of started.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await removeTemporaryFolders();
  });

  it('runs a program without a shell and returns exit code, stdout and stderr', async () => {
    const result = await run({
      command: [node, '-e', 'console.log(process.argv[1]); console.error("warn"); process.exit(3)', '$HOME; echo injected'],
    });
    expect(result).toMatchObject({ ok: true, output: { exitCode: 3, signal: null, stdout: '$HOME; echo injected\n', stderr: 'warn\n', timedOut: false } });
  });

  it('runs in the resource root by default, or in a cwd inside it, and refuses a cwd outside', async () => {
    const root = await run({ command: [node, '-e', 'process.stdout.write(process.cwd())'] });
    expect(root.output.stdout).toBe(await realpath(work));
    await runtime.execute('builtin.fs.write', { path: 'sub/x.txt', content: '' }, ctx);
    const sub = await run({ command: [node, '-e', 'process.stdout.write(process.cwd())'], cwd: 'sub' });
    expect(sub.output.stdout).toBe(join(work, 'sub'));
    expect(codeOf(await run({ command: [node, '-e', ''], cwd: '..' }))).toBe('BUILTIN_PATH_OUTSIDE_RESOURCES');
  });

  it('passes only the minimal environment, the fixed variables and the given ones', async () => {
    process.env['CA_BUILTIN_TEST_SECRET'] = 'do-not-leak';
    try {
      const result = await run({ command: [node, '-e', 'process.stdout.write(JSON.stringify(process.env))'], env: { GIVEN: 'yes' } });
      const env = JSON.parse(result.output.stdout) as Record<string, string>;
      expect(env['CA_BUILTIN_TEST_SECRET']).toBeUndefined();
      expect(env).toMatchObject({ GIVEN: 'yes', FIXED: 'from-settings', PATH: process.env['PATH'] });
      expect(Object.keys(env).every((name) => ['GIVEN', 'FIXED', 'PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'TEMP', 'TMP', 'USER', 'LOGNAME', 'SystemRoot'].includes(name))).toBe(true);
    } finally {
      delete process.env['CA_BUILTIN_TEST_SECRET'];
    }
  });

  it('caps stdout with a truncation marker and feeds stdin', async () => {
    const loud = await run({ command: [node, '-e', 'process.stdout.write("x".repeat(100000))'] });
    expect(loud.output.stdoutTruncated).toBe(true);
    expect(loud.output.stdout).toBe(`${'x'.repeat(1000)}\n[… output truncated: 99000 more bytes not shown]`);
    const echo = await run({ command: [node, '-e', 'process.stdin.pipe(process.stdout)'], stdin: 'from stdin' });
    expect(echo.output).toMatchObject({ stdout: 'from stdin', stdoutTruncated: false });
  });

  it('enforces the allowlist by name or absolute path', async () => {
    const { runtime: limited } = strictRuntime({ command: { allow: ['node', '/bin/echo'] } });
    expect(codeOf(await limited.execute('builtin.command.run', { command: [node, '-e', ''] }, ctx))).toBe('ok');
    expect(codeOf(await limited.execute('builtin.command.run', { command: ['/bin/echo', 'hi'] }, ctx))).toBe('ok');
    const refused = await limited.execute('builtin.command.run', { command: ['ls'] }, ctx);
    expect(codeOf(refused)).toBe('BUILTIN_COMMAND_NOT_ALLOWED');
    expect(refused.ok ? '' : refused.error.message).toMatch(/command\.allow/);
    expect(codeOf(await limited.execute('builtin.command.run', { command: ['/tmp/echo'] }, ctx))).toBe('BUILTIN_COMMAND_NOT_ALLOWED');
  });

  it('reports a program that cannot start', async () => {
    const result = await run({ command: ['ca-builtin-no-such-program'] });
    expect(codeOf(result)).toBe('BUILTIN_COMMAND_START_FAILED');
    expect(result.ok ? '' : result.error.message).toMatch(/ENOENT/);
  });

  it('on timeout kills the process, which ignores SIGTERM, and its grandchild, returning the partial output', async () => {
    const pidFile = join(work, 'pids');
    const result = await run({ command: [node, fixture, pidFile], timeoutMs: 1000 }, ctx);
    const pids = await waitForPids(pidFile);
    started.push(...pids);
    expect(codeOf(result)).toBe('BUILTIN_COMMAND_TIMED_OUT');
    expect(result.ok ? undefined : result.output).toMatchObject({ timedOut: true, signal: 'SIGKILL', stdout: expect.stringContaining('ignoring SIGTERM') });
    expect(await waitUntilProcessesGone(pids)).toBe(true);
  }, 20_000);

  it('on plan cancellation kills the process group and the runtime reports ToolCancelledError', async () => {
    const pidFile = join(work, 'pids');
    const running = run({ command: [node, fixture, pidFile] }, ctx).catch((error: unknown) => error);
    const pids = await waitForPids(pidFile);
    started.push(...pids);
    expect(isProcessAlive(pids[1] as number)).toBe(true);
    ctx.cancellationToken.cancel('cancelled by user');
    const error = await running;
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect(await waitUntilProcessesGone(pids)).toBe(true);
  }, 20_000);

  it('leaves no background process behind when the program exits on its own', async () => {
    const pidFile = join(work, 'pids');
    const result = await run({ command: [node, fixture, pidFile, 'exit'] });
    expect(result.output).toMatchObject({ exitCode: 0 });
    const pids = await waitForPids(pidFile);
    started.push(...pids);
    expect(await waitUntilProcessesGone(pids)).toBe(true);
  }, 20_000);
});
