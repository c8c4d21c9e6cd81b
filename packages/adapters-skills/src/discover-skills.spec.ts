import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { discoverSkills } from './discover-skills';
import { FRONTMATTER_CHUNK_BYTES } from './frontmatter-reader';
import { SkillError } from './skill-error';
import { countingFileSystem, makeTempDir, removeTempDir, sharedFixture, skillMarkdown, writeSkill } from './skills.test-helper';

const realSkills = sharedFixture('agent-skills');
const invalidSkills = sharedFixture('agent-skills-invalid');

describe('discoverSkills on the real skills of anthropics/skills', () => {
  it('loads all ten, with their frontmatter, and warns only about the over-long claude-api description', async () => {
    const { skills, diagnostics, skipped } = await discoverSkills({ roots: [realSkills] });
    expect(skills.map((skill) => skill.toolName)).toEqual([
      'skill.algorithmic-art',
      'skill.brand-guidelines',
      'skill.claude-api',
      'skill.frontend-design',
      'skill.internal-comms',
      'skill.mcp-builder',
      'skill.skill-creator',
      'skill.slack-gif-creator',
      'skill.theme-factory',
      'skill.webapp-testing',
    ]);
    expect(skipped).toEqual([]);
    expect(diagnostics).toEqual([
      {
        severity: 'warning',
        code: 'SKILL_DESCRIPTION_TOO_LONG',
        path: join(realSkills, 'claude-api'),
        skillName: 'claude-api',
        field: 'description',
        message: expect.stringContaining('(1068 chars)'),
      },
    ]);
    const claude = skills.find((skill) => skill.name === 'claude-api')!;
    expect([...claude.description]).toHaveLength(1068);
    expect(claude.license).toBe('Complete terms in LICENSE.txt');
    expect(claude.path).toBe(join(realSkills, 'claude-api'));
    expect(claude.scripts).toEqual([]);
    const creator = skills.find((skill) => skill.name === 'skill-creator')!;
    expect(creator.license).toBeUndefined();
    expect(creator.metadata).toEqual({});
  });

  it('skips claude-api in strict mode, with the same diagnostic as an error', async () => {
    const { skills, diagnostics, skipped } = await discoverSkills({ roots: [realSkills], strict: true });
    expect(skills).toHaveLength(9);
    expect(skills.map((skill) => skill.name)).not.toContain('claude-api');
    expect(diagnostics).toEqual([expect.objectContaining({ severity: 'error', code: 'SKILL_DESCRIPTION_TOO_LONG' })]);
    expect(skipped).toEqual([{ toolName: 'skill.claude-api', path: join(realSkills, 'claude-api'), diagnostic: diagnostics[0] }]);
  });

  it('resolves relative roots against cwd, and defaults to .agents/skills', async () => {
    const relative = await discoverSkills({ cwd: join(realSkills, '..'), roots: ['agent-skills'] });
    expect(relative.skills).toHaveLength(10);
    const defaults = await discoverSkills({ cwd: realSkills });
    expect(defaults.skills).toEqual([]);
    expect(defaults.diagnostics).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'SKILL_ROOT_NOT_FOUND', path: join(realSkills, '.agents', 'skills') }),
    ]);
  });
});

describe('discoverSkills on the broken skills (what each README.txt expects)', () => {
  const folder = (name: string): string => join(invalidSkills, name);

  it('Bad_Name: a lenient loader warns (must be lowercase, contains invalid characters) and loads it', async () => {
    const { skills, diagnostics } = await discoverSkills({ roots: [invalidSkills] });
    expect(skills.map((skill) => skill.toolName)).toContain('skill.Bad_Name');
    const warnings = diagnostics.filter((diagnostic) => diagnostic.path === folder('Bad_Name'));
    expect(warnings).toEqual([expect.objectContaining({ severity: 'warning', code: 'SKILL_NAME_INVALID', skillName: 'Bad_Name', field: 'name' })]);
    expect(warnings[0].message).toContain("Skill name 'Bad_Name' must be lowercase");
    expect(warnings[0].message).toContain("Skill name 'Bad_Name' contains invalid characters");
  });

  it('missing-description: skipped with "Missing required field in frontmatter: description", even when lenient', async () => {
    const { skills, diagnostics, skipped } = await discoverSkills({ roots: [invalidSkills] });
    expect(skills.map((skill) => skill.name)).not.toContain('missing-description');
    const errors = diagnostics.filter((diagnostic) => diagnostic.path === folder('missing-description'));
    expect(errors).toEqual([
      expect.objectContaining({
        severity: 'error',
        code: 'SKILL_DESCRIPTION_MISSING',
        field: 'description',
        message: expect.stringContaining('Missing required field in frontmatter: description'),
      }),
    ]);
    expect(skipped).toContainEqual({ toolName: 'skill.missing-description', path: folder('missing-description'), diagnostic: errors[0] });
  });

  it("name-mismatch: warns \"Directory name 'name-mismatch' must match skill name 'pdf-tools'\" and loads it as skill.pdf-tools", async () => {
    const { skills, diagnostics } = await discoverSkills({ roots: [invalidSkills] });
    const skill = skills.find((candidate) => candidate.path === folder('name-mismatch'))!;
    expect(skill.toolName).toBe('skill.pdf-tools');
    expect(diagnostics.filter((diagnostic) => diagnostic.path === folder('name-mismatch'))).toEqual([
      expect.objectContaining({
        severity: 'warning',
        code: 'SKILL_NAME_MISMATCH',
        skillName: 'pdf-tools',
        message: expect.stringContaining("Directory name 'name-mismatch' must match skill name 'pdf-tools'"),
      }),
    ]);
  });

  it('no-frontmatter: a parse error "SKILL.md must start with YAML frontmatter (---)"; never listed', async () => {
    const { skills, diagnostics, skipped } = await discoverSkills({ roots: [invalidSkills] });
    expect(skills.map((skill) => skill.path)).not.toContain(folder('no-frontmatter'));
    const errors = diagnostics.filter((diagnostic) => diagnostic.path === folder('no-frontmatter'));
    expect(errors).toEqual([
      expect.objectContaining({
        severity: 'error',
        code: 'SKILL_NO_FRONTMATTER',
        message: expect.stringContaining('SKILL.md must start with YAML frontmatter (---)'),
      }),
    ]);
    expect(skipped.map((entry) => entry.toolName)).toContain('skill.no-frontmatter');
  });

  it('path-traversal: discovery succeeds without any diagnostic', async () => {
    const { skills, diagnostics } = await discoverSkills({ roots: [invalidSkills] });
    expect(skills.map((skill) => skill.toolName)).toContain('skill.path-traversal');
    expect(diagnostics.filter((diagnostic) => diagnostic.path === folder('path-traversal'))).toEqual([]);
  });

  it('lenient: exactly three load and two are skipped; strict: only path-traversal loads', async () => {
    const lenient = await discoverSkills({ roots: [invalidSkills] });
    expect(lenient.skills.map((skill) => skill.toolName)).toEqual(['skill.Bad_Name', 'skill.pdf-tools', 'skill.path-traversal']);
    expect(lenient.skipped.map((entry) => entry.toolName)).toEqual(['skill.missing-description', 'skill.no-frontmatter']);
    const strict = await discoverSkills({ roots: [invalidSkills], strict: true });
    expect(strict.skills.map((skill) => skill.toolName)).toEqual(['skill.path-traversal']);
    expect(strict.skipped.map((entry) => [entry.toolName, entry.diagnostic.code])).toEqual([
      ['skill.Bad_Name', 'SKILL_NAME_INVALID'],
      ['skill.missing-description', 'SKILL_DESCRIPTION_MISSING'],
      ['skill.pdf-tools', 'SKILL_NAME_MISMATCH'],
      ['skill.no-frontmatter', 'SKILL_NO_FRONTMATTER'],
    ]);
    expect(strict.diagnostics.every((diagnostic) => diagnostic.severity === 'error')).toBe(true);
  });
});

describe('discoverSkills reads only the frontmatter', () => {
  let temp: string | undefined;
  afterEach(async () => {
    await removeTempDir(temp);
    temp = undefined;
  });

  it('reads no body bytes beyond the chunk holding the closing delimiter, for any body size', async () => {
    temp = await makeTempDir();
    const frontmatter = '---\nname: huge\ndescription: A skill whose body is large.\n---\n';
    await writeSkill(temp, 'huge', frontmatter + 'body line\n'.repeat(200_000));
    const fileSystem = countingFileSystem();
    const { skills } = await discoverSkills({ roots: [temp], fileSystem });
    expect(skills.map((skill) => skill.name)).toEqual(['huge']);
    const read = fileSystem.bytesRead.get(join(temp, 'huge', 'SKILL.md'))!;
    expect(read).toBeGreaterThanOrEqual(frontmatter.length);
    expect(read).toBeLessThan(frontmatter.length + FRONTMATTER_CHUNK_BYTES);
  });

  it('loads a skill whose body is garbage that would break any YAML or UTF-8 parser', async () => {
    temp = await makeTempDir();
    const garbage = Buffer.concat([Buffer.from('\n---\n: : [ {{ !!binary\n---\n'), Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28]), Buffer.alloc(100_000, 0xff)]);
    await writeSkill(temp, 'garbage', Buffer.concat([Buffer.from('---\nname: garbage\ndescription: Body is not text.\n---'), garbage]));
    const { skills, diagnostics } = await discoverSkills({ roots: [temp] });
    expect(diagnostics).toEqual([]);
    expect(skills).toEqual([expect.objectContaining({ name: 'garbage', description: 'Body is not text.' })]);
  });

  it('skips a frontmatter longer than maxFrontmatterBytes without reading further', async () => {
    temp = await makeTempDir();
    await writeSkill(temp, 'long', `---\nname: long\ndescription: ${'x'.repeat(5000)}\n---\nbody`);
    const fileSystem = countingFileSystem();
    const { skills, diagnostics } = await discoverSkills({ roots: [temp], maxFrontmatterBytes: 1024, fileSystem });
    expect(skills).toEqual([]);
    expect(diagnostics).toEqual([expect.objectContaining({ severity: 'error', code: 'SKILL_FRONTMATTER_TOO_LARGE', path: join(temp, 'long') })]);
    expect(fileSystem.totalBytesRead()).toBe(1024);
  });
});

describe('discoverSkills scanning and validation', () => {
  let temp: string;
  beforeEach(async () => {
    temp = await makeTempDir();
  });
  afterEach(() => removeTempDir(temp));

  it('finds skills in nested groups up to maxDepth, never inside .git or node_modules, and not below a skill', async () => {
    const skill = (name: string): string => skillMarkdown({ name, description: `The ${name} skill.` });
    await writeSkill(temp, 'top', skill('top'));
    await writeSkill(join(temp, 'group'), 'nested', skill('nested'));
    await writeSkill(join(temp, 'a', 'b'), 'deep', skill('deep'));
    await writeSkill(join(temp, '.git'), 'hidden', skill('hidden'));
    await writeSkill(join(temp, 'node_modules'), 'dependency', skill('dependency'));
    await writeSkill(join(temp, 'top'), 'inner', skill('inner'));
    const names = async (maxDepth?: number): Promise<string[]> =>
      (await discoverSkills({ roots: [temp], ...(maxDepth === undefined ? {} : { maxDepth }) })).skills.map((found) => found.name);
    expect(await names()).toEqual(['deep', 'nested', 'top']);
    expect(await names(1)).toEqual(['top']);
    expect(await names(2)).toEqual(['nested', 'top']);
    expect((await discoverSkills({ roots: [temp], skipDirectories: [] })).skills.map((found) => found.name)).toEqual([
      'hidden',
      'deep',
      'nested',
      'dependency',
      'top',
    ]);
  });

  it('treats a root that holds SKILL.md as a skill, and follows symlinked skill folders', async () => {
    const single = await writeSkill(temp, 'single', skillMarkdown({ name: 'single', description: 'One skill.' }));
    const linked = join(temp, 'linked-root');
    await fs.mkdir(linked);
    await fs.symlink(single, join(linked, 'single'));
    expect((await discoverSkills({ roots: [single] })).skills.map((skill) => skill.path)).toEqual([single]);
    expect((await discoverSkills({ roots: [linked] })).skills.map((skill) => skill.path)).toEqual([join(linked, 'single')]);
  });

  it('keeps the first of two skills with one name (roots in order) and reports the other', async () => {
    const first = join(temp, 'first');
    const second = join(temp, 'second');
    await writeSkill(first, 'tool', skillMarkdown({ name: 'tool', description: 'First.' }));
    await writeSkill(second, 'tool', skillMarkdown({ name: 'tool', description: 'Second.' }));
    const { skills, diagnostics, skipped } = await discoverSkills({ roots: [second, first] });
    expect(skills.map((skill) => skill.description)).toEqual(['Second.']);
    expect(diagnostics).toEqual([expect.objectContaining({ severity: 'error', code: 'SKILL_DUPLICATE_NAME', path: join(first, 'tool') })]);
    expect(skipped.map((entry) => entry.path)).toEqual([join(first, 'tool')]);
  });

  it('keeps unknown fields as metadata with a warning, and converts non-string metadata values', async () => {
    await writeSkill(
      temp,
      'extra',
      '---\nname: extra\ndescription: Extra fields.\nversion: 1.2\ntags: [a, b]\nmetadata:\n  author: me\n  revision: 3\nallowed-tools: Bash(git:*) Read\ncompatibility: Needs git\nlicense: MIT\n---\nBody\n',
    );
    const { skills, diagnostics } = await discoverSkills({ roots: [temp] });
    expect(skills).toEqual([
      expect.objectContaining({
        name: 'extra',
        license: 'MIT',
        compatibility: 'Needs git',
        allowedTools: ['Bash(git:*)', 'Read'],
        metadata: { author: 'me', revision: '3', version: '1.2', tags: '["a","b"]' },
      }),
    ]);
    expect(diagnostics.map((diagnostic) => [diagnostic.severity, diagnostic.code, diagnostic.field])).toEqual([
      ['warning', 'SKILL_FIELD_INVALID', 'metadata'],
      ['warning', 'SKILL_UNKNOWN_FIELD', 'version'],
      ['warning', 'SKILL_UNKNOWN_FIELD', 'tags'],
    ]);
  });

  it('reports invalid YAML, an unterminated frontmatter, a non-mapping and an over-long compatibility', async () => {
    await writeSkill(temp, 'bad-yaml', '---\nname: bad-yaml\ndescription: Use when: it breaks\n---\n');
    await writeSkill(temp, 'open', '---\nname: open\ndescription: Never closed.\n');
    await writeSkill(temp, 'list', '---\n- name\n- description\n---\n');
    await writeSkill(temp, 'compat', skillMarkdown({ name: 'compat', description: 'Long compatibility.', compatibility: 'c'.repeat(501) }));
    const { skills, diagnostics } = await discoverSkills({ roots: [temp] });
    expect(skills.map((skill) => skill.name)).toEqual(['compat']);
    expect(diagnostics.map((diagnostic) => [diagnostic.path.slice(temp.length + 1), diagnostic.severity, diagnostic.code])).toEqual([
      ['bad-yaml', 'error', 'SKILL_YAML_INVALID'],
      ['compat', 'warning', 'SKILL_COMPATIBILITY_TOO_LONG'],
      ['list', 'error', 'SKILL_YAML_INVALID'],
      ['open', 'error', 'SKILL_FRONTMATTER_UNTERMINATED'],
    ]);
  });

  it('uses the folder name when name is missing (a warning), and skips a name that cannot be a tool name', async () => {
    await writeSkill(temp, 'nameless', '---\ndescription: No name.\n---\n');
    await writeSkill(temp, 'spaced', skillMarkdown({ name: 'has spaces', description: 'Bad name.' }));
    const { skills, diagnostics } = await discoverSkills({ roots: [temp] });
    expect(skills.map((skill) => skill.toolName)).toEqual(['skill.nameless']);
    expect(diagnostics.map((diagnostic) => [diagnostic.skillName, diagnostic.severity, diagnostic.code])).toEqual([
      ['nameless', 'warning', 'SKILL_NAME_MISSING'],
      ['has spaces', 'warning', 'SKILL_NAME_INVALID'],
      ['has spaces', 'warning', 'SKILL_NAME_MISMATCH'],
      ['has spaces', 'error', 'SKILL_NAME_INVALID'],
    ]);
  });

  it('stops when the signal aborts', async () => {
    await writeSkill(temp, 'one', skillMarkdown({ name: 'one', description: 'One.' }));
    const controller = new AbortController();
    controller.abort(new Error('discovery cancelled'));
    await expect(discoverSkills({ roots: [temp] }, controller.signal)).rejects.toThrow('discovery cancelled');
  });

  it('refuses malformed settings with SKILL_INVALID_SETTINGS', async () => {
    const attempts: unknown[] = [
      { cwd: 'relative' },
      { roots: 'skills' },
      { maxDepth: -1 },
      { maxFrontmatterBytes: 1.5 },
      { allowScripts: 'yes' },
      { fileSystem: {} },
      { strict: 'true' },
    ];
    for (const settings of attempts) {
      const error = await discoverSkills(settings as never).catch((caught: unknown) => caught);
      expect(SkillError.isInstance(error) && error.code).toBe('SKILL_INVALID_SETTINGS');
    }
  });
});
