import { CancellationToken, ToolCancelledError, createExecutionContext } from '@ca/tool-context';
import type { ToolFailure, ToolInstance, ToolSuccess } from '@ca/tool-lifecycle';
import { waitUntilProcessesGone } from '@ca/tool-lifecycle/testing';
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
    const adapter = createSkillsAdapter({ roots: [temp], allowScripts: true, ...settings });
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
        const adapter = createSkillsAdapter({ roots: [own], allowScripts: true, ...settings });
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
    const result = (await (await script('skill.tools-skill.script.echo')).execute({ args: ['ok', 'nul\0byte'] }, createExecutionContext({ planId: 'p' }))) as ToolFailure;
    expect(result.ok).toBe(false);
    expect(result.error).toMatchObject({ code: 'SKILL_SCRIPT_FAILED', message: expect.stringContaining('holds what the system cannot pass to a program') });
  });

  it('refuses a scriptEnv the system could not pass on when the adapter is created', () => {
    expect(() => createSkillsAdapter({ roots: [temp], scriptEnv: { 'A=B': 'x' } })).toThrow(expect.objectContaining({ code: 'SKILL_INVALID_SETTINGS' }));
    expect(() => createSkillsAdapter({ roots: [temp], scriptEnv: { A: 42 as never } })).toThrow(expect.objectContaining({ code: 'SKILL_INVALID_SETTINGS' }));
  });

  it('returns SKILL_SCRIPT_FAILED when the interpreter cannot be started', async () => {
    const result = (await (await script('skill.tools-skill.script.count', { scriptEnv: { PATH: '/nonexistent' } })).execute(
      {},
      createExecutionContext(),
    )) as ToolFailure;
    expect(result.ok).toBe(false);
    expect(result.error).toMatchObject({ code: 'SKILL_SCRIPT_FAILED', message: expect.stringContaining("could not start 'python3'") });
  });

  it('caps the output it keeps', async () => {
    const result = (await (await script('skill.tools-skill.script.noisy', { maxScriptOutputBytes: 1000 })).execute({}, createExecutionContext())) as ToolSuccess<SkillScriptOutput>;
    expect(result.output.stdout).toBe('a'.repeat(1000));
    expect(result.output.stdoutTruncated).toBe(true);
    expect(result.output.stderrTruncated).toBe(false);
  });

  it('leaves nothing running after a script that exits while its background child lives on', async () => {
    const pidFile = join(temp, 'detach.pid');
    const result = (await (await script('skill.tools-skill.script.detach')).execute({ args: [pidFile] }, createExecutionContext())) as ToolSuccess<SkillScriptOutput>;
    expect(result).toMatchObject({ ok: true, output: { exitCode: 0, stdout: 'started\n' } });
    const grandchild = await readPid(pidFile);
    leftovers.push(grandchild);
    expect(await waitUntilProcessesGone([grandchild])).toBe(true);
  }, 20_000);

  it('returns when the script exits, even if a background child still holds its output pipes', async () => {
    const pidFile = join(temp, 'linger.pid');
    const result = (await (await script('skill.tools-skill.script.linger', { scriptTimeoutMs: 15_000 })).execute(
      { args: [pidFile] },
      createExecutionContext(),
    )) as ToolSuccess<SkillScriptOutput>;
    const grandchild = await readPid(pidFile);
    leftovers.push(grandchild);
    expect(result).toMatchObject({ ok: true, output: { exitCode: 0, stdout: 'started\n' } });
    expect(await waitUntilProcessesGone([grandchild])).toBe(true);
  }, 20_000);

  it('kills the whole process group when the script times out', async () => {
    const pidFile = join(temp, 'timeout.pid');
    const running = (await script('skill.tools-skill.script.hang', { scriptTimeoutMs: 300 })).execute({ args: [pidFile] }, createExecutionContext({ planId: 'slow' }));
    const grandchild = await readPid(pidFile);
    leftovers.push(grandchild);
    const result = (await running) as ToolFailure;
    expect(result.ok).toBe(false);
    expect(result.error).toMatchObject({ code: 'SKILL_SCRIPT_TIMEOUT', message: expect.stringContaining('longer than 300 ms') });
    expect(await waitUntilProcessesGone([grandchild])).toBe(true);
  }, 20_000);

  it("kills the whole process group when the plan is cancelled, rejects with ToolCancelledError and removes its listener", async () => {
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
