import 'reflect-metadata';
import { TOOL_RUNTIME, ToolNotFoundError, ToolRuntime, registerToolRuntime, type ToolFailure } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { existsSync, promises as fs } from 'node:fs';
import { join } from 'node:path';
import { container } from 'tsyringe';
import { registerSkillsAdapter } from './register-skills-adapter';
import { SkillError } from './skill-error';
import type { SkillInstructionsOutput } from './skill-tool';
import { createSkillsAdapter, SkillsToolSource } from './skills-tool-source';
import { copyTree, makeTempDir, removeTempDir, sharedFixture, skillMarkdown, writeSkill } from './skills.test-helper';

const realSkills = sharedFixture('agent-skills');
const invalidSkills = sharedFixture('agent-skills-invalid');

// Child processes start slowly on a loaded machine; this is a hang guard, not a speed requirement.
jest.setTimeout(30_000);

describe('SkillsToolSource in a ToolRuntime', () => {
  let temp: string;
  let runtime: ToolRuntime;
  let source: SkillsToolSource;
  let logger: RecordingLogger;

  beforeAll(async () => {
    temp = await makeTempDir();
    await copyTree(invalidSkills, join(temp, 'invalid'));
    await writeSkill(join(temp, 'own'), 'writer', skillMarkdown({ name: 'writer', description: 'Writes a marker file.' }), {
      'scripts/mark.sh': 'echo marked > "$1"\n',
    });
  });
  afterAll(() => removeTempDir(temp));
  beforeEach(() => {
    logger = new RecordingLogger();
    // Without the sandbox: the script writes outside any resource. skill-script-tool.spec.ts has it sandboxed.
    source = createSkillsAdapter({ roots: [realSkills, join(temp, 'invalid'), join(temp, 'own')], allowScripts: ['writer'], sandbox: 'off' });
    runtime = new ToolRuntime({ sources: [source], logger });
  });
  afterEach(() => runtime.dispose());

  it('lists the skills, reports the skipped ones as unavailable, and gives diagnostics to the caller', async () => {
    const { tools, unavailable, sourceErrors } = await runtime.discover();
    expect(sourceErrors).toEqual([]);
    expect(tools.map((tool) => tool.name)).toEqual([
      'skill.Bad_Name',
      'skill.algorithmic-art',
      'skill.brand-guidelines',
      'skill.claude-api',
      'skill.frontend-design',
      'skill.internal-comms',
      'skill.mcp-builder',
      'skill.path-traversal',
      'skill.pdf-tools',
      'skill.skill-creator',
      'skill.slack-gif-creator',
      'skill.theme-factory',
      'skill.webapp-testing',
      'skill.writer',
      'skill.writer.script.mark',
    ]);
    expect(unavailable.map((tool) => [tool.name, tool.source, tool.error?.code, (tool.error as SkillError).diagnosticCode])).toEqual([
      ['skill.missing-description', 'skill', 'SKILL_INVALID', 'SKILL_DESCRIPTION_MISSING'],
      ['skill.no-frontmatter', 'skill', 'SKILL_INVALID', 'SKILL_NO_FRONTMATTER'],
    ]);
    expect(unavailable[0].reason).toContain('Missing required field in frontmatter: description');
    expect(source.diagnostics().map((diagnostic) => diagnostic.code)).toEqual([
      'SKILL_DESCRIPTION_TOO_LONG',
      'SKILL_NAME_INVALID',
      'SKILL_DESCRIPTION_MISSING',
      'SKILL_NAME_MISMATCH',
      'SKILL_NO_FRONTMATTER',
    ]);
    expect(source.skills()).toHaveLength(14);
    await expect(runtime.execute('skill.no-frontmatter', {}, runtime.createPlan())).rejects.toMatchObject({
      code: 'TOOL_REGISTRATION_FAILED',
      message: expect.stringContaining('SKILL.md must start with YAML frontmatter'),
    });
  });

  it('runs a skill in a read-only plan that requires checkpoints, traces it, and releases the body when the plan ends', async () => {
    const ctx = runtime.createPlan({ planId: 'strict-plan', policy: { readOnly: true, requireCheckpoint: true } });
    const result = await runtime.execute<SkillInstructionsOutput>('skill.theme-factory', {}, ctx);
    expect(result.ok).toBe(true);
    expect(result.ok && result.output.files).toContain('themes/ocean-depths.md');
    const file = await runtime.execute('skill.theme-factory', { file: 'themes/ocean-depths.md' }, ctx);
    expect(file).toMatchObject({ ok: true, output: { kind: 'file', encoding: 'utf-8' } });
    expect(ctx.traces.map((trace) => [trace.toolName, trace.success])).toEqual([
      ['skill.theme-factory', true],
      ['skill.theme-factory', true],
    ]);
    expect(ctx.changes).toEqual([]);
    const instance = (await source.get('skill.theme-factory')) as unknown as { activePlans: number };
    expect(instance.activePlans).toBe(1);
    const report = await runtime.endPlan(ctx);
    expect(report.deactivated).toEqual(['skill.theme-factory']);
    expect(instance.activePlans).toBe(0);
  });

  it('returns path and input problems as failed results with coded errors and traces', async () => {
    const ctx = runtime.createPlan({ planId: 'paths' });
    const outside = await runtime.execute('skill.path-traversal', { file: '../no-frontmatter/SKILL.md' }, ctx);
    expect(outside.ok).toBe(false);
    expect((outside as ToolFailure).error).toMatchObject({ code: 'SKILL_PATH_OUTSIDE_ROOT', toolName: 'skill.path-traversal', planId: 'paths' });
    expect(outside.trace.error).toMatchObject({ code: 'SKILL_PATH_OUTSIDE_ROOT' });
    const invalid = await runtime.execute('skill.path-traversal', { file: 42, extra: true }, ctx);
    expect(invalid.ok).toBe(false);
    expect((invalid as ToolFailure).error).toMatchObject({ name: 'ToolSchemaValidationError' });
    await runtime.endPlan(ctx);
  });

  it('without the sandbox, refuses a script in a read-only plan and in a checkpoint plan before it runs, and runs it otherwise', async () => {
    const marker = join(temp, 'marker.txt');
    const readOnly = runtime.createPlan({ policy: { readOnly: true } });
    await expect(runtime.execute('skill.writer.script.mark', { args: [marker] }, readOnly)).rejects.toMatchObject({ code: 'TOOL_ACCESS_DENIED' });
    const checkpoint = runtime.createPlan({ policy: { requireCheckpoint: true } });
    await expect(runtime.execute('skill.writer.script.mark', { args: [marker] }, checkpoint)).rejects.toMatchObject({
      code: 'TOOL_CHECKPOINT_REQUIRED',
    });
    expect(existsSync(marker)).toBe(false);
    const open = runtime.createPlan();
    const result = await runtime.execute('skill.writer.script.mark', { args: [marker] }, open);
    expect(result).toMatchObject({ ok: true, output: { exitCode: 0 } });
    expect(await fs.readFile(marker, 'utf8')).toBe('marked\n');
    expect(open.traces).toHaveLength(1);
    await Promise.all([readOnly, checkpoint, open].map((plan) => runtime.endPlan(plan)));
  });

  it('keeps an active skill usable in its plan across a rediscovery', async () => {
    const ctx = runtime.createPlan();
    expect((await runtime.execute('skill.brand-guidelines', {}, ctx)).ok).toBe(true);
    await runtime.discover({ refresh: true });
    expect((await runtime.execute('skill.brand-guidelines', {}, ctx)).ok).toBe(true);
    await runtime.endPlan(ctx);
  });
});

describe('SkillsToolSource.get', () => {
  it('discovers on first use; an unknown name is ToolNotFoundError with close names, a skipped skill SKILL_NOT_FOUND', async () => {
    const source = createSkillsAdapter({ roots: [invalidSkills] });
    expect((await source.get('skill.path-traversal')).descriptor.name).toBe('skill.path-traversal');
    const unknown = await Promise.resolve(source.get('skill.path-travesal')).catch((error: unknown) => error);
    expect(ToolNotFoundError.isInstance(unknown)).toBe(true);
    expect(unknown).toMatchObject({ code: 'TOOL_NOT_FOUND', toolName: 'skill.path-travesal', sourceId: source.id, suggestions: ['skill.path-traversal'] });
    const skipped = await Promise.resolve(source.get('skill.missing-description')).catch((error: unknown) => error);
    expect(SkillError.isInstance(skipped)).toBe(true);
    expect(skipped).toMatchObject({ code: 'SKILL_NOT_FOUND', diagnosticCode: 'SKILL_DESCRIPTION_MISSING' });
    expect(source.kind).toBe('skill');
    expect(source.id).toBe(`skills:${invalidSkills}`);
    expect(source.roots).toEqual([invalidSkills]);
  });
});

describe('registerSkillsAdapter', () => {
  let temp: string;
  beforeAll(async () => {
    temp = await makeTempDir();
    await writeSkill(join(temp, '.agents', 'skills'), 'local', skillMarkdown({ name: 'local', description: 'A project skill.' }));
  });
  afterAll(() => removeTempDir(temp));

  it('registers the source under TOOL_SOURCE next to others, for a runtime resolved from a child container', async () => {
    const child = container.createChildContainer();
    const project = registerSkillsAdapter(child, { cwd: temp });
    const shared = registerSkillsAdapter(child, { roots: [realSkills], id: 'skills:shared' });
    registerToolRuntime(child);
    const runtime = child.resolve(TOOL_RUNTIME);
    try {
      const names = (await runtime.listTools()).map((tool) => tool.name);
      expect(names).toContain('skill.local');
      expect(names).toContain('skill.claude-api');
      expect(project.id).toBe(`skills:${join(temp, '.agents', 'skills')}`);
      expect(shared.id).toBe('skills:shared');
      const result = await runtime.runPlan({ policy: { readOnly: true } }, (ctx) => runtime.execute<SkillInstructionsOutput>('skill.local', {}, ctx));
      expect(result.ok && result.output.instructions).toBe('# Instructions\n\nDo the thing.\n');
      expect(container.isRegistered(TOOL_RUNTIME)).toBe(false);
    } finally {
      await runtime.dispose();
      child.dispose();
    }
  });

  it('refuses something that is not a container', () => {
    expect(() => registerSkillsAdapter({} as never)).toThrow(expect.objectContaining({ code: 'SKILL_INVALID_SETTINGS' }));
  });
});
