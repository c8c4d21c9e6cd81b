// The fault matrix, continued with real sources: built-in tools on real files
// and real processes, and Agent Skills from a temporary skills folder. The
// faults are the ones these sources can really have: a missing file, a
// command that ignores SIGTERM, a SKILL.md that cannot be loaded at
// activation, a bundled file that is not there, a script that fails or
// ignores SIGTERM. Same checks as the programmable matrix: the fault is
// reported clearly with its trace, the plan ends, other tools are unaffected.
import { mkdtemp, readFile, realpath, rm, mkdir, writeFile, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BuiltinToolError, createBuiltinAdapter } from '@ca/adapters-builtin';
import { SkillError, createSkillsAdapter } from '@ca/adapters-skills';
import { ToolCancelledError, resourceFromPath, type PlanContext } from '@ca/tool-context';
import { ToolActivationError, ToolRuntime, type ExecutionResult } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { settle, withinHangGuard } from './support/guards';

const node = process.execPath;

/** A node program that ignores SIGTERM, writes its pid to argv[1] and then waits forever. */
const STUBBORN = `process.on('SIGTERM', () => console.log('ignoring SIGTERM'));
require('node:fs').writeFileSync(process.argv[process.argv.length - 1], String(process.pid));
setInterval(() => undefined, 1000);`;

/** Like STUBBORN, and writes "SIGTERM" to argv[2] once it has ignored one (argv[1] gets the pid). */
const STUBBORN_RECORDING = `const [pidFile, termFile] = process.argv.slice(-2);
process.on('SIGTERM', () => { console.log('ignoring SIGTERM'); require('node:fs').writeFileSync(termFile, 'SIGTERM'); });
require('node:fs').writeFileSync(pidFile, String(process.pid));
setInterval(() => undefined, 1000);`;

const folders: string[] = [];
const pids: number[] = [];

async function temporaryFolder(): Promise<string> {
  const folder = await realpath(await mkdtemp(join(tmpdir(), 'ca-reliability-')));
  folders.push(folder);
  return folder;
}

/** Polls until `check` holds (a hang guard bounds it; no assertion depends on the speed). */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  await withinHangGuard(
    (async () => {
      while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 25));
    })(),
    what,
  );
}

/**
 * The content of a file once it has some, polled on real timers (it works while
 * Jest's fake timers are installed); at most 20 s, a hang guard only.
 */
async function fileContent(file: string): Promise<string> {
  for (let attempt = 0; attempt < 800; attempt++) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (text.length > 0) return text;
    await sleep(25);
  }
  throw new Error(`hang: nothing was written to ${file} within 20 s`);
}

async function pidFrom(file: string): Promise<number> {
  let text = '';
  await eventually(async () => {
    text = await readFile(file, 'utf8').catch(() => '');
    return /^\d+$/.test(text);
  }, `the pid in ${file}`);
  const pid = Number(text);
  pids.push(pid);
  return pid;
}

function codeOf(result: ExecutionResult): string {
  return result.ok ? 'ok' : String((result.error as { code?: unknown }).code);
}

function expectReturnedFailure(result: ExecutionResult, ctx: PlanContext, tool: string, code: string): void {
  expect(codeOf(result)).toBe(code);
  expect(result.trace).toBe(ctx.traces[ctx.traces.length - 1]);
  expect(result.trace).toMatchObject({ toolName: tool, success: false, error: { code } });
  expect(result.ok ? '' : result.error.message).toContain(tool);
}

afterAll(async () => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone, as it should be
    }
  }
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

describe('fault matrix: built-in tools (@ca/adapters-builtin)', () => {
  let work: string;
  let runtime: ToolRuntime;
  let logger: RecordingLogger;
  const plan = (): PlanContext => runtime.createPlan({ resources: [resourceFromPath({ id: 'work', path: work, access: 'write' })] });

  beforeEach(async () => {
    work = await temporaryFolder();
    logger = new RecordingLogger();
    // Without the kernel sandbox: the pids the programs write are the host's, and the process group is what is tested.
    runtime = new ToolRuntime({ sources: [createBuiltinAdapter({ command: { killGraceMs: 200, sandbox: 'off' } })], logger });
  });

  it('builtin.fs.read of a missing file → a failed result BUILTIN_NOT_FOUND, traced; plan ends; writing and reading other files unaffected', async () => {
    const ctx = plan();
    const missing = await runtime.execute('builtin.fs.read', { path: 'no-such-file.txt' }, ctx);
    expectReturnedFailure(missing, ctx, 'builtin.fs.read', 'BUILTIN_NOT_FOUND');
    expect(BuiltinToolError.isInstance(missing.ok ? undefined : missing.error)).toBe(true);
    expect(await runtime.execute('builtin.fs.write', { path: 'present.txt', content: 'hello\n' }, ctx)).toMatchObject({ ok: true });
    expect(await runtime.execute('builtin.fs.read', { path: 'present.txt' }, ctx)).toMatchObject({ ok: true });
    const report = await runtime.endPlan(ctx);
    expect(report).toMatchObject({ failures: [], abandonedExecutions: 0, alreadyEnded: false });
    expect(report.deactivated).toContain('builtin.fs.write');
    expect(ctx.traces.map((trace) => trace.success)).toEqual([false, true, true]);
  });

  it('builtin.command.run of a command that ignores SIGTERM, plan cancelled → ToolCancelledError; the process is killed; the plan ends; other plans run commands', async () => {
    const ctx = plan();
    const pidFile = join(work, 'stubborn.pid');
    const running = runtime.execute('builtin.command.run', { command: [node, '-e', STUBBORN, pidFile] }, ctx);
    const pid = await pidFrom(pidFile);
    expect(isProcessAlive(pid)).toBe(true);
    ctx.cancellationToken.cancel('stop the build');
    const outcome = await withinHangGuard(settle(running), 'the cancelled command');
    const error = outcome.status === 'rejected' ? (outcome.reason as Error & { trace?: unknown }) : undefined;
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'TOOL_CANCELLED', reason: 'stop the build' });
    expect(error?.trace).toBe(ctx.traces[0]);
    const report = await withinHangGuard(runtime.endPlan(ctx), 'endPlan');
    expect(report).toMatchObject({ failures: [], alreadyEnded: false });
    await eventually(async () => !isProcessAlive(pid), 'the stubborn process to be killed');

    const other = plan();
    const echo = await runtime.execute<{ exitCode: number; stdout: string }>(
      'builtin.command.run',
      { command: [node, '-e', 'console.log("still fine")'] },
      other,
    );
    expect(echo).toMatchObject({ ok: true, output: { exitCode: 0, stdout: 'still fine\n' } });
    expect((await runtime.endPlan(other)).failures).toEqual([]);
  });

  it('builtin.command.run of a command that ignores SIGTERM past its deadline → a failed result BUILTIN_COMMAND_TIMED_OUT after SIGKILL, with the output so far', async () => {
    // The deadline and the kill grace run on fake timers, advanced only once
    // the program is ready and once it has ignored SIGTERM: each step follows
    // the one before it, however slow the machine is.
    const ctx = plan();
    const pidFile = join(work, 'deadline.pid');
    const termFile = join(work, 'deadline.term');
    jest.useFakeTimers({
      doNotFake: ['Date', 'hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval'],
    });
    let running: Promise<ExecutionResult>;
    let pid: number;
    try {
      running = runtime.execute('builtin.command.run', { command: [node, '-e', STUBBORN_RECORDING, pidFile, termFile], timeoutMs: 300 }, ctx);
      pid = Number(await fileContent(pidFile));
      pids.push(pid);
      expect(isProcessAlive(pid)).toBe(true);
      jest.advanceTimersByTime(300); // the deadline: SIGTERM to the process group
      expect(await fileContent(termFile)).toBe('SIGTERM');
      expect(isProcessAlive(pid)).toBe(true);
      jest.advanceTimersByTime(200); // killGraceMs: SIGKILL
    } finally {
      jest.useRealTimers();
    }
    const result = await withinHangGuard(running, 'the command');
    expectReturnedFailure(result, ctx, 'builtin.command.run', 'BUILTIN_COMMAND_TIMED_OUT');
    expect(result.ok ? undefined : result.output).toMatchObject({ timedOut: true, signal: 'SIGKILL', stdout: 'ignoring SIGTERM\n' });
    await eventually(async () => !isProcessAlive(pid), 'the process to be gone');
    expect((await runtime.endPlan(ctx)).failures).toEqual([]);
  });
});

describe('fault matrix: Agent Skills (@ca/adapters-skills, temporary skills folder)', () => {
  let root: string;
  let runtime: ToolRuntime;
  let logger: RecordingLogger;

  async function writeSkill(name: string, body: string, files: Record<string, string> = {}): Promise<void> {
    const folder = join(root, name);
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'SKILL.md'), `---\nname: ${name}\ndescription: The ${name} skill, for the fault matrix.\n---\n${body}`);
    for (const [path, content] of Object.entries(files)) {
      await mkdir(join(folder, path, '..'), { recursive: true });
      await writeFile(join(folder, path), content);
    }
  }

  beforeEach(async () => {
    root = await temporaryFolder();
    await writeSkill('healthy', '# Healthy\nDo the healthy thing.\n', { 'references/guide.md': '# Guide\n' });
    await writeSkill('bloated', `# Bloated\n${'Too much detail. '.repeat(600)}\n`);
    await writeSkill('vanishing', '# Vanishing\n');
    await writeSkill('scripted', '# Scripted\nRun the scripts.\n', {
      'scripts/fail.js': "console.error('the script failed on purpose'); process.exit(3);\n",
      'scripts/stubborn.js': STUBBORN,
    });
    logger = new RecordingLogger();
    runtime = new ToolRuntime({
      // Without the kernel sandbox: the script writes its pid into the skills folder, which the sandbox keeps read-only.
      sources: [createSkillsAdapter({ roots: [root], maxSkillFileBytes: 4096, allowScripts: ['scripted'], sandbox: 'off' })],
      logger,
    });
    const { tools, unavailable } = await runtime.discover();
    expect(unavailable).toEqual([]);
    expect(tools.map((tool) => tool.name)).toEqual([
      'skill.bloated',
      'skill.healthy',
      'skill.scripted',
      'skill.scripted.script.fail',
      'skill.scripted.script.stubborn',
      'skill.vanishing',
    ]);
  });

  async function expectHealthySkill(ctx: PlanContext): Promise<void> {
    expect(await runtime.execute('skill.healthy', {}, ctx)).toMatchObject({ ok: true, output: { kind: 'instructions', name: 'healthy' } });
  }

  it.each([
    ['SKILL.md over maxSkillFileBytes', 'skill.bloated', 'SKILL_FILE_TOO_LARGE', async () => undefined],
    ['SKILL.md removed after discovery', 'skill.vanishing', 'SKILL_FILE_READ_FAILED', () => unlink(join(root, 'vanishing', 'SKILL.md'))],
  ])('activation fails (%s) → ToolActivationError with the SkillError as cause; plan ends; other skills unaffected', async (_label, tool, code, breakIt) => {
    await breakIt();
    const ctx = runtime.createPlan();
    await expectHealthySkill(ctx);
    const outcome = await withinHangGuard(settle(runtime.execute(tool, {}, ctx)), 'execute');
    const error = outcome.status === 'rejected' ? (outcome.reason as Error & { cause?: unknown; trace?: unknown }) : undefined;
    expect(ToolActivationError.isInstance(error)).toBe(true);
    expect(SkillError.isInstance(error?.cause)).toBe(true);
    expect((error?.cause as { code?: string }).code).toBe(code);
    expect(error?.message).toContain(tool);
    expect(error?.message).toContain(ctx.planId);
    expect(error?.trace).toBe(ctx.traces[1]);
    expect(ctx.traces[1]).toMatchObject({ toolName: tool, success: false, error: { code: 'TOOL_ACTIVATION_FAILED' } });
    await expectHealthySkill(ctx);
    const report = await runtime.endPlan(ctx);
    expect(report).toMatchObject({ deactivated: ['skill.healthy'], failures: [], abandonedExecutions: 0 });
  });

  it('a bundled file that is missing, or outside the skill → failed results SKILL_FILE_NOT_FOUND / SKILL_PATH_OUTSIDE_ROOT; the skill still serves its files', async () => {
    const ctx = runtime.createPlan();
    expectReturnedFailure(await runtime.execute('skill.healthy', { file: 'references/missing.md' }, ctx), ctx, 'skill.healthy', 'SKILL_FILE_NOT_FOUND');
    expectReturnedFailure(await runtime.execute('skill.healthy', { file: '../scripted/SKILL.md' }, ctx), ctx, 'skill.healthy', 'SKILL_PATH_OUTSIDE_ROOT');
    expect(await runtime.execute('skill.healthy', { file: 'references/guide.md' }, ctx)).toMatchObject({
      ok: true,
      output: { kind: 'file', content: '# Guide\n' },
    });
    expect((await runtime.endPlan(ctx)).failures).toEqual([]);
  });

  it('a script that exits non-zero → a failed result SKILL_SCRIPT_FAILED with its output; the other skills are unaffected', async () => {
    const ctx = runtime.createPlan();
    const result = await runtime.execute('skill.scripted.script.fail', {}, ctx);
    expectReturnedFailure(result, ctx, 'skill.scripted.script.fail', 'SKILL_SCRIPT_FAILED');
    expect(result.ok ? undefined : result.output).toMatchObject({ exitCode: 3, stderr: expect.stringContaining('failed on purpose') });
    await expectHealthySkill(ctx);
    expect((await runtime.endPlan(ctx)).failures).toEqual([]);
  });

  it('a script that ignores SIGTERM, plan cancelled → ToolCancelledError; the process group is killed; the plan ends', async () => {
    const ctx = runtime.createPlan();
    await expectHealthySkill(ctx);
    const pidFile = join(root, 'script.pid');
    const running = runtime.execute('skill.scripted.script.stubborn', { args: [pidFile] }, ctx);
    const pid = await pidFrom(pidFile);
    ctx.cancellationToken.cancel('the user left');
    const outcome = await withinHangGuard(settle(running), 'the cancelled script');
    const error = outcome.status === 'rejected' ? (outcome.reason as Error & { trace?: unknown }) : undefined;
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect(error?.trace).toBe(ctx.traces[1]);
    const report = await withinHangGuard(runtime.endPlan(ctx), 'endPlan');
    expect(report).toMatchObject({ failures: [], alreadyEnded: false });
    expect(report.deactivated).toContain('skill.healthy');
    await eventually(async () => !isProcessAlive(pid), 'the script process to be killed');
    const other = runtime.createPlan();
    await expectHealthySkill(other);
    await runtime.endPlan(other);
  });
});
