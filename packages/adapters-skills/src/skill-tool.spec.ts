import { createExecutionContext, type PlanContext } from '@ca/tool-context';
import { type ToolFailure, type ToolInstance, type ToolSuccess } from '@ca/tool-lifecycle';
import { promises as fs, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SkillError } from './skill-error';
import type { SkillFileOutput, SkillInstructionsOutput, SkillToolInput, SkillToolOutput } from './skill-tool';
import { createSkillsAdapter } from './skills-tool-source';
import type { SkillsAdapterSettings } from './skills-adapter-settings';
import { copyTree, countingFileSystem, makeTempDir, removeTempDir, sharedFixture, skillMarkdown, writeSkill } from './skills.test-helper';

const realSkills = sharedFixture('agent-skills');
const invalidSkills = sharedFixture('agent-skills-invalid');

type SkillInstance = ToolInstance<SkillToolInput, SkillToolOutput>;

async function skillTool(settings: SkillsAdapterSettings, name: string): Promise<SkillInstance> {
  const source = createSkillsAdapter(settings);
  await source.discover();
  return (await source.get(name)) as SkillInstance;
}

function plan(planId = 'plan-1'): PlanContext {
  return createExecutionContext({ planId });
}

function succeeded<T extends SkillToolOutput>(result: unknown): T {
  expect(result).toMatchObject({ ok: true });
  return (result as ToolSuccess<T>).output;
}

function failedWith(result: unknown, code: string): SkillError {
  expect(result).toMatchObject({ ok: false });
  const error = (result as ToolFailure).error;
  expect(SkillError.isInstance(error)).toBe(true);
  expect(error.code).toBe(code);
  return error as SkillError;
}

describe('skill.<name> on real skills', () => {
  it('activation loads the body once per plan and execute returns it without frontmatter, with the bundled files', async () => {
    const fileSystem = countingFileSystem();
    const tool = await skillTool({ roots: [realSkills], fileSystem }, 'skill.mcp-builder');
    const skillFile = join(realSkills, 'mcp-builder', 'SKILL.md');
    expect(fileSystem.opened.filter((path) => path === skillFile)).toHaveLength(1); // discovery
    const ctx = plan();
    await tool.activate!(ctx);
    await tool.activate!(ctx);
    expect(fileSystem.opened.filter((path) => path === skillFile)).toHaveLength(2);
    const first = succeeded<SkillInstructionsOutput>(await tool.execute({}, ctx));
    const second = succeeded<SkillInstructionsOutput>(await tool.execute({}, ctx));
    expect(fileSystem.opened.filter((path) => path === skillFile)).toHaveLength(2);
    expect(second).toEqual(first);
    const raw = readFileSync(skillFile, 'utf8');
    expect(first.instructions.startsWith('---')).toBe(false);
    expect(raw.endsWith(first.instructions)).toBe(true);
    expect(first.instructions).toMatch(/^# /);
    expect(first.files).toEqual([
      'LICENSE.txt',
      'reference/evaluation.md',
      'reference/mcp_best_practices.md',
      'reference/node_mcp_server.md',
      'reference/python_mcp_server.md',
    ]);
    expect(first.filesTruncated).toBe(false);
    expect(tool.descriptor).toMatchObject({
      name: 'skill.mcp-builder',
      source: 'skill',
      capability: { writes: false, checkpointable: true, destructive: false, openWorld: false, idempotent: true },
    });

    await tool.activate!(plan('plan-2'));
    expect(fileSystem.opened.filter((path) => path === skillFile)).toHaveLength(3);
  });

  it('deactivate releases the body; execute in a plan without activation throws ToolNotActivatedError', async () => {
    const tool = await skillTool({ roots: [realSkills] }, 'skill.brand-guidelines');
    const ctx = plan();
    await expect(tool.execute({}, ctx)).rejects.toMatchObject({ code: 'TOOL_NOT_ACTIVATED', name: 'ToolNotActivatedError' });
    await tool.activate!(ctx);
    expect(succeeded<SkillInstructionsOutput>(await tool.execute({}, ctx)).name).toBe('brand-guidelines');
    await tool.deactivate!(ctx);
    await expect(tool.execute({}, ctx)).rejects.toThrow(/not active in plan 'plan-1'/);
  });

  it('returns a requested reference file as text, and bounds the listing', async () => {
    const tool = await skillTool({ roots: [realSkills], maxListedFiles: 3 }, 'skill.claude-api');
    const ctx = plan();
    await tool.activate!(ctx);
    const listing = succeeded<SkillInstructionsOutput>(await tool.execute({}, ctx));
    expect(listing.files).toHaveLength(3);
    expect(listing.filesTruncated).toBe(true);
    const file = succeeded<SkillFileOutput>(await tool.execute({ file: 'shared/models.md' }, ctx));
    const expected = readFileSync(join(realSkills, 'claude-api', 'shared', 'models.md'), 'utf8');
    expect(file).toEqual({
      kind: 'file',
      name: 'claude-api',
      file: 'shared/models.md',
      encoding: 'utf-8',
      content: expected,
      size: Buffer.byteLength(expected),
    });
    const normalised = succeeded<SkillFileOutput>(await tool.execute({ file: './shared/../shared/models.md' }, ctx));
    expect(normalised.file).toBe('shared/models.md');
  });

  it('fails (does not throw) for a template path that does not exist, and for a folder', async () => {
    const tool = await skillTool({ roots: [realSkills] }, 'skill.claude-api');
    const ctx = plan();
    await tool.activate!(ctx);
    const missing = failedWith(await tool.execute({ file: '{lang}/managed-agents/README.md' }, ctx), 'SKILL_FILE_NOT_FOUND');
    expect(missing.message).toContain("Tool 'skill.claude-api' in plan 'plan-1'");
    expect(missing.requestedPath).toBe('{lang}/managed-agents/README.md');
    failedWith(await tool.execute({ file: 'shared' }, ctx), 'SKILL_FILE_NOT_FOUND');
  });
});

describe('paths outside the skill folder are refused', () => {
  it('path-traversal fixture: ../../etc/passwd and ../no-frontmatter/SKILL.md are refused and nothing is read', async () => {
    const fileSystem = countingFileSystem();
    const tool = await skillTool({ roots: [invalidSkills], fileSystem }, 'skill.path-traversal');
    const ctx = plan();
    await tool.activate!(ctx);
    const instructions = succeeded<SkillInstructionsOutput>(await tool.execute({}, ctx));
    expect(instructions.instructions).toContain('../../etc/passwd');
    expect(instructions.files).toEqual(['README.txt']);
    const before = { opened: fileSystem.opened.length, realpaths: fileSystem.realpaths.length };
    for (const file of ['../../etc/passwd', '../no-frontmatter/SKILL.md', 'scripts/../../../etc/passwd', '/etc/passwd', '..', 'C:\\Windows\\win.ini']) {
      const result = await tool.execute({ file }, ctx);
      const error = failedWith(result, 'SKILL_PATH_OUTSIDE_ROOT');
      expect(error.message).toContain('outside the skill folder');
      expect(JSON.stringify(result)).not.toContain('No Frontmatter');
    }
    expect(fileSystem.opened).toHaveLength(before.opened);
    expect(fileSystem.realpaths).toHaveLength(before.realpaths);
    failedWith(await tool.execute({ file: 'a\u0000b' }, ctx), 'SKILL_PATH_INVALID');
  });

  describe('with real symlinks in a temp copy', () => {
    let temp: string;
    let root: string;
    beforeAll(async () => {
      temp = await makeTempDir();
      root = join(temp, 'skills');
      await copyTree(invalidSkills, root);
      const skill = join(root, 'path-traversal');
      await fs.writeFile(join(temp, 'secret.txt'), 'TOP SECRET');
      await fs.symlink('../no-frontmatter/SKILL.md', join(skill, 'notes.md'));
      await fs.symlink(join(temp, 'secret.txt'), join(skill, 'secret.txt'));
      await fs.symlink('../no-frontmatter', join(skill, 'sibling'));
      await fs.mkdir(join(skill, 'references'));
      await fs.writeFile(join(skill, 'references', 'guide.md'), 'Guide');
      await fs.symlink('references/guide.md', join(skill, 'guide-link.md'));
    });
    afterAll(() => removeTempDir(temp));

    it('refuses links that point out of the skill, reads links that stay inside, and lists only the latter', async () => {
      const tool = await skillTool({ roots: [root] }, 'skill.path-traversal');
      const ctx = plan();
      await tool.activate!(ctx);
      const listing = succeeded<SkillInstructionsOutput>(await tool.execute({}, ctx));
      expect(listing.files).toEqual(['README.txt', 'guide-link.md', 'references/guide.md']);
      for (const file of ['notes.md', 'secret.txt', 'sibling/SKILL.md']) {
        const result = await tool.execute({ file }, ctx);
        expect(failedWith(result, 'SKILL_PATH_OUTSIDE_ROOT').message).toContain('link that points out');
        expect(JSON.stringify(result)).not.toMatch(/TOP SECRET|No Frontmatter/);
      }
      expect(succeeded<SkillFileOutput>(await tool.execute({ file: 'guide-link.md' }, ctx))).toMatchObject({
        file: 'references/guide.md',
        content: 'Guide',
      });
    });

    it('serves a skill folder that is itself a link, confined to the folder it points to', async () => {
      const linkedRoot = join(temp, 'linked');
      await fs.mkdir(linkedRoot);
      await fs.symlink(join(root, 'path-traversal'), join(linkedRoot, 'path-traversal'));
      const tool = await skillTool({ roots: [linkedRoot] }, 'skill.path-traversal');
      const ctx = plan();
      await tool.activate!(ctx);
      expect(succeeded<SkillFileOutput>(await tool.execute({ file: 'references/guide.md' }, ctx)).content).toBe('Guide');
      failedWith(await tool.execute({ file: '../no-frontmatter/SKILL.md' }, ctx), 'SKILL_PATH_OUTSIDE_ROOT');
    });
  });
});

describe('bundled files: binary and size caps', () => {
  let temp: string;
  beforeEach(async () => {
    temp = await makeTempDir();
  });
  afterEach(() => removeTempDir(temp));

  it('returns binary files as base64 and refuses files over maxFileBytes', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0xff]);
    await writeSkill(temp, 'assets-skill', skillMarkdown({ name: 'assets-skill', description: 'Has assets.' }), {
      'assets/logo.png': png,
      'assets/big.txt': 'x'.repeat(2048),
      'assets/latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9]),
    });
    const tool = await skillTool({ roots: [temp], maxFileBytes: 1024 }, 'skill.assets-skill');
    const ctx = plan();
    await tool.activate!(ctx);
    expect(succeeded<SkillFileOutput>(await tool.execute({ file: 'assets/logo.png' }, ctx))).toEqual({
      kind: 'file',
      name: 'assets-skill',
      file: 'assets/logo.png',
      encoding: 'base64',
      content: png.toString('base64'),
      size: png.length,
    });
    expect(succeeded<SkillFileOutput>(await tool.execute({ file: 'assets/latin1.txt' }, ctx)).encoding).toBe('base64');
    const tooLarge = failedWith(await tool.execute({ file: 'assets/big.txt' }, ctx), 'SKILL_FILE_TOO_LARGE');
    expect(tooLarge.message).toContain('2048 bytes, over the limit of 1024');
  });

  it('fails activation when SKILL.md is over maxSkillFileBytes, and keeps nothing for the plan', async () => {
    await writeSkill(temp, 'long-body', skillMarkdown({ name: 'long-body', description: 'Long.' }, 'y'.repeat(5000)));
    const tool = await skillTool({ roots: [temp], maxSkillFileBytes: 1000 }, 'skill.long-body');
    const ctx = plan();
    const error = await tool.activate!(ctx).catch((caught: unknown) => caught);
    expect(SkillError.isInstance(error) && error.code).toBe('SKILL_FILE_TOO_LARGE');
    await expect(tool.execute({}, ctx)).rejects.toMatchObject({ code: 'TOOL_NOT_ACTIVATED' });
  });

  it('fails activation with SKILL_FILE_READ_FAILED when the skill folder was removed after discovery', async () => {
    const folder = await writeSkill(temp, 'gone', skillMarkdown({ name: 'gone', description: 'Removed later.' }));
    const tool = await skillTool({ roots: [temp] }, 'skill.gone');
    await fs.rm(folder, { recursive: true });
    const error = await tool.activate!(plan()).catch((caught: unknown) => caught);
    expect(SkillError.isInstance(error) && error.code).toBe('SKILL_FILE_READ_FAILED');
    expect((error as Error).message).toContain("plan 'plan-1'");
  });
});
