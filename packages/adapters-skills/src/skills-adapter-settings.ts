import { isAbsolute, resolve } from 'node:path';
import { createSandbox, SandboxSettingsError, type Sandbox, type SandboxSetting } from '@ca/sandbox';
import { createConsoleLogger, type RuntimeLogger } from '@ca/tool-lifecycle';
import { SkillError } from './skill-error';
import { nodeSkillsFileSystem, type SkillsFileSystem } from './skills-file-system';

/** Settings of the Agent Skills adapter; every field is optional. */
export interface SkillsAdapterSettings {
  /** Identifies the source in messages; default `skills:<root>,<root>…`. */
  readonly id?: string;
  /**
   * Folders to scan for skills, absolute or relative to `cwd`, in priority
   * order (the first skill of a name wins). Default `['.agents/skills']`.
   */
  readonly roots?: readonly string[];
  /** Folder that relative roots are resolved against; default `process.cwd()` at creation. */
  readonly cwd?: string;
  /** Turn every warning into an error that skips the skill (default `false`: lenient, like most clients). */
  readonly strict?: boolean;
  /**
   * How many folder levels below a root are searched for `SKILL.md`
   * (default 3): `1` finds `<root>/<skill>/SKILL.md` only, `2` also
   * `<root>/<group>/<skill>/SKILL.md`. A root holding `SKILL.md` itself is a skill.
   */
  readonly maxDepth?: number;
  /** Folder names never entered while scanning and listing files (default `['.git', 'node_modules']`). */
  readonly skipDirectories?: readonly string[];
  /** Most bytes of `SKILL.md` read to find the closing `---` of the frontmatter (default 16 KiB). */
  readonly maxFrontmatterBytes?: number;
  /** Largest `SKILL.md` loaded at activation (default 1 MiB). */
  readonly maxSkillFileBytes?: number;
  /** Largest bundled file returned by `execute({ file })` (default 1 MiB; text and binary alike). */
  readonly maxFileBytes?: number;
  /** Most bundled files listed by `execute({})` (default 500); the list says when it was cut. */
  readonly maxListedFiles?: number;
  /**
   * Offer each file under a skill's `scripts/` folder as a tool
   * `skill.<name>.script.<stem>`: `true` for every skill, a list of skill
   * names for those only. Default `false`: scripts are never run.
   */
  readonly allowScripts?: boolean | readonly string[];
  /** Deadline of one script run, in ms (default 60,000); the process group is killed when it passes. */
  readonly scriptTimeoutMs?: number;
  /** Most bytes kept of a script's stdout and of its stderr (default 1 MiB each); the rest is discarded. */
  readonly maxScriptOutputBytes?: number;
  /**
   * Variables set for scripts on top of the minimal environment every program
   * the runtime starts gets (`MINIMAL_ENVIRONMENT_VARIABLES` of
   * `@ca/sandbox`: PATH, HOME, LANG, …); `undefined` removes one.
   * Nothing else of the service's environment reaches a script.
   */
  readonly scriptEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * The kernel sandbox of `@ca/sandbox` (bubblewrap, Linux) for
   * scripts: `'required'`, `'auto'` (the default: used where it works) or
   * `'off'`, or `{ mode, network?, bwrapPath? }`. A sandboxed script sees the
   * file system read-only except the plan's write-bound resources (none in a
   * read-only plan), its skill folder read-only, a private `/tmp`, no network
   * when the plan denies it, and everything it started ends with it.
   */
  readonly sandbox?: SandboxSetting;
  /** How many `SKILL.md` files discovery reads at once (default 16). */
  readonly concurrency?: number;
  /** Injectable file system, for tests and virtual trees (default `node:fs/promises`). */
  readonly fileSystem?: SkillsFileSystem;
  /**
   * Where the adapter's warnings go (the scripts' sandbox falling back to
   * none, once per process). Default: the container's `RUNTIME_LOGGER` with
   * `registerSkillsAdapter`, else a console logger.
   */
  readonly logger?: RuntimeLogger;
}

/** @internal Settings with defaults applied and roots resolved. */
export interface ResolvedSkillsSettings {
  readonly id: string;
  readonly roots: readonly string[];
  readonly cwd: string;
  readonly strict: boolean;
  readonly maxDepth: number;
  readonly skipDirectories: ReadonlySet<string>;
  readonly maxFrontmatterBytes: number;
  readonly maxSkillFileBytes: number;
  readonly maxFileBytes: number;
  readonly maxListedFiles: number;
  readonly allowScripts: boolean | ReadonlySet<string>;
  readonly scriptTimeoutMs: number;
  readonly maxScriptOutputBytes: number;
  readonly scriptEnv: Readonly<Record<string, string | undefined>> | undefined;
  readonly sandbox: Sandbox;
  readonly concurrency: number;
  readonly fileSystem: SkillsFileSystem;
}

/** Default root of skills, relative to `cwd`. */
export const DEFAULT_SKILLS_ROOT = '.agents/skills';

/** @internal Applies defaults and checks every setting. */
export function resolveSkillsSettings(settings: SkillsAdapterSettings | undefined): ResolvedSkillsSettings {
  if (settings !== undefined && (typeof settings !== 'object' || settings === null)) {
    invalid(`expected a settings object such as { roots: ['.agents/skills'] } or nothing, got ${typeof settings}.`);
  }
  const given = settings ?? {};
  const cwd = given.cwd ?? process.cwd();
  if (typeof cwd !== 'string' || !isAbsolute(cwd)) invalid(`cwd must be an absolute path, got ${JSON.stringify(cwd)}.`);
  const rawRoots = given.roots ?? [DEFAULT_SKILLS_ROOT];
  if (!Array.isArray(rawRoots) || rawRoots.some((root) => typeof root !== 'string' || root.length === 0)) {
    invalid(`roots must be an array of non-empty paths, got ${JSON.stringify(rawRoots)}.`);
  }
  const roots = [...new Set(rawRoots.map((root) => resolve(cwd, root)))];
  const skip = given.skipDirectories ?? ['.git', 'node_modules'];
  if (!Array.isArray(skip) || skip.some((name) => typeof name !== 'string')) {
    invalid(`skipDirectories must be an array of folder names, got ${JSON.stringify(skip)}.`);
  }
  const allowScripts = given.allowScripts ?? false;
  if (typeof allowScripts !== 'boolean' && (!Array.isArray(allowScripts) || allowScripts.some((name) => typeof name !== 'string'))) {
    invalid(`allowScripts must be true, false or an array of skill names, got ${JSON.stringify(allowScripts)}.`);
  }
  const fileSystem = given.fileSystem ?? nodeSkillsFileSystem;
  for (const method of ['readdir', 'stat', 'realpath', 'open'] as const) {
    if (typeof fileSystem?.[method] !== 'function') invalid(`fileSystem must implement ${method}().`);
  }
  if (given.id !== undefined && (typeof given.id !== 'string' || given.id.length === 0)) invalid('id must be a non-empty string.');
  if (given.strict !== undefined && typeof given.strict !== 'boolean') invalid('strict must be true or false.');
  if (
    given.scriptEnv !== undefined &&
    (typeof given.scriptEnv !== 'object' ||
      given.scriptEnv === null ||
      !Object.entries(given.scriptEnv).every(
        ([name, value]) => /^[^=\0]+$/.test(name) && (value === undefined || (typeof value === 'string' && !value.includes('\0'))),
      ))
  ) {
    invalid('scriptEnv must be an object of environment variables: names without "=", string values (or undefined) without NUL characters.');
  }
  return {
    id: given.id ?? `skills:${roots.join(',')}`,
    roots,
    cwd,
    strict: given.strict ?? false,
    maxDepth: integer(given.maxDepth, 'maxDepth', 3, 0),
    skipDirectories: new Set(skip),
    maxFrontmatterBytes: integer(given.maxFrontmatterBytes, 'maxFrontmatterBytes', 16 * 1024, 8),
    maxSkillFileBytes: integer(given.maxSkillFileBytes, 'maxSkillFileBytes', 1024 * 1024, 1),
    maxFileBytes: integer(given.maxFileBytes, 'maxFileBytes', 1024 * 1024, 0),
    maxListedFiles: integer(given.maxListedFiles, 'maxListedFiles', 500, 0),
    allowScripts: typeof allowScripts === 'boolean' ? allowScripts : new Set(allowScripts),
    scriptTimeoutMs: integer(given.scriptTimeoutMs, 'scriptTimeoutMs', 60_000, 1),
    maxScriptOutputBytes: integer(given.maxScriptOutputBytes, 'maxScriptOutputBytes', 1024 * 1024, 0),
    scriptEnv: given.scriptEnv,
    sandbox: sandboxOf(given.sandbox, given.logger),
    concurrency: integer(given.concurrency, 'concurrency', 16, 1),
    fileSystem,
  };
}

function integer(value: unknown, name: string, fallback: number, minimum: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) {
    invalid(`${name} must be an integer of at least ${minimum}, got ${JSON.stringify(value)}.`);
  }
  return value as number;
}

function sandboxOf(setting: SandboxSetting | undefined, logger: RuntimeLogger | undefined): Sandbox {
  if (logger !== undefined && typeof logger?.warn !== 'function') invalid('logger must be a RuntimeLogger (debug, info, warn, error).');
  const log = logger ?? createConsoleLogger();
  try {
    return createSandbox(setting, { warn: (message) => log.warn(message, { code: 'SANDBOX_OFF', setting: 'sandbox' }) });
  } catch (error) {
    if (!SandboxSettingsError.isInstance(error)) throw error;
    return invalid(`${error.setting} ${error.message.replace(/^The sandbox setting \S+ /, '')}`);
  }
}

function invalid(message: string): never {
  throw new SkillError({ code: 'SKILL_INVALID_SETTINGS', problem: `refused its settings: ${message}` });
}
