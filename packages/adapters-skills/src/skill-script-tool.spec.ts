import { CancellationToken, ToolCancelledError, createExecutionContext, resourceFromPath } from '@ca/tool-context';
import type { ToolFailure, ToolInstance, ToolSuccess } from '@ca/tool-lifecycle';
import { capabilityInPlan, ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive, sandboxAvailableForTests, waitUntilProcessesGone } from '@ca/sandbox/testing';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { existsSync, promises as fs } from 'node:fs';
import { join } from 'node:path';
import { SkillError } from './skill-error';
import type { SkillScriptInput, SkillScriptOutput } from './skill-script-tool';
import { createSkillsAdapter } from './skills-tool-source';
import type { SkillsAdapterSettings } from './skills-adapter-settings';
import { makeTempDir, removeTempDir, skillMarkdown, writeSkill } from './skills.test-helper';

type ScriptInstance = ToolInstance<SkillScriptInput, SkillScriptOutput>;

// Child processes start slowly on a loaded machine; this is a hang guard, not a speed requirement.
jest.setTimeout(30_000);

async function readPid(file: string): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (existsSync(file)) {
      const text = (await fs.readFile(file, 'utf8')).trim();
      if (text.length > 0) return Number(text);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the script never wrote ${file}`);
}

describe('bundled scripts', () => {
  let temp: string;
  let skillPath: string;
  const leftovers: number[] = [];

  beforeAll(async () => {
    temp = await makeTempDir();
    skillPath = await writeSkill(temp, 'tools-skill', skillMarkdown({ name: 'tools-skill', description: 'A skill with scripts.' }), {
      'scripts/hello.sh': 'echo "hello $1"\npwd\necho warning >&2\n',
      'scripts/hello.py': 'print("never offered")\n',
      'scripts/count.py': 'import sys\nprint(len(sys.argv) - 1)\nprint(sys.stdin.read().upper())\n',
      'scripts/echo.mjs': 'console.log(JSON.stringify(process.argv.slice(2)));\n',
      'scripts/fail.sh': 'echo boom >&2\nexit 3\n',
      'scripts/hang.sh': 'sleep 30 &\necho $! > "$1"\nwait\n',
      'scripts/detach.sh': 'sleep 30 > /dev/null 2>&1 < /dev/null &\necho $! > "$1"\necho started\n',
      'scripts/linger.sh': 'sleep 30 &\necho $! > "$1"\necho started\n',
      'scripts/noisy.sh': "head -c 100000 /dev/zero | tr '\\0' a\n",
      'scripts/data.txt': 'not a script\n',
      'scripts/run': '#!/bin/sh\necho direct\n',
    });
    await fs.chmod(join(skillPath, 'scripts', 'run'), 0o755);
    await writeSkill(temp, 'other', skillMarkdown({ name: 'other', description: 'Another skill.' }), { 'scripts/other.sh': 'echo other\n' });
  });
  afterEach(() => {
    for (const pid of leftovers.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  afterAll(() => removeTempDir(temp));

  async function source(settings: Partial<SkillsAdapterSettings> = {}) {
    // Pids the scripts write are the host's only without a PID namespace; the sandboxed scripts are below.
    const adapter = createSkillsAdapter({ roots: [temp], allowScripts: true, sandbox: 'off', ...settings });
    const descriptors = await adapter.discover();
    return { adapter, names: descriptors.map((descriptor) => descriptor.name) };
  }

  async function script(name: string, settings: Partial<SkillsAdapterSettings> = {}): Promise<ScriptInstance> {
    return (await (await source(settings)).adapter.get(name)) as ScriptInstance;
  }

  it('offers no script unless allowScripts opts in, for all skills or for the named ones', async () => {
    const closed = createSkillsAdapter({ roots: [temp] });
    expect((await closed.discover()).map((descriptor) => descriptor.name)).toEqual(['skill.other', 'skill.tools-skill']);
    expect((await source({ allowScripts: ['other'] })).names).toEqual(['skill.other', 'skill.other.script.other', 'skill.tools-skill']);
    const { adapter, names } = await source();
    expect(names).toEqual([
      'skill.other',
      'skill.other.script.other',
      'skill.tools-skill',
      'skill.tools-skill.script.count',
      'skill.tools-skill.script.detach',
      'skill.tools-skill.script.echo',
      'skill.tools-skill.script.fail',
      'skill.tools-skill.script.hang',
      'skill.tools-skill.script.hello',
      'skill.tools-skill.script.linger',
      'skill.tools-skill.script.noisy',
      'skill.tools-skill.script.run',
    ]);
    expect(adapter.diagnostics().map((diagnostic) => [diagnostic.code, diagnostic.message.split(' is not offered')[0]])).toEqual([
      ['SKILL_SCRIPT_SKIPPED', "Script 'scripts/data.txt'"],
      ['SKILL_SCRIPT_SKIPPED', "Script 'scripts/hello.sh'"],
    ]);
    const descriptor = (await adapter.get('skill.tools-skill.script.count')).descriptor;
    expect(descriptor.capability).toMatchObject({ writes: true, checkpointable: false });
    expect(descriptor.source).toBe('skill');
  });

  it('runs each interpreter without a shell, in the skill folder, with arguments and stdin', async () => {
    const ctx = createExecutionContext({ planId: 'scripts' });
    const hello = await script('skill.tools-skill.script.hello');
    // hello.py sorts before hello.sh, so the Python file holds the stem.
    const python = (await hello.execute({ args: ['x'] }, ctx)) as ToolSuccess<SkillScriptOutput>;
    expect(python.output.stdout).toBe('never offered\n');
    const count = (await (await script('skill.tools-skill.script.count')).execute({ args: ['a', 'b'], stdin: 'text' }, ctx)) as ToolSuccess<SkillScriptOutput>;
    expect(count).toMatchObject({ ok: true, output: { exitCode: 0, signal: null, stdout: '2\nTEXT\n', stderr: '' } });
    const dangerous = ['$HOME', '; rm -rf /', '`id`', '*'];
    const echo = (await (await script('skill.tools-skill.script.echo')).execute({ args: dangerous }, ctx)) as ToolSuccess<SkillScriptOutput>;
    expect(JSON.parse(echo.output.stdout)).toEqual(dangerous);
    const direct = (await (await script('skill.tools-skill.script.run')).execute({}, ctx)) as ToolSuccess<SkillScriptOutput>;
    expect(direct.output.stdout).toBe('direct\n');
    const other = (await (await script('skill.other.script.other')).execute(undefined as never, ctx)) as ToolSuccess<SkillScriptOutput>;
    expect(other.output.stdout).toBe('other\n');
  });

  it('runs a shell script with bash with the skill folder as working directory', async () => {
    await fs.writeFile(join(skillPath, 'scripts', 'where.sh'), 'pwd\necho "$0"\n');
    try {
      const where = (await (await script('skill.tools-skill.script.where')).execute({}, createExecutionContext())) as ToolSuccess<SkillScriptOutput>;
      expect(where.output.stdout).toBe(`${skillPath}\n${join(skillPath, 'scripts', 'where.sh')}\n`);
    } finally {
      await fs.rm(join(skillPath, 'scripts', 'where.sh'));
    }
  });

  it('returns a failed result with SKILL_SCRIPT_FAILED and the output for a non-zero exit', async () => {
    const result = (await (await script('skill.tools-skill.script.fail')).execute({}, createExecutionContext({ planId: 'p' }))) as ToolFailure;
    expect(result.ok).toBe(false);
    expect(SkillError.isInstance(result.error) && result.error.code).toBe('SKILL_SCRIPT_FAILED');
    expect(result.error.message).toContain("Tool 'skill.tools-skill.script.fail' in plan 'p' exited with status 3: boom");
    expect(result.output).toMatchObject({ exitCode: 3, stderr: 'boom\n' });
  });

  it('gives scripts the minimal environment plus scriptEnv, never the rest of the service environment', async () => {
    const own = await makeTempDir();
    process.env['AWS_SECRET_ACCESS_KEY'] = 'do-not-leak';
    process.env['CA_SKILLS_TEST_TOKEN'] = 'do-not-leak-either';
    try {
      await writeSkill(own, 'env-skill', skillMarkdown({ name: 'env-skill', description: 'Prints its environment.' }), {
        'scripts/env.mjs': 'process.stdout.write(JSON.stringify(process.env));\n',
      });
      const environmentOf = async (settings: Partial<SkillsAdapterSettings>): Promise<Record<string, string>> => {
        const adapter = createSkillsAdapter({ roots: [own], allowScripts: true, sandbox: 'off', ...settings });
        await adapter.discover();
        const tool = (await adapter.get('skill.env-skill.script.env')) as ScriptInstance;
        const result = (await tool.execute({}, createExecutionContext())) as ToolSuccess<SkillScriptOutput>;
        return JSON.parse(result.output.stdout) as Record<string, string>;
      };
      const minimal = ['HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'LOGNAME', 'PATH', 'TERM', 'TMPDIR', 'TZ', 'USER'];
      const byDefault = await environmentOf({});
      expect(byDefault['AWS_SECRET_ACCESS_KEY']).toBeUndefined();
      expect(byDefault['CA_SKILLS_TEST_TOKEN']).toBeUndefined();
      expect(byDefault['PATH']).toBe(process.env['PATH']);
      expect(Object.keys(byDefault).every((name) => minimal.includes(name))).toBe(true);
      const configured = await environmentOf({ scriptEnv: { GIVEN: 'from-settings', HOME: undefined } });
      expect(configured['AWS_SECRET_ACCESS_KEY']).toBeUndefined();
      expect(configured['HOME']).toBeUndefined();
      expect(configured).toMatchObject({ GIVEN: 'from-settings', PATH: process.env['PATH'] });
      expect(Object.keys(configured).every((name) => ['GIVEN', ...minimal].includes(name))).toBe(true);
    } finally {
      delete process.env['AWS_SECRET_ACCESS_KEY'];
      delete process.env['CA_SKILLS_TEST_TOKEN'];
      await removeTempDir(own);
    }
  });

  it('returns SKILL_SCRIPT_FAILED for an argument the system cannot pass on, starting nothing', async () => {
    const result = (await (
      await script('skill.tools-skill.script.echo')
    ).execute({ args: ['ok', 'nul\0byte'] }, createExecutionContext({ planId: 'p' }))) as ToolFailure;
    expect(result.ok).toBe(false);
    expect(result.error).toMatchObject({ code: 'SKILL_SCRIPT_FAILED', message: expect.stringContaining('holds what the system cannot pass to a program') });
  });

  it('refuses a scriptEnv the system could not pass on when the adapter is created', () => {
    expect(() => createSkillsAdapter({ roots: [temp], scriptEnv: { 'A=B': 'x' } })).toThrow(expect.objectContaining({ code: 'SKILL_INVALID_SETTINGS' }));
    expect(() => createSkillsAdapter({ roots: [temp], scriptEnv: { A: 42 as never } })).toThrow(expect.objectContaining({ code: 'SKILL_INVALID_SETTINGS' }));
  });

  it('returns SKILL_SCRIPT_FAILED when the interpreter cannot be started', async () => {
    const result = (await (
      await script('skill.tools-skill.script.count', { scriptEnv: { PATH: '/nonexistent' } })
    ).execute({}, createExecutionContext())) as ToolFailure;
    expect(result.ok).toBe(false);
    expect(result.error).toMatchObject({ code: 'SKILL_SCRIPT_FAILED', message: expect.stringContaining("could not start 'python3'") });
  });

  it('caps the output it keeps', async () => {
    const result = (await (
      await script('skill.tools-skill.script.noisy', { maxScriptOutputBytes: 1000 })
    ).execute({}, createExecutionContext())) as ToolSuccess<SkillScriptOutput>;
    expect(result.output.stdout).toBe('a'.repeat(1000));
    expect(result.output.stdoutTruncated).toBe(true);
    expect(result.output.stderrTruncated).toBe(false);
  });

  it('leaves nothing running after a script that exits while its background child lives on', async () => {
    const pidFile = join(temp, 'detach.pid');
    const result = (await (
      await script('skill.tools-skill.script.detach')
    ).execute({ args: [pidFile] }, createExecutionContext())) as ToolSuccess<SkillScriptOutput>;
    expect(result).toMatchObject({ ok: true, output: { exitCode: 0, stdout: 'started\n' } });
    const grandchild = await readPid(pidFile);
    leftovers.push(grandchild);
    expect(await waitUntilProcessesGone([grandchild])).toBe(true);
  }, 20_000);

  it('returns when the script exits, even if a background child still holds its output pipes', async () => {
    const pidFile = join(temp, 'linger.pid');
    const result = (await (
      await script('skill.tools-skill.script.linger', { scriptTimeoutMs: 15_000 })
    ).execute({ args: [pidFile] }, createExecutionContext())) as ToolSuccess<SkillScriptOutput>;
    const grandchild = await readPid(pidFile);
    leftovers.push(grandchild);
    expect(result).toMatchObject({ ok: true, output: { exitCode: 0, stdout: 'started\n' } });
    expect(await waitUntilProcessesGone([grandchild])).toBe(true);
  }, 20_000);

  it('kills the whole process group when the script times out', async () => {
    const pidFile = join(temp, 'timeout.pid');
    const running = (await script('skill.tools-skill.script.hang', { scriptTimeoutMs: 300 })).execute(
      { args: [pidFile] },
      createExecutionContext({ planId: 'slow' }),
    );
    const grandchild = await readPid(pidFile);
    leftovers.push(grandchild);
    const result = (await running) as ToolFailure;
    expect(result.ok).toBe(false);
    expect(result.error).toMatchObject({ code: 'SKILL_SCRIPT_TIMEOUT', message: expect.stringContaining('longer than 300 ms') });
    expect(await waitUntilProcessesGone([grandchild])).toBe(true);
  }, 20_000);

  it('kills the whole process group when the plan is cancelled, rejects with ToolCancelledError and removes its listener', async () => {
    const pidFile = join(temp, 'cancel.pid');
    const token = new CancellationToken();
    const ctx = createExecutionContext({ planId: 'cancelled', cancellationToken: token });
    const signal = token.signal;
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
    const running = (await script('skill.tools-skill.script.hang')).execute({ args: [pidFile] }, ctx);
    const grandchild = await readPid(pidFile);
    leftovers.push(grandchild);
    token.cancel('user stopped the plan');
    const error = await running.catch((caught: unknown) => caught);
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect((error as ToolCancelledError).reason).toBe('user stopped the plan');
    expect(await waitUntilProcessesGone([grandchild])).toBe(true);
    expect(added.length).toBeGreaterThan(0);
    expect(removed).toEqual(expect.arrayContaining(added));
  }, 20_000);

  it('refuses to start in a plan that is already cancelled', async () => {
    const token = new CancellationToken();
    token.cancel('too late');
    const tool = await script('skill.tools-skill.script.count');
    await expect(tool.execute({}, createExecutionContext({ cancellationToken: token }))).rejects.toMatchObject({ code: 'TOOL_CANCELLED', reason: 'too late' });
  });
});

const describeSandboxed = sandboxAvailableForTests('skill scripts in the kernel sandbox (bubblewrap)') ? describe : describe.skip;

describe('bundled scripts: the sandbox setting', () => {
  let temp: string;

  beforeAll(async () => {
    temp = await makeTempDir();
    await writeSkill(temp, 'plain', skillMarkdown({ name: 'plain', description: 'A skill with a script.' }), { 'scripts/hello.sh': 'echo hello\n' });
  });
  afterAll(() => removeTempDir(temp));

  it('says what a sandboxed script can do in each plan: a plain plan writes (destructive, open world); read-only and checkpoint plans, nothing', async () => {
    const sandboxed = createSkillsAdapter({ roots: [temp], allowScripts: true, sandbox: 'required' });
    await sandboxed.discover();
    const under = (await sandboxed.get('skill.plain.script.hello')).descriptor;
    const writing = { writes: true, destructive: true, checkpointable: false, openWorld: true, idempotent: false };
    expect(under.capability).toEqual(writing);
    expect(under.sandboxed).toEqual({ overlay: false });
    const policy = (readOnly: boolean, requireCheckpoint: boolean, network: 'allow' | 'deny' = 'allow') => ({ readOnly, requireCheckpoint, network });
    const nothing = { ...writing, writes: false, destructive: false, checkpointable: true };
    expect(capabilityInPlan(under, policy(false, false))).toEqual(writing);
    expect(capabilityInPlan(under, policy(true, false))).toEqual(nothing);
    expect(capabilityInPlan(under, policy(false, true))).toEqual(nothing);
    expect(capabilityInPlan(under, policy(false, false, 'deny'))).toEqual({ ...writing, openWorld: false });
    expect(under.description).toMatch(/It runs in a sandbox/);
    const plain = createSkillsAdapter({ roots: [temp], allowScripts: true, sandbox: 'off' });
    await plain.discover();
    expect((await plain.get('skill.plain.script.hello')).descriptor.capability).toMatchObject({ writes: true, checkpointable: false });
  });

  it('required without a working bwrap: activation fails with SANDBOX_UNAVAILABLE, naming the install command', async () => {
    const source = createSkillsAdapter({ roots: [temp], allowScripts: true, sandbox: { mode: 'required', bwrapPath: '/nonexistent/ca-bwrap' } });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    const ctx = runtime.createPlan();
    const error = await runtime.execute('skill.plain.script.hello', {}, ctx).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'TOOL_ACTIVATION_FAILED', cause: { code: 'SANDBOX_UNAVAILABLE' } });
    expect((error as Error).message).toMatch(/apt-get install bubblewrap/);
    await runtime.dispose();
  });

  it('refuses a sandbox setting of the wrong shape with SKILL_INVALID_SETTINGS', () => {
    expect(() => createSkillsAdapter({ roots: [temp], sandbox: 'yes' as never })).toThrow(
      expect.objectContaining({ code: 'SKILL_INVALID_SETTINGS', message: expect.stringMatching(/sandbox must be 'required', 'auto' or 'off'/) }),
    );
  });
});

describeSandboxed('bundled scripts in the kernel sandbox (real bwrap)', () => {
  let temp: string;
  let work: string;
  let runtime: ToolRuntime;

  beforeAll(async () => {
    temp = await makeTempDir();
    await writeSkill(temp, 'builder', skillMarkdown({ name: 'builder', description: 'Builds things.' }), {
      'scripts/build.sh': 'cat "$1/input.txt"; echo built > "$1/output.txt"; echo "exit $?"\n',
      'scripts/daemon.sh': 'setsid sleep "$1" < /dev/null > /dev/null 2>&1 &\nchild=$!\nsleep 0.2\nkill -0 $child && echo "daemon running"\n',
      'scripts/env.sh': 'env\n',
    });
  });
  afterAll(() => removeTempDir(temp));
  beforeEach(async () => {
    work = await makeTempDir();
    await fs.writeFile(join(work, 'input.txt'), 'input\n');
    runtime = new ToolRuntime({ sources: [createSkillsAdapter({ roots: [temp], allowScripts: true, sandbox: 'required' })], logger: new RecordingLogger() });
  });
  afterEach(async () => {
    await runtime.dispose();
    await removeTempDir(work);
  });

  const hashTree = async (root: string): Promise<string> => {
    const hash = createHash('sha256');
    const visit = async (folder: string): Promise<void> => {
      for (const entry of (await fs.readdir(folder, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
        const path = join(folder, entry.name);
        const stats = await fs.lstat(path);
        hash.update(`${path} ${stats.mode}\n`);
        if (entry.isDirectory()) await visit(path);
        else if (entry.isFile()) hash.update(await fs.readFile(path));
      }
    };
    await visit(root);
    return hash.digest('hex');
  };

  it('runs in a read-only plan instead of being refused, reads the resource and changes zero bytes of it', async () => {
    const before = await hashTree(work);
    const ctx = runtime.createPlan({ policy: { readOnly: true }, resources: [resourceFromPath({ id: 'work', path: work, access: 'write' })] });
    const result = (await runtime.execute('skill.builder.script.build', { args: [work] }, ctx)) as ToolSuccess<SkillScriptOutput>;
    expect(result).toMatchObject({ ok: true, output: { exitCode: 0, stdout: 'input\nexit 1\n' } }); // bash: a failed redirection is status 1
    expect(result.output.stderr).toMatch(/output\.txt: Read-only file system/);
    expect(await hashTree(work)).toBe(before);
    await runtime.endPlan(ctx);
  });

  it('writes a write-bound resource in an ordinary plan; in a checkpoint plan it runs with nothing writable (its writes could not be undone)', async () => {
    const resources = [resourceFromPath({ id: 'work', path: work, access: 'write' })];
    const checkpoint = runtime.createPlan({ policy: { requireCheckpoint: true }, resources });
    const before = await hashTree(work);
    const refused = (await runtime.execute('skill.builder.script.build', { args: [work] }, checkpoint)) as ToolSuccess<SkillScriptOutput>;
    expect(refused).toMatchObject({ ok: true, output: { exitCode: 0, stdout: 'input\nexit 1\n' } });
    expect(refused.output.stderr).toMatch(/output\.txt: Read-only file system/);
    expect(await hashTree(work)).toBe(before);
    expect(checkpoint.changes).toHaveLength(0);
    const ctx = runtime.createPlan({ resources });
    expect(await runtime.execute('skill.builder.script.build', { args: [work] }, ctx)).toMatchObject({ ok: true, output: { stdout: 'input\nexit 0\n' } });
    expect(await fs.readFile(join(work, 'output.txt'), 'utf8')).toBe('built\n');
    await Promise.all([ctx, checkpoint].map((plan) => runtime.endPlan(plan)));
  });

  it('ends a setsid daemon the script started when the call ends, and passes only the minimal environment', async () => {
    const ctx = runtime.createPlan();
    const sleep = `45.${process.pid}${Math.floor(Math.random() * 1e6)}`;
    const result = await runtime.execute('skill.builder.script.daemon', { args: [sleep] }, ctx);
    const left = readdirSync('/proc').filter((entry) => {
      try {
        return /^\d+$/.test(entry) && readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(sleep) && isProcessAlive(Number(entry));
      } catch {
        return false;
      }
    });
    for (const pid of left) process.kill(Number(pid), 'SIGKILL');
    expect(result).toMatchObject({ ok: true, output: { stdout: 'daemon running\n' } });
    expect(left).toEqual([]);
    const env = (await runtime.execute('skill.builder.script.env', {}, ctx)) as ToolSuccess<SkillScriptOutput>;
    const names = env.output.stdout
      .trim()
      .split('\n')
      .map((line) => line.slice(0, line.indexOf('=')));
    // bubblewrap sets PWD; the shell sets SHLVL and _.
    expect(
      names.filter(
        (name) => !['HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'LOGNAME', 'PATH', 'TERM', 'TMPDIR', 'TZ', 'USER', 'PWD', 'SHLVL', '_', 'OLDPWD'].includes(name),
      ),
    ).toEqual([]);
    await runtime.endPlan(ctx);
  });
});
