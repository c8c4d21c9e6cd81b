import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { messageOf } from '@ca/domain';
import { isPathInside } from '@ca/tool-context';
import { SkillError, type SkillErrorCode } from './skill-error';
import { errorCode, type SkillsFileHandle, type SkillsFileSystem } from './skills-file-system';

/** Deepest folder level listed inside a skill. */
const MAX_LIST_DEPTH = 10;
const READ_CHUNK_BYTES = 64 * 1024;

/** @internal Where an error is about, for messages and error fields. */
export interface PathErrorContext {
  readonly toolName: string;
  readonly planId?: string;
  readonly skillPath: string;
}

/**
 * @internal Resolves a path a caller asked for inside a skill folder, refusing
 * (before touching the disk) absolute paths and `..` that climb out, then
 * (after resolving links) anything whose real location is outside.
 * `realRoot` must already be the real path of the skill folder.
 */
export async function resolveInsideSkill(
  fileSystem: SkillsFileSystem,
  realRoot: string,
  requested: unknown,
  context: PathErrorContext,
): Promise<{ readonly realPath: string; readonly relativePath: string }> {
  const fail = (code: 'SKILL_PATH_INVALID' | 'SKILL_PATH_OUTSIDE_ROOT' | 'SKILL_FILE_NOT_FOUND', problem: string, remedy: string, cause?: unknown): never => {
    throw new SkillError({
      code,
      problem,
      remedy,
      toolName: context.toolName,
      ...(context.planId === undefined ? {} : { planId: context.planId }),
      skillPath: context.skillPath,
      ...(typeof requested === 'string' ? { requestedPath: requested } : {}),
      ...(cause === undefined ? {} : { cause }),
    });
  };
  if (typeof requested !== 'string' || requested.length === 0 || requested.includes('\u0000')) {
    fail('SKILL_PATH_INVALID', 'was asked for an empty or malformed file path', 'Pass a path relative to the skill folder, e.g. "references/guide.md".');
  }
  const path = requested as string;
  const outside = `refused '${path}': the path is outside the skill folder '${context.skillPath}'`;
  const inside = "Only files inside the skill can be read; pass a path relative to it without '..'.";
  if (isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\')) fail('SKILL_PATH_OUTSIDE_ROOT', outside, inside);
  const lexical = resolve(realRoot, path);
  if (!isPathInside(lexical, realRoot)) fail('SKILL_PATH_OUTSIDE_ROOT', outside, inside);
  let realPath = lexical;
  try {
    realPath = await fileSystem.realpath(lexical);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      fail('SKILL_FILE_NOT_FOUND', `found no file '${path}' in the skill`, 'Call the tool without "file" to list its bundled files.', error);
    }
    throw error;
  }
  if (!isPathInside(realPath, realRoot)) fail('SKILL_PATH_OUTSIDE_ROOT', `${outside} (it is a link that points out of the skill)`, inside);
  return { realPath, relativePath: relative(realRoot, realPath).split(sep).join('/') };
}

/** @internal Reads a whole file through an open handle, or reports that it is larger than `maxBytes`. */
export async function readWhole(
  handle: SkillsFileHandle,
  maxBytes: number,
  signal: AbortSignal | undefined,
): Promise<{ readonly bytes: Buffer } | { readonly tooLarge: number }> {
  const stats = await handle.stat();
  if (stats.size > maxBytes) return { tooLarge: stats.size };
  // One byte more than the cap tells a file that grew since fstat.
  const buffer = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(stats.size + 1, 1)));
  let length = 0;
  while (length < buffer.length) {
    signal?.throwIfAborted();
    const { bytesRead } = await handle.read(buffer, length, Math.min(READ_CHUNK_BYTES, buffer.length - length), length);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  if (length > maxBytes) return { tooLarge: length };
  return { bytes: buffer.subarray(0, length) };
}

/**
 * @internal What a refusal of `SkillsFileSystem.open` (a `PathConfinementError`
 * from the default, or a Node error from an injected one) means for a file
 * the caller asked for: the adapter's code and the words for the message.
 */
export function openRefusal(error: unknown): { readonly code: SkillErrorCode; readonly reason: string } {
  switch (errorCode(error)) {
    case 'PATH_NOT_FOUND':
    case 'ENOENT':
    case 'ENOTDIR':
      return { code: 'SKILL_FILE_NOT_FOUND', reason: 'it does not exist' };
    case 'PATH_IS_DIRECTORY':
    case 'EISDIR':
      return { code: 'SKILL_FILE_NOT_FOUND', reason: 'it is a folder, not a file' };
    case 'PATH_NOT_REGULAR_FILE':
      return { code: 'SKILL_FILE_NOT_REGULAR', reason: `it is a ${fileTypeOf(error)}, not a regular file, and only regular files are read` };
    case 'PATH_OUTSIDE_ROOT':
    case 'PATH_CHANGED':
      return { code: 'SKILL_PATH_OUTSIDE_ROOT', reason: 'what it leads to is outside the skill folder' };
    default:
      return { code: 'SKILL_FILE_READ_FAILED', reason: `it could not be opened (${messageOf(error)})` };
  }
}

function fileTypeOf(error: unknown): string {
  const type = typeof error === 'object' && error !== null ? (error as { fileType?: unknown }).fileType : undefined;
  return typeof type === 'string' ? type : 'special file';
}

/** @internal Opens a resolved file inside the skill (checked on the descriptor), refusing folders, special files and files over the cap, and reads it. */
export async function readBundledFile(
  fileSystem: SkillsFileSystem,
  realRoot: string,
  realPath: string,
  relativePath: string,
  maxBytes: number,
  context: PathErrorContext,
  signal: AbortSignal | undefined,
): Promise<Buffer> {
  const details = {
    toolName: context.toolName,
    ...(context.planId === undefined ? {} : { planId: context.planId }),
    skillPath: context.skillPath,
    requestedPath: relativePath,
  };
  let handle: SkillsFileHandle;
  try {
    handle = await fileSystem.open(realPath, realRoot);
  } catch (error) {
    const { code, reason } = openRefusal(error);
    const remedy =
      code === 'SKILL_FILE_NOT_FOUND'
        ? 'Call the tool without "file" to list the bundled files.'
        : code === 'SKILL_FILE_READ_FAILED'
          ? 'Check its permissions.'
          : undefined;
    throw new SkillError({ ...details, code, cause: error, problem: `refused '${relativePath}': ${reason}`, ...(remedy === undefined ? {} : { remedy }) });
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw new SkillError({
        ...details,
        code: 'SKILL_FILE_NOT_FOUND',
        problem: `found a folder, not a file, at '${relativePath}'`,
        remedy: 'Call the tool without "file" to list the bundled files.',
      });
    }
    const read = await readWhole(handle, maxBytes, signal);
    if ('tooLarge' in read) {
      throw new SkillError({
        ...details,
        code: 'SKILL_FILE_TOO_LARGE',
        problem: `cannot read '${relativePath}': it is ${read.tooLarge} bytes, over the limit of ${maxBytes} bytes`,
        remedy: 'Raise maxFileBytes in the adapter settings to read it.',
      });
    }
    return read.bytes;
  } catch (error) {
    if (SkillError.isInstance(error) || signal?.aborted) throw error;
    throw new SkillError({
      ...details,
      code: 'SKILL_FILE_READ_FAILED',
      cause: error,
      problem: `could not read '${relativePath}' (${messageOf(error)})`,
      remedy: 'Check its permissions.',
    });
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** @internal Text when the bytes are valid UTF-8 without NUL characters, base64 otherwise. */
export function encodeContent(bytes: Buffer): { readonly encoding: 'utf-8' | 'base64'; readonly content: string } {
  if (!bytes.includes(0)) {
    try {
      return { encoding: 'utf-8', content: new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes) };
    } catch {
      // not UTF-8: fall through to base64
    }
  }
  return { encoding: 'base64', content: bytes.toString('base64') };
}

/**
 * @internal Lists the files of a skill folder (relative paths with `/`),
 * sorted, without `SKILL.md` itself, skipping `skipDirectories` and links
 * that point out of the skill; at most `limit` entries.
 */
export async function listBundledFiles(
  fileSystem: SkillsFileSystem,
  realRoot: string,
  skipDirectories: ReadonlySet<string>,
  limit: number,
  signal: AbortSignal | undefined,
): Promise<{ readonly files: readonly string[]; readonly truncated: boolean }> {
  const files: string[] = [];
  let level = [''];
  for (let depth = 0; depth < MAX_LIST_DEPTH && level.length > 0; depth++) {
    const next: string[] = [];
    for (const folder of level) {
      signal?.throwIfAborted();
      let entries;
      try {
        entries = await fileSystem.readdir(join(realRoot, folder));
      } catch {
        continue;
      }
      for (const entry of [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
        const path = folder === '' ? entry.name : `${folder}/${entry.name}`;
        if (entry.isDirectory()) {
          if (!skipDirectories.has(entry.name)) next.push(path);
          continue;
        }
        if (path === 'SKILL.md') continue;
        if (entry.isSymbolicLink()) {
          const target = await fileSystem.realpath(join(realRoot, path)).catch(() => undefined);
          if (target === undefined || !isPathInside(target, realRoot)) continue;
          const stats = await fileSystem.stat(target).catch(() => undefined);
          if (stats === undefined || !stats.isFile()) continue;
        } else if (!entry.isFile()) continue;
        if (files.length >= limit) return { files: files.sort(), truncated: true };
        files.push(path);
      }
    }
    level = next.sort();
  }
  return { files: files.sort(), truncated: false };
}
