import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createExecutionContext, ToolCancelledError, type PlanContext } from '@ca/tool-context';
import type { ToolRuntime } from '@ca/tool-lifecycle';
import { isProcessAlive, processesWithArgument, sandboxAvailableForTests, waitUntilProcessesGone } from '@ca/sandbox/testing';
import { codeOf, folderResource, makeTemporaryFolder, removeTemporaryFolders, strictRuntime } from './workspace.test-helper';

const node = process.execPath;
const fixture = join(__dirname, '__fixtures__', 'spawn-grandchild.js');
const execFileAsync = promisify(execFile);
// The behaviour every command has, with the kernel sandbox off and (where it works) on; what only the sandbox does is in command-run-sandbox.spec.ts.
const SANDBOX_MODES = sandboxAvailableForTests('builtin.command.run under the sandbox') ? (['off', 'required'] as const) : (['off'] as const);

async function waitForPids(file: string): Promise<number[]> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (/^\d+ \d+$/.test(text)) return text.split(' ').map(Number);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no pids in ${file}`);
}

describe.each(SANDBOX_MODES)('builtin.command.run (sandbox: %s)', (sandbox) => {
  let work: string;
  let runtime: ToolRuntime;
  let ctx: PlanContext;
  const run = (input: unknown, context = ctx) => runtime.execute<any>('builtin.command.run', input, context);
  const strict = (settings: Parameters<typeof strictRuntime>[0] = {}) => strictRuntime({ ...settings, command: { ...settings.command, sandbox } });

  beforeEach(async () => {
    work = await makeTemporaryFolder();
    ({ runtime } = strict({ command: { killGraceMs: 300, maxOutputBytes: 1000, env: { FIXED: 'from-settings' } } }));
    ctx = createExecutionContext({ planId: 'plan-command', resources: [folderResource('work', work)] });
  });

  afterEach(removeTemporaryFolders);

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
      // bubblewrap sets PWD, as a shell would.
      const expected = [
        'GIVEN',
        'FIXED',
        'HOME',
        'LANG',
        'LC_ALL',
        'LC_CTYPE',
        'LOGNAME',
        'PATH',
        'TERM',
        'TMPDIR',
        'TZ',
        'USER',
        ...(sandbox === 'off' ? [] : ['PWD']),
      ];
      expect(Object.keys(env).filter((name) => !expected.includes(name))).toEqual([]);
      expect(result.output.sandbox).toBe(sandbox === 'off' ? 'off' : 'in-place');
    } finally {
      delete process.env['CA_BUILTIN_TEST_SECRET'];
    }
  });

  it('refuses LD_PRELOAD in the call\'s env with command.allow: ["ls"]: a shared object written to the bound folder is never loaded', async () => {
    // The attack: the model writes a shared object through fs.write, then runs an allowed program with LD_PRELOAD.
    const build = await mkdtemp(join(tmpdir(), 'ca-preload-'));
    const marker = join(work, 'preload-ran');
    try {
      await writeFile(
        join(build, 'evil.c'),
        `#include <stdio.h>\n__attribute__((constructor)) static void evil(void) { FILE *f = fopen("${marker}", "w"); if (f) { fputs("loaded", f); fclose(f); } }\n`,
      );
      await execFileAsync('gcc', ['-shared', '-fPIC', '-o', join(build, 'evil.so'), join(build, 'evil.c')]);
      const library = (await readFile(join(build, 'evil.so'))).toString('base64');
      expect(codeOf(await runtime.execute('builtin.fs.write', { path: 'evil.so', content: library, encoding: 'base64' }, ctx))).toBe('ok');
    } finally {
      await rm(build, { recursive: true, force: true });
    }
    const attack = { command: ['ls'], env: { LD_PRELOAD: join(work, 'evil.so') } };
    const { runtime: limited } = strict({ command: { allow: ['ls'] } });
    for (const env of [attack.env, { ld_preload: join(work, 'evil.so') }, { LD_LIBRARY_PATH: work, LANG: 'C' }]) {
      const refused = await limited.execute('builtin.command.run', { ...attack, env }, ctx);
      expect(codeOf(refused)).toBe('BUILTIN_COMMAND_ENV_NOT_ALLOWED');
      expect(refused.ok ? '' : refused.error.message).toMatch(/refused to run "ls" with "(LD_PRELOAD|ld_preload|LD_LIBRARY_PATH)" in env: .*command\.allowEnv/);
    }
    expect(existsSync(marker)).toBe(false);
    // The same call with the variable allowed loads the object: the attack is real, and the refusal is what stopped it.
    const { runtime: opened } = strict({ command: { allow: ['ls'], allowEnv: ['ld_preload'] } });
    const ran = await opened.execute('builtin.command.run', attack, ctx);
    expect(codeOf(ran)).toBe('ok');
    expect(await readFile(marker, 'utf8')).toBe('loaded');
  });

  it("refuses PATH in the call's env, which would swap an allowed program for one in the bound folder", async () => {
    await mkdir(join(work, 'bin'));
    await writeFile(join(work, 'bin', 'ls'), '#!/bin/sh\necho "not the real ls"\n');
    await chmod(join(work, 'bin', 'ls'), 0o755);
    const { runtime: limited } = strict({ command: { allow: ['ls'] } });
    expect(codeOf(await limited.execute('builtin.command.run', { command: ['ls'], env: { PATH: join(work, 'bin') } }, ctx))).toBe(
      'BUILTIN_COMMAND_ENV_NOT_ALLOWED',
    );
    const { runtime: opened } = strict({ command: { allow: ['ls'], allowEnv: ['PATH'] } });
    const swapped = await opened.execute<any>('builtin.command.run', { command: ['ls'], env: { PATH: join(work, 'bin') } }, ctx);
    expect(swapped.output.stdout).toBe('not the real ls\n');
  });

  it('refuses loader, interpreter and shell variables in the call env, and lets ordinary variables through', async () => {
    const names = [
      'NODE_OPTIONS',
      'PYTHONPATH',
      'PERL5OPT',
      'RUBYOPT',
      'GIT_SSH_COMMAND',
      'BASH_ENV',
      'ENV',
      'IFS',
      'DYLD_INSERT_LIBRARIES',
      'npm_config_script_shell',
      'PAGER',
      'GCONV_PATH',
    ];
    for (const name of names) {
      const refused = await run({ command: [node, '-e', ''], env: { [name]: 'x' } });
      expect([name, codeOf(refused)]).toEqual([name, 'BUILTIN_COMMAND_ENV_NOT_ALLOWED']);
    }
    const ordinary = await run({
      command: [node, '-e', 'process.stdout.write(process.env.NODE_ENV + " " + process.env.CI)'],
      env: { NODE_ENV: 'test', CI: '1' },
    });
    expect(ordinary.output.stdout).toBe('test 1');
  });

  it('takes loader variables from the settings (trusted), and refuses a variable name the system cannot pass on', async () => {
    const { runtime: configured } = strict({ command: { env: { NODE_OPTIONS: '--max-old-space-size=64' } } });
    const fixed = await configured.execute<any>('builtin.command.run', { command: [node, '-e', 'process.stdout.write(process.env.NODE_OPTIONS)'] }, ctx);
    expect(fixed.output.stdout).toBe('--max-old-space-size=64');
    const invalid = await run({ command: [node, '-e', ''], env: { 'A=B': 'x' } });
    expect(codeOf(invalid)).toBe('BUILTIN_INVALID_INPUT');
  });

  it('caps stdout with a truncation marker and feeds stdin', async () => {
    const loud = await run({ command: [node, '-e', 'process.stdout.write("x".repeat(100000))'] });
    expect(loud.output.stdoutTruncated).toBe(true);
    expect(loud.output.stdout).toBe(`${'x'.repeat(1000)}\n[… output truncated: 99000 more bytes not shown]`);
    const echo = await run({ command: [node, '-e', 'process.stdin.pipe(process.stdout)'], stdin: 'from stdin' });
    expect(echo.output).toMatchObject({ stdout: 'from stdin', stdoutTruncated: false });
  });

  it('enforces the allowlist by name or absolute path', async () => {
    const { runtime: limited } = strict({ command: { allow: ['node', '/bin/echo'] } });
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
});

describe('builtin.command.run without the sandbox: process groups', () => {
  let work: string;
  let runtime: ToolRuntime;
  let ctx: PlanContext;
  const started: number[] = [];
  const run = (input: unknown, context = ctx) => runtime.execute<any>('builtin.command.run', input, context);

  beforeEach(async () => {
    work = await makeTemporaryFolder();
    // The pids the fixture writes are the host's only without a PID namespace.
    ({ runtime } = strictRuntime({ command: { killGraceMs: 300, maxOutputBytes: 1000, sandbox: 'off' } }));
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
  // The limit of process groups, stated where the README promises that no process is left behind:
  // a descendant that calls setsid leaves the group and survives the call. The sandbox's PID
  // namespace is the fix (command-run-sandbox.spec.ts shows the same daemon gone); with the
  // sandbox off, this is what remains true.
  it('with the sandbox off, does NOT reach a descendant that left the process group with setsid (the documented limit)', async () => {
    const sleep = `40.${process.pid}${Math.floor(Math.random() * 1e6)}`;
    const result = await run({ command: ['sh', '-c', `setsid sleep ${sleep} < /dev/null > /dev/null 2>&1 & sleep 0.2; echo started`] });
    const escaped = processesWithArgument(sleep);
    started.push(...escaped);
    expect(result.output).toMatchObject({ exitCode: 0, stdout: 'started\n' });
    expect(escaped).toHaveLength(1);
    expect(isProcessAlive(escaped[0] as number)).toBe(true);
  });
});
