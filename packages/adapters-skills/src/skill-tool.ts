import { messageOf, normalizeCapability, type JsonSchema } from '@ca/domain';
import type { ToolExecutionContext } from '@ca/tool-context';
import { ToolNotActivatedError, toolFailure, toolSuccess, type ToolDescriptor, type ToolInstance, type ToolResult } from '@ca/tool-lifecycle';
import { join } from 'node:path';
import type { DiscoveredSkill } from './discover-skills';
import { stripFrontmatter } from './frontmatter-reader';
import { SkillError } from './skill-error';
import { encodeContent, listBundledFiles, openRefusal, readBundledFile, readWhole, resolveInsideSkill } from './skill-paths';
import type { ResolvedSkillsSettings } from './skills-adapter-settings';

/** Input of a `skill.<name>` tool: nothing for the instructions, `file` for one bundled file. */
export interface SkillToolInput {
  /** A path relative to the skill folder, e.g. `references/guide.md`. */
  readonly file?: string;
}

/** What `skill.<name>` returns without `file`: the instructions and the list of bundled files. */
export interface SkillInstructionsOutput {
  readonly kind: 'instructions';
  readonly name: string;
  /** The body of `SKILL.md`, frontmatter stripped. */
  readonly instructions: string;
  /** Bundled files, relative to the skill folder, sorted; at most `maxListedFiles`. */
  readonly files: readonly string[];
  /** `true` when there were more files than `maxListedFiles`. */
  readonly filesTruncated: boolean;
  /** The skill's `allowed-tools`, when it declares any. */
  readonly allowedTools: readonly string[];
}

/** What `skill.<name>` returns for `{ file }`. */
export interface SkillFileOutput {
  readonly kind: 'file';
  readonly name: string;
  /** The file's path relative to the skill folder (links resolved). */
  readonly file: string;
  /** `utf-8` for text (valid UTF-8 without NUL bytes), `base64` for anything else. */
  readonly encoding: 'utf-8' | 'base64';
  readonly content: string;
  /** Size in bytes. */
  readonly size: number;
}

/** Output of a `skill.<name>` tool. */
export type SkillToolOutput = SkillInstructionsOutput | SkillFileOutput;

const INPUT_SCHEMA: JsonSchema = Object.freeze({
  type: 'object',
  properties: {
    file: {
      type: 'string',
      minLength: 1,
      description:
        'A file bundled with the skill, relative to its folder (e.g. "references/guide.md"). Leave out to get the instructions and the list of files.',
    },
  },
  additionalProperties: false,
});

const OUTPUT_SCHEMA: JsonSchema = Object.freeze({
  oneOf: [
    {
      type: 'object',
      properties: {
        kind: { const: 'instructions' },
        name: { type: 'string' },
        instructions: { type: 'string' },
        files: { type: 'array', items: { type: 'string' } },
        filesTruncated: { type: 'boolean' },
        allowedTools: { type: 'array', items: { type: 'string' } },
      },
      required: ['kind', 'name', 'instructions', 'files', 'filesTruncated', 'allowedTools'],
    },
    {
      type: 'object',
      properties: {
        kind: { const: 'file' },
        name: { type: 'string' },
        file: { type: 'string' },
        encoding: { enum: ['utf-8', 'base64'] },
        content: { type: 'string' },
        size: { type: 'integer', minimum: 0 },
      },
      required: ['kind', 'name', 'file', 'encoding', 'content', 'size'],
    },
  ],
});

/**
 * A skill reads and changes nothing outside its own folder, so it does not
 * write; and since it makes no changes there is nothing to undo, which makes
 * it trivially checkpointable — a plan that requires checkpoints can still
 * read skills.
 */
const SKILL_CAPABILITY = normalizeCapability({ writes: false, checkpointable: true, idempotent: true, openWorld: false });

interface LoadedSkill {
  readonly realRoot: string;
  readonly instructions: string;
  readonly files: readonly string[];
  readonly filesTruncated: boolean;
}

/**
 * @internal The tool `skill.<name>`: activation loads the body of `SKILL.md`
 * and the list of bundled files once per plan; execution returns them, or
 * one bundled file.
 */
export class SkillTool implements ToolInstance<SkillToolInput, SkillToolOutput> {
  readonly descriptor: ToolDescriptor;
  /** Loaded bodies, by plan id; released by `deactivate`. */
  private readonly plans = new Map<string, Promise<LoadedSkill>>();

  constructor(
    readonly skill: DiscoveredSkill,
    private readonly settings: ResolvedSkillsSettings,
  ) {
    const { name, path, license, compatibility, metadata, allowedTools } = skill;
    this.descriptor = Object.freeze({
      name: skill.toolName,
      description: skill.description,
      source: 'skill',
      capability: SKILL_CAPABILITY,
      inputSchema: INPUT_SCHEMA,
      outputSchema: OUTPUT_SCHEMA,
      ...(metadata['version'] === undefined ? {} : { version: metadata['version'] }),
      annotations: Object.freeze({
        title: name,
        skill: { name, path, ...(license === undefined ? {} : { license }), ...(compatibility === undefined ? {} : { compatibility }), allowedTools, metadata },
      }),
    });
  }

  /** How many plans hold a loaded body (for tests and diagnostics). */
  get activePlans(): number {
    return this.plans.size;
  }

  /**
   * Loads the body of `SKILL.md` (frontmatter stripped) and lists the bundled
   * files, once per plan.
   * @throws {SkillError} `SKILL_FILE_TOO_LARGE` over `maxSkillFileBytes`, `SKILL_FILE_READ_FAILED` when unreadable.
   */
  async activate(ctx: ToolExecutionContext): Promise<void> {
    const planId = ctx.planId;
    let loading = this.plans.get(planId);
    if (loading === undefined) {
      loading = this.load(ctx);
      this.plans.set(planId, loading);
      loading.catch(() => {
        if (this.plans.get(planId) === loading) this.plans.delete(planId);
      });
    }
    await loading;
  }

  /**
   * Returns the instructions and file list, or the bundled file `input.file`.
   * Expected failures (path outside the skill, missing or too large file) are
   * failed results carrying a {@link SkillError}.
   * @throws ToolNotActivatedError when the tool was not activated in this plan.
   */
  async execute(input: SkillToolInput | undefined, ctx: ToolExecutionContext): Promise<ToolResult<SkillToolOutput>> {
    const loading = this.plans.get(ctx.planId);
    if (loading === undefined) {
      throw new ToolNotActivatedError({ toolName: this.descriptor.name, planId: ctx.planId });
    }
    const loaded = await loading;
    const name = this.skill.name;
    const file = input?.file;
    if (file === undefined) {
      const output: SkillInstructionsOutput = {
        kind: 'instructions',
        name,
        instructions: loaded.instructions,
        files: loaded.files,
        filesTruncated: loaded.filesTruncated,
        allowedTools: this.skill.allowedTools,
      };
      return toolSuccess<SkillToolOutput>(output, { content: [{ type: 'text', text: loaded.instructions }] });
    }
    const context = { toolName: this.descriptor.name, planId: ctx.planId, skillPath: this.skill.path };
    const signal = ctx.cancellationToken.signal;
    try {
      const { realPath, relativePath } = await resolveInsideSkill(this.settings.fileSystem, loaded.realRoot, file, context);
      const bytes = await readBundledFile(this.settings.fileSystem, loaded.realRoot, realPath, relativePath, this.settings.maxFileBytes, context, signal);
      const { encoding, content } = encodeContent(bytes);
      const output: SkillFileOutput = { kind: 'file', name, file: relativePath, encoding, content, size: bytes.length };
      return toolSuccess<SkillToolOutput>(output, encoding === 'utf-8' ? { content: [{ type: 'text', text: content }] } : undefined);
    } catch (error) {
      if (SkillError.isInstance(error)) return toolFailure(error);
      throw error;
    }
  }

  /** Releases the body loaded for the plan. */
  async deactivate(ctx: ToolExecutionContext): Promise<void> {
    this.plans.delete(ctx.planId);
  }

  private async load(ctx: ToolExecutionContext): Promise<LoadedSkill> {
    const fileSystem = this.settings.fileSystem;
    const signal = ctx.cancellationToken.signal;
    const toolName = this.descriptor.name;
    const details = { toolName, planId: ctx.planId, skillPath: this.skill.path };
    let realRoot: string;
    let handle;
    try {
      realRoot = await fileSystem.realpath(this.skill.path);
      handle = await fileSystem.open(join(realRoot, 'SKILL.md'), realRoot);
    } catch (error) {
      const { code, reason } = openRefusal(error);
      const refused = code === 'SKILL_FILE_NOT_REGULAR' || code === 'SKILL_PATH_OUTSIDE_ROOT';
      throw new SkillError({
        ...details,
        code: refused ? code : 'SKILL_FILE_READ_FAILED',
        cause: error,
        problem: refused ? `refused SKILL.md in '${this.skill.path}': ${reason}` : `could not open SKILL.md in '${this.skill.path}' (${messageOf(error)})`,
        remedy: refused ? 'Replace it with a regular file inside the skill folder.' : 'Was the skill moved or deleted? Rediscover the tools.',
      });
    }
    let text: string;
    try {
      const read = await readWhole(handle, this.settings.maxSkillFileBytes, signal);
      if ('tooLarge' in read) {
        throw new SkillError({
          ...details,
          code: 'SKILL_FILE_TOO_LARGE',
          problem: `cannot load SKILL.md: it is ${read.tooLarge} bytes, over maxSkillFileBytes (${this.settings.maxSkillFileBytes})`,
          remedy: 'Move detail into reference files, or raise the limit.',
        });
      }
      text = read.bytes.toString('utf8');
    } finally {
      await handle.close().catch(() => undefined);
    }
    const listing = await listBundledFiles(fileSystem, realRoot, this.settings.skipDirectories, this.settings.maxListedFiles, signal);
    return { realRoot, instructions: stripFrontmatter(text), files: listing.files, filesTruncated: listing.truncated };
  }
}
