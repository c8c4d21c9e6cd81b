import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { ToolRuntime } from '@ca/tool-lifecycle';
import { discoverSkills } from './discover-skills';
import { nodeSkillsFileSystem, type SkillsFileSystem } from './skills-file-system';
import { createSkillsAdapter } from './skills-tool-source';
import { makeTempDir, removeTempDir, skillMarkdown, writeSkill } from './skills.test-helper';

// A hang guard (a blocking FIFO would never finish), not a speed requirement.
jest.setTimeout(30_000);

const ALIAS_BOMB = [
  '---',
  'name: bomb',
  'description: Looks harmless.',
  'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
  'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
  'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
  'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]',
  'e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]',
  'f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]',
  '---',
  '# Bomb',
  '',
].join('\n');

describe('skills from hostile folders', () => {
  let temp: string;
  let root: string;
  let outside: string;

  beforeEach(async () => {
    temp = await fs.realpath(await makeTempDir());
    root = join(temp, 'skills');
    outside = join(temp, 'outside');
    await fs.mkdir(root);
    await fs.mkdir(outside);
    await fs.writeFile(join(outside, 'secret.md'), skillMarkdown({ name: 'stolen', description: 'Outside the skill.' }, 'OUTSIDE SECRET\n'));
    await writeSkill(root, 'good', skillMarkdown({ name: 'good', description: 'A fine skill.' }), { 'notes.md': 'notes\n' });
  });

  afterEach(() => removeTempDir(temp));

  it('reports a SKILL.md that is a FIFO as a diagnostic of that skill, and the other skills and sources still serve', async () => {
    await fs.mkdir(join(root, 'pipe'));
    execFileSync('mkfifo', [join(root, 'pipe', 'SKILL.md')]);
    const otherRoot = join(temp, 'other');
    await writeSkill(otherRoot, 'second', skillMarkdown({ name: 'second', description: 'From a second source.' }));
    const runtime = new ToolRuntime({
      sources: [createSkillsAdapter({ id: 'skills:first', roots: [root] }), createSkillsAdapter({ id: 'skills:second', roots: [otherRoot] })],
      options: { discoverTimeoutMs: 10_000 },
    });
    try {
      const discovery = await runtime.discover();
      expect(discovery.sourceErrors).toEqual([]);
      expect(discovery.tools.map((tool) => tool.name).sort()).toEqual(['skill.good', 'skill.second']);
      const pipe = discovery.unavailable.find((tool) => tool.name === 'skill.pipe');
      expect(pipe?.error).toMatchObject({ code: 'SKILL_INVALID', diagnosticCode: 'SKILL_FILE_NOT_REGULAR' });
      expect(pipe?.reason).toMatch(/fifo, not a regular file/);
    } finally {
      await runtime.dispose();
    }
  });

  it('refuses a bundled file that is a FIFO, and a SKILL.md swapped for a FIFO after discovery, without blocking', async () => {
    execFileSync('mkfifo', [join(root, 'good', 'pipe.md')]);
    const runtime = new ToolRuntime({ sources: [createSkillsAdapter({ roots: [root] })] });
    try {
      await runtime.discover();
      const plan = runtime.createPlan();
      const bundled = await runtime.execute('skill.good', { file: 'pipe.md' }, plan);
      expect(bundled.ok ? undefined : bundled.error).toMatchObject({ code: 'SKILL_FILE_NOT_REGULAR' });
      expect(bundled.ok ? '' : bundled.error.message).toMatch(/refused 'pipe\.md': it is a fifo/);
      const listing = await runtime.execute<any>('skill.good', {}, plan);
      expect(listing.output.files).toEqual(['notes.md']);
      await runtime.endPlan(plan);

      await fs.rm(join(root, 'good', 'SKILL.md'));
      execFileSync('mkfifo', [join(root, 'good', 'SKILL.md')]);
      const later = runtime.createPlan();
      await expect(runtime.execute('skill.good', {}, later)).rejects.toMatchObject({
        code: 'TOOL_ACTIVATION_FAILED',
        cause: { code: 'SKILL_FILE_NOT_REGULAR' },
      });
      await runtime.endPlan(later);
    } finally {
      await runtime.dispose();
    }
  });

  it('refuses a SKILL.md that is a link to a file outside the skill, and accepts one that stays inside', async () => {
    await fs.mkdir(join(root, 'linked-out'));
    await fs.symlink(join(outside, 'secret.md'), join(root, 'linked-out', 'SKILL.md'));
    await writeSkill(root, 'linked-in', skillMarkdown({ name: 'linked-in', description: 'Its SKILL.md is a link inside.' }), {});
    await fs.rename(join(root, 'linked-in', 'SKILL.md'), join(root, 'linked-in', 'real.md'));
    await fs.symlink('real.md', join(root, 'linked-in', 'SKILL.md'));
    const { skills, skipped } = await discoverSkills({ roots: [root] });
    expect(skills.map((skill) => skill.name).sort()).toEqual(['good', 'linked-in']);
    expect(skipped.map((skip) => [skip.toolName, skip.diagnostic.code])).toEqual([['skill.linked-out', 'SKILL_PATH_OUTSIDE_ROOT']]);
    expect(skipped[0].diagnostic.message).toMatch(/link to a file outside the skill folder/);
  });

  it('turns a YAML alias bomb into SKILL_YAML_INVALID for that skill alone', async () => {
    await writeSkill(root, 'bomb', ALIAS_BOMB);
    const { skills, skipped, diagnostics } = await discoverSkills({ roots: [root] });
    expect(skills.map((skill) => skill.name)).toEqual(['good']);
    expect(skipped.map((skip) => [skip.toolName, skip.diagnostic.code])).toEqual([['skill.bomb', 'SKILL_YAML_INVALID']]);
    expect(diagnostics.find((diagnostic) => diagnostic.path === join(root, 'bomb'))?.message).toMatch(/alias/i);
  });

  it('keeps discovering when probing one folder fails in an unexpected way', async () => {
    await writeSkill(root, 'broken', skillMarkdown({ name: 'broken', description: 'Its probe throws.' }), { 'scripts/run.sh': 'echo hi\n' });
    const brokenScripts = join(root, 'broken', 'scripts');
    const fileSystem: SkillsFileSystem = {
      ...nodeSkillsFileSystem,
      // An injected file system with a bug: an entry whose type checks throw, where nothing expects a throw.
      readdir: async (path) => {
        if (path !== brokenScripts) return nodeSkillsFileSystem.readdir(path);
        const broken = (): boolean => {
          throw new TypeError('entry type is not available');
        };
        return [{ name: 'run.sh', isFile: broken, isDirectory: broken, isSymbolicLink: broken }];
      },
    };
    const { skills, skipped } = await discoverSkills({ roots: [root], fileSystem, allowScripts: true });
    expect(skills.map((skill) => skill.name)).toEqual(['good']);
    expect(skipped).toMatchObject([{ toolName: 'skill.broken', diagnostic: { code: 'SKILL_READ_FAILED' } }]);
    expect(skipped[0].diagnostic.message).toMatch(/could not be probed \(entry type is not available\)/);
  });

  it('refuses a bundled file once its folder is swapped for a link to outside between the check and the open', async () => {
    await writeSkill(root, 'raced', skillMarkdown({ name: 'raced', description: 'Raced.' }), { 'docs/guide.md': 'inside\n' });
    await fs.writeFile(join(outside, 'guide.md'), 'OUTSIDE SECRET\n');
    const docs = join(root, 'raced', 'docs');
    let swapped = false;
    const fileSystem: SkillsFileSystem = {
      ...nodeSkillsFileSystem,
      // The attacker's move lands between the adapter's resolution of the path and its open.
      realpath: async (path) => {
        const real = await nodeSkillsFileSystem.realpath(path);
        if (path.endsWith('guide.md') && !swapped) {
          swapped = true;
          await fs.rename(docs, `${docs}.moved`);
          await fs.symlink(outside, docs);
        }
        return real;
      },
    };
    const runtime = new ToolRuntime({ sources: [createSkillsAdapter({ roots: [root], fileSystem })] });
    try {
      await runtime.discover();
      const result = await runtime.execute('skill.raced', { file: 'docs/guide.md' }, runtime.createPlan());
      expect(swapped).toBe(true);
      expect(result.ok ? undefined : result.error).toMatchObject({ code: 'SKILL_PATH_OUTSIDE_ROOT' });
      expect(JSON.stringify(result)).not.toContain('OUTSIDE SECRET');
    } finally {
      await runtime.dispose();
    }
  });
});
