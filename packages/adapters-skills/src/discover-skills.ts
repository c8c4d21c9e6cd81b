import { basename, extname, join, relative } from 'node:path';
import { isValidToolName, messageOf } from '@ca/domain';
import { isPathInside } from '@ca/tool-context';
import { readFrontmatter } from './frontmatter-reader';
import { openRefusal } from './skill-paths';
import { checkFrontmatter, type FrontmatterIssue } from './skill-frontmatter';
import type { SkillDiagnostic } from './skill-diagnostic';
import { resolveSkillsSettings, type ResolvedSkillsSettings, type SkillsAdapterSettings } from './skills-adapter-settings';
import { errorCode, type SkillsFileSystem } from './skills-file-system';

/** A bundled script offered as a tool (only when `allowScripts` enables its skill). */
export interface DiscoveredSkillScript {
  /** `skill.<name>.script.<stem>`. */
  readonly toolName: string;
  /** Path relative to the skill folder, e.g. `scripts/extract.py`. */
  readonly file: string;
  /** Absolute path of the script. */
  readonly path: string;
  /** The program started: `python3`, `bash`, `node`'s own path, or the script itself. */
  readonly command: string;
  /** Arguments put before the caller's: the script's path for an interpreter, nothing for an executable. */
  readonly commandArgs: readonly string[];
}

/** A skill discovery accepted: its frontmatter, never its body. */
export interface DiscoveredSkill {
  /** The frontmatter `name` (the folder name when it has none). */
  readonly name: string;
  /** `skill.<name>`. */
  readonly toolName: string;
  /** The frontmatter `description`, unabridged. */
  readonly description: string;
  /** Absolute path of the skill folder, as found under its root. */
  readonly path: string;
  /** Absolute path of the root it was found under. */
  readonly root: string;
  readonly license?: string;
  readonly compatibility?: string;
  /** The `metadata` map, plus unknown top-level fields (converted to strings). */
  readonly metadata: Readonly<Record<string, string>>;
  /** `allowed-tools`, split on whitespace. */
  readonly allowedTools: readonly string[];
  /** Bundled scripts offered as tools; empty unless scripts are allowed for this skill. */
  readonly scripts: readonly DiscoveredSkillScript[];
}

/** A skill folder discovery skipped, with the diagnostic that made it skip. */
export interface SkippedSkill {
  /** The tool name it would have had: `skill.<name>` (the folder name when no name could be read). */
  readonly toolName: string;
  /** Absolute path of the skill folder. */
  readonly path: string;
  /** The first error about it. */
  readonly diagnostic: SkillDiagnostic;
}

/** What {@link discoverSkills} found. */
export interface SkillDiscoveryResult {
  /** Skills to offer, in root order, then by path. */
  readonly skills: readonly DiscoveredSkill[];
  /** Every diagnostic, in the same order: warnings of loaded skills, errors of skipped ones, missing roots. */
  readonly diagnostics: readonly SkillDiagnostic[];
  /** Skill folders that were skipped. */
  readonly skipped: readonly SkippedSkill[];
}

/**
 * Scans the configured roots for skill folders and reads the frontmatter of
 * each `SKILL.md` — never its body — checking it against the Agent Skills
 * specification. Nothing is logged: problems are returned as diagnostics.
 *
 * @example
 * const { skills, diagnostics } = await discoverSkills({ roots: ['.agents/skills'], strict: true });
 *
 * @throws {SkillError} `SKILL_INVALID_SETTINGS` when the settings are malformed.
 * @throws The signal's reason when `signal` aborts.
 */
export async function discoverSkills(settings?: SkillsAdapterSettings, signal?: AbortSignal): Promise<SkillDiscoveryResult> {
  return discoverResolved(resolveSkillsSettings(settings), signal);
}

interface Found {
  readonly rootIndex: number;
  readonly sortKey: string;
  readonly diagnostics: SkillDiagnostic[];
  readonly skill?: DiscoveredSkill;
  readonly skipped?: SkippedSkill;
}

interface Folder {
  readonly path: string;
  readonly depth: number;
  readonly rootIndex: number;
  readonly root: string;
}

/** @internal {@link discoverSkills} with settings already resolved. */
export async function discoverResolved(settings: ResolvedSkillsSettings, signal?: AbortSignal): Promise<SkillDiscoveryResult> {
  const fileSystem = settings.fileSystem;
  const diagnostics: SkillDiagnostic[] = [];
  let level: Folder[] = [];
  for (const [rootIndex, root] of settings.roots.entries()) {
    signal?.throwIfAborted();
    let isFolder = false;
    try {
      isFolder = (await fileSystem.stat(root)).isDirectory();
    } catch {
      isFolder = false;
    }
    if (isFolder) level.push({ path: root, depth: 0, rootIndex, root });
    else {
      diagnostics.push({
        severity: settings.strict ? 'error' : 'warning',
        code: 'SKILL_ROOT_NOT_FOUND',
        path: root,
        message: `Skills root '${root}' does not exist or is not a folder; no skills were loaded from it. Create it or fix the roots setting.`,
      });
    }
  }

  const found: Found[] = [];
  while (level.length > 0) {
    const next: Folder[] = [];
    await forEachLimited(level, settings.concurrency, async (folder) => {
      signal?.throwIfAborted();
      let outcome: Found | { readonly children: Folder[] };
      try {
        outcome = await probeFolder(folder, settings, signal);
      } catch (error) {
        // One folder that cannot be probed, whatever the reason, is a diagnostic for that folder, not the end of discovery.
        if (signal?.aborted) throw error;
        outcome = unreadableFolder(folder, `could not be probed (${messageOf(error)})`);
      }
      if ('children' in outcome) next.push(...outcome.children);
      else found.push(outcome);
    });
    level = next;
  }

  found.sort((a, b) => a.rootIndex - b.rootIndex || (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
  const skills: DiscoveredSkill[] = [];
  const skipped: SkippedSkill[] = [];
  const owners = new Map<string, string>();
  for (const entry of found) {
    const skill = entry.skill;
    const owner = skill === undefined ? undefined : owners.get(skill.toolName);
    if (skill !== undefined && owner !== undefined) {
      const diagnostic: SkillDiagnostic = {
        severity: 'error',
        code: 'SKILL_DUPLICATE_NAME',
        path: skill.path,
        skillName: skill.name,
        field: 'name',
        message: `Skill '${skill.name}' at '${skill.path}' was skipped: a skill of the same name was found first at '${owner}'. Rename one of them or remove one root.`,
      };
      diagnostics.push(...entry.diagnostics, diagnostic);
      skipped.push({ toolName: skill.toolName, path: skill.path, diagnostic });
      continue;
    }
    diagnostics.push(...entry.diagnostics);
    if (skill !== undefined) {
      owners.set(skill.toolName, skill.path);
      skills.push(skill);
    }
    if (entry.skipped !== undefined) skipped.push(entry.skipped);
  }
  return { skills, diagnostics, skipped };
}

async function probeFolder(
  folder: Folder,
  settings: ResolvedSkillsSettings,
  signal: AbortSignal | undefined,
): Promise<Found | { readonly children: Folder[] }> {
  const fileSystem = settings.fileSystem;
  const skillFile = join(folder.path, 'SKILL.md');
  const folderName = basename(folder.path);
  const base = { rootIndex: folder.rootIndex, sortKey: relative(folder.root, folder.path).split(/[\\/]/).join('\u0000') };
  const fail = (code: 'SKILL_READ_FAILED' | 'SKILL_FILE_NOT_REGULAR' | 'SKILL_PATH_OUTSIDE_ROOT', message: string): Found =>
    unreadableFolder(folder, message, code);
  let handle;
  try {
    handle = await fileSystem.open(skillFile, folder.path);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'PATH_NOT_FOUND' || code === 'ENOENT' || code === 'ENOTDIR') {
      return { children: folder.depth < settings.maxDepth ? await subfolders(folder, settings) : [] };
    }
    if (code === 'PATH_IS_DIRECTORY' || code === 'EISDIR') {
      // A folder named SKILL.md means a skill was meant here: say so rather than descend into it.
      return fail('SKILL_READ_FAILED', `SKILL.md in '${folder.path}' could not be read (it is a folder, EISDIR). Check the file.`);
    }
    const refusal = openRefusal(error);
    if (refusal.code === 'SKILL_FILE_NOT_REGULAR') {
      return fail('SKILL_FILE_NOT_REGULAR', `SKILL.md in '${folder.path}' was not read: ${refusal.reason}. Replace it with a regular file.`);
    }
    if (refusal.code === 'SKILL_PATH_OUTSIDE_ROOT') {
      return fail(
        'SKILL_PATH_OUTSIDE_ROOT',
        `SKILL.md in '${folder.path}' was not read: it is a link to a file outside the skill folder. Copy the file into the skill instead of linking to it.`,
      );
    }
    return fail('SKILL_READ_FAILED', `SKILL.md in '${folder.path}' could not be opened (${messageOf(error)}). Check its permissions.`);
  }
  let read;
  try {
    read = await readFrontmatter(handle, settings.maxFrontmatterBytes, signal);
  } catch (error) {
    if (signal?.aborted) throw error;
    return fail('SKILL_READ_FAILED', `SKILL.md in '${folder.path}' could not be read (${messageOf(error)}). Check the file.`);
  } finally {
    await handle.close().catch(() => undefined);
  }

  let issues: readonly FrontmatterIssue[];
  let name = folderName;
  let frontmatter;
  if (read.status === 'ok') {
    const check = checkFrontmatter(read.yaml, folderName);
    issues = check.issues;
    name = check.name;
    frontmatter = check.frontmatter;
  } else {
    issues = [unreadableIssue(read.status, settings.maxFrontmatterBytes)];
  }
  const diagnostics: SkillDiagnostic[] = issues.map((issue) => ({
    severity: settings.strict ? 'error' : issue.severity,
    code: issue.code,
    path: folder.path,
    skillName: name,
    message: issue.message,
    ...(issue.field === undefined ? {} : { field: issue.field }),
  }));
  const firstError = diagnostics.find((diagnostic) => diagnostic.severity === 'error');
  if (frontmatter === undefined || firstError !== undefined) {
    const diagnostic = firstError ?? diagnostics[0];
    return { ...base, diagnostics, skipped: { toolName: `skill.${name}`, path: folder.path, diagnostic } };
  }
  const toolName = `skill.${frontmatter.name}`;
  const scripts = scriptsAllowed(settings, frontmatter.name) ? await findScripts(folder.path, toolName, settings, diagnostics, name) : [];
  const skill: DiscoveredSkill = {
    name: frontmatter.name,
    toolName,
    description: frontmatter.description,
    path: folder.path,
    root: folder.root,
    ...(frontmatter.license === undefined ? {} : { license: frontmatter.license }),
    ...(frontmatter.compatibility === undefined ? {} : { compatibility: frontmatter.compatibility }),
    metadata: frontmatter.metadata,
    allowedTools: frontmatter.allowedTools,
    scripts,
  };
  return { ...base, diagnostics, skill };
}

/** A skill folder skipped with one error diagnostic. */
function unreadableFolder(
  folder: Folder,
  message: string,
  code: 'SKILL_READ_FAILED' | 'SKILL_FILE_NOT_REGULAR' | 'SKILL_PATH_OUTSIDE_ROOT' = 'SKILL_READ_FAILED',
): Found {
  const folderName = basename(folder.path);
  const text = code === 'SKILL_READ_FAILED' && !message.startsWith('SKILL.md') ? `The folder '${folder.path}' ${message}. Check it.` : message;
  const diagnostic: SkillDiagnostic = { severity: 'error', code, path: folder.path, skillName: folderName, message: text };
  return {
    rootIndex: folder.rootIndex,
    sortKey: relative(folder.root, folder.path).split(/[\\/]/).join('\u0000'),
    diagnostics: [diagnostic],
    skipped: { toolName: `skill.${folderName}`, path: folder.path, diagnostic },
  };
}

function unreadableIssue(status: 'no-frontmatter' | 'unterminated' | 'too-large', maxBytes: number): FrontmatterIssue {
  switch (status) {
    case 'no-frontmatter':
      return {
        severity: 'error',
        code: 'SKILL_NO_FRONTMATTER',
        message: 'SKILL.md must start with YAML frontmatter (---). Add a first line ---, then name: and description:, then a closing --- line.',
      };
    case 'unterminated':
      return {
        severity: 'error',
        code: 'SKILL_FRONTMATTER_UNTERMINATED',
        message: 'The frontmatter of SKILL.md has no closing --- line. Add one after the last field.',
      };
    case 'too-large':
      return {
        severity: 'error',
        code: 'SKILL_FRONTMATTER_TOO_LARGE',
        message: `No closing --- line within the first ${maxBytes} bytes of SKILL.md. Shorten the frontmatter or raise maxFrontmatterBytes.`,
      };
  }
}

async function subfolders(folder: Folder, settings: ResolvedSkillsSettings): Promise<Folder[]> {
  let entries;
  try {
    entries = await settings.fileSystem.readdir(folder.path);
  } catch {
    return [];
  }
  const children: Folder[] = [];
  for (const entry of entries) {
    if (settings.skipDirectories.has(entry.name)) continue;
    const path = join(folder.path, entry.name);
    let isFolder = entry.isDirectory();
    if (!isFolder && entry.isSymbolicLink()) {
      // Installers often link skills into a root; the depth bound stops link cycles.
      isFolder = await settings.fileSystem.stat(path).then(
        (stats) => stats.isDirectory(),
        () => false,
      );
    }
    if (isFolder) children.push({ path, depth: folder.depth + 1, rootIndex: folder.rootIndex, root: folder.root });
  }
  return children;
}

function scriptsAllowed(settings: ResolvedSkillsSettings, name: string): boolean {
  return settings.allowScripts === true || (typeof settings.allowScripts === 'object' && settings.allowScripts.has(name));
}

const INTERPRETERS: Readonly<Record<string, string>> = {
  '.py': 'python3',
  '.sh': 'bash',
  '.js': process.execPath,
  '.mjs': process.execPath,
  '.cjs': process.execPath,
};

async function findScripts(
  skillPath: string,
  skillToolName: string,
  settings: ResolvedSkillsSettings,
  diagnostics: SkillDiagnostic[],
  skillName: string,
): Promise<DiscoveredSkillScript[]> {
  const fileSystem: SkillsFileSystem = settings.fileSystem;
  const folder = join(skillPath, 'scripts');
  let entries;
  try {
    entries = await fileSystem.readdir(folder);
  } catch {
    return [];
  }
  const skip = (file: string, reason: string): void => {
    diagnostics.push({
      severity: settings.strict ? 'error' : 'warning',
      code: 'SKILL_SCRIPT_SKIPPED',
      path: skillPath,
      skillName,
      message: `Script 'scripts/${file}' is not offered as a tool: ${reason}`,
    });
  };
  const realSkill = await fileSystem.realpath(skillPath).catch(() => skillPath);
  const scripts: DiscoveredSkillScript[] = [];
  const stems = new Set<string>();
  for (const entry of [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (entry.isDirectory() || entry.name.startsWith('.')) continue;
    const path = join(folder, entry.name);
    let stats;
    try {
      if (!isPathInside(await fileSystem.realpath(path), realSkill)) {
        skip(entry.name, 'it is a link to a file outside the skill folder.');
        continue;
      }
      stats = await fileSystem.stat(path);
    } catch (error) {
      skip(entry.name, `it cannot be read (${messageOf(error)}).`);
      continue;
    }
    if (!stats.isFile()) continue;
    const extension = extname(entry.name).toLowerCase();
    const stem = extension.length > 0 ? entry.name.slice(0, -extension.length) : entry.name;
    const toolName = `${skillToolName}.script.${stem}`;
    if (!isValidToolName(toolName)) {
      skip(entry.name, `'${toolName}' is not a valid tool name; rename the file to letters, digits, '_' and '-'.`);
      continue;
    }
    if (stems.has(stem)) {
      skip(entry.name, `another script with the stem '${stem}' is already offered as '${toolName}'; rename one of them.`);
      continue;
    }
    const interpreter = INTERPRETERS[extension];
    if (interpreter === undefined && (stats.mode & 0o111) === 0) {
      skip(entry.name, 'no interpreter is known for its extension (.py, .sh, .js, .mjs, .cjs) and it is not executable; chmod +x it.');
      continue;
    }
    stems.add(stem);
    scripts.push({
      toolName,
      file: `scripts/${entry.name}`,
      path,
      command: interpreter ?? path,
      commandArgs: interpreter === undefined ? [] : [path],
    });
  }
  return scripts;
}

/** Runs `task` for every item, at most `limit` at a time. */
async function forEachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++];
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
