// A SKILL.md that cannot be opened or read is a SKILL_READ_FAILED diagnostic,
// on real files: a symbolic link loop (open fails) and a folder named SKILL.md
// (open succeeds, read fails). Either is what a downloaded skills folder can
// hold. The skill is skipped, the others are served.
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { discoverSkills } from './discover-skills';
import { createSkillsAdapter } from './skills-tool-source';
import { makeTempDir, removeTempDir, skillMarkdown, writeSkill } from './skills.test-helper';

describe('SKILL_READ_FAILED on real files', () => {
  let root: string;

  beforeEach(async () => {
    root = await fs.realpath(await makeTempDir());
    await writeSkill(root, 'healthy', skillMarkdown({ name: 'healthy', description: 'A skill that can be read.' }));
    await fs.mkdir(join(root, 'looping'));
    await fs.symlink('SKILL.md', join(root, 'looping', 'SKILL.md'));
    await fs.mkdir(join(root, 'folder-named-skill', 'SKILL.md'), { recursive: true });
  });

  afterEach(() => removeTempDir(root));

  it('reports a SKILL.md that cannot be opened, and one that cannot be read, and skips both', async () => {
    const { skills, diagnostics, skipped } = await discoverSkills({ roots: [root] });
    expect(skills.map((skill) => skill.name)).toEqual(['healthy']);
    expect(diagnostics).toEqual([
      {
        severity: 'error',
        code: 'SKILL_READ_FAILED',
        path: join(root, 'folder-named-skill'),
        skillName: 'folder-named-skill',
        message: expect.stringMatching(/^SKILL\.md in '.*folder-named-skill' could not be read \(.*EISDIR.*\)\. Check the file\.$/),
      },
      {
        severity: 'error',
        code: 'SKILL_READ_FAILED',
        path: join(root, 'looping'),
        skillName: 'looping',
        message: expect.stringMatching(/^SKILL\.md in '.*looping' could not be opened \(.*ELOOP.*\)\. Check its permissions\.$/),
      },
    ]);
    expect(skipped.map((entry) => [entry.toolName, entry.diagnostic.code])).toEqual([
      ['skill.folder-named-skill', 'SKILL_READ_FAILED'],
      ['skill.looping', 'SKILL_READ_FAILED'],
    ]);
  });

  it('serves the readable skills through the runtime, and keeps the diagnostics on the source', async () => {
    const source = createSkillsAdapter({ roots: [root] });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    const { tools, sourceErrors } = await runtime.discover();
    expect(tools.map((tool) => tool.name)).toEqual(['skill.healthy']);
    expect(sourceErrors).toEqual([]);
    expect(source.diagnostics().map((diagnostic) => [diagnostic.skillName, diagnostic.code])).toEqual([
      ['folder-named-skill', 'SKILL_READ_FAILED'],
      ['looping', 'SKILL_READ_FAILED'],
    ]);
    const result = await runtime.runPlan({ policy: { readOnly: true } }, (ctx) => runtime.execute('skill.healthy', {}, ctx));
    expect(result).toMatchObject({ ok: true, output: { kind: 'instructions', name: 'healthy' } });
  });
});
