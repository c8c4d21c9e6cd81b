import { randomBytes } from 'node:crypto';
import { close as closeCallback, constants, existsSync, fstat as fstatCallback, open as openCallback, type Dir, type Stats } from 'node:fs';
import { link, lstat, mkdir, open, opendir, readlink, realpath, rename, rmdir, symlink, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { resourcePath, type BoundResource } from './bound-resource';
import { PathConfinementError, type ConfinedFileType, type PathConfinementErrorOptions } from './path-confinement-error';

// Flags absent on a platform (Windows) are 0: the open still happens, and the descriptor check below still runs.
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
// O_NONBLOCK: opening a FIFO for reading returns at once instead of holding a libuv thread until a writer appears.
const OPEN_FILE = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const OPEN_DIRECTORY = constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;
const CREATE_TEMPORARY = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW;
const MAX_LINK_HOPS = 40;
/** Code of the error {@link resolveRealPath} throws when a path keeps changing under it. */
const CHANGED = 'ECHANGED';

/** A folder (or a single file) that paths are confined to. Make one with {@link resolveConfinementRoot}. */
export interface ConfinementRoot {
  /** Name in messages: a resource id, `'skill folder'`, … */
  readonly name: string;
  /** Absolute path as configured. */
  readonly path: string;
  /** The path with every symbolic link resolved; every check compares against it. */
  readonly realPath: string;
  /** Whether changes are allowed inside it. */
  readonly writable: boolean;
  /** The bound resource it stands for, when there is one. */
  readonly resource?: BoundResource;
}

/** Options of {@link resolveConfinementRoot}. */
export interface ConfinementRootOptions {
  /** Name in messages. */
  readonly name: string;
  /** Absolute path of the folder or file. */
  readonly path: string;
  /** Default `false`. */
  readonly writable?: boolean;
  /** The bound resource it stands for, if any. */
  readonly resource?: BoundResource;
}

/** The tool and plan a confinement call acts for; they are named in every error. */
export interface ConfinementDetails {
  readonly toolName?: string;
  readonly planId?: string;
}

/** What {@link confinePath} is asked. */
export interface ConfinePathRequest extends ConfinementDetails {
  /** The roots paths may lie in (at least one). Nested roots are allowed: the most specific one holding a path decides its access. */
  readonly roots: readonly ConfinementRoot[];
  /** The path as given; default `'.'`. Relative paths resolve against `base`. */
  readonly path?: unknown;
  /** The root relative paths start from, and that the result must lie in; default the first root (which then does not restrict). */
  readonly base?: ConfinementRoot;
  /** Accept absolute paths (that lie inside a root). Default `true`; `false` refuses them before touching the disk. */
  readonly allowAbsolute?: boolean;
  /** `'write'` refuses paths whose most specific root is not writable. */
  readonly access: 'read' | 'write';
  /** `false`: a final symbolic link is not followed, the path names the link itself. Default `true`. */
  readonly followFinalLink?: boolean;
}

/** A path that passed {@link confinePath}: what the open and write functions take. */
export interface ConfinedPath extends ConfinementDetails {
  /** The path as asked for, for messages. */
  readonly requestedPath?: string;
  /** Absolute path with links resolved (for a missing path: its nearest existing parent resolved). */
  readonly path: string;
  /** The most specific root holding it. */
  readonly root: ConfinementRoot;
  /** `'write'` checks that what is opened is not inside a read-only root nested in `root`. Default `'read'`. */
  readonly access?: 'read' | 'write';
  /** Read-only roots nested inside `root`, which a write must not reach. */
  readonly excluded?: readonly ConfinementRoot[];
}

/** A regular file opened by {@link openConfinedFile} or {@link ConfinedDirectory.openFile}. */
export interface ConfinedFile {
  /** Open for reading. Close it with {@link ConfinedFile.close}. */
  readonly handle: FileHandle;
  /** Where the descriptor was found to be. */
  readonly path: string;
  /** `fstat` of the descriptor: a regular file. */
  readonly stats: Stats;
  /** Closes the handle; safe to call more than once. */
  close(): Promise<void>;
}

/** Options of {@link ConfinedDirectory.writeFile}. */
export interface ConfinedWriteOptions {
  /** Permission bits of the new file; default those of the file it replaces, else `0o666` less the umask. */
  readonly mode?: number;
  /** Fail with `PATH_ALREADY_EXISTS` when the name is taken (decided atomically, by `link`). */
  readonly exclusive?: boolean;
  /** Replace a file that has more than one link (its other names keep the old content). Default `false`: refused. */
  readonly allowHardLinks?: boolean;
}

/** What {@link ConfinedDirectory.writeFile} did. */
export interface ConfinedWriteResult {
  /** The name did not exist before. */
  readonly created: boolean;
  /** Where the file now is. */
  readonly path: string;
}

/** Content for {@link ConfinedDirectory.writeFile}: bytes, or a function that writes into the new file's handle. */
export type ConfinedContent = Uint8Array | ((handle: FileHandle) => Promise<void>);

/**
 * An open, verified folder inside a root. Every operation names one entry of
 * it (a single name, no separator) and acts on the folder that was verified,
 * through its descriptor where the platform allows (`/proc/self/fd` on
 * Linux), so swapping the folder for a link afterwards changes nothing.
 */
export interface ConfinedDirectory {
  /** Where the folder was found to be. */
  readonly path: string;
  /** `fstat` of the folder. */
  readonly stats: Stats;
  /** The root it lies in. */
  readonly root: ConfinementRoot;
  /** The absolute path of an entry, for messages and results. */
  childPath(name: string): string;
  /** Streams the entries (`fs.opendir`); links are reported as links, not followed. */
  list(options?: { readonly bufferSize?: number }): Promise<Dir>;
  /** `lstat` of an entry, `undefined` when there is none. */
  lstat(name: string): Promise<Stats | undefined>;
  /** The target of a symbolic link entry. */
  readLink(name: string): Promise<string>;
  /** Opens a regular file entry (never a link, FIFO, socket or device). */
  openFile(name: string): Promise<ConfinedFile>;
  /** Opens a folder entry (never through a link). */
  openDirectory(name: string): Promise<ConfinedDirectory>;
  /** Creates a folder entry. */
  makeDirectory(name: string, mode?: number): Promise<void>;
  /** Writes a whole file: a temporary file in this folder, renamed onto `name`. */
  writeFile(name: string, content: ConfinedContent, options?: ConfinedWriteOptions): Promise<ConfinedWriteResult>;
  /** Removes a non-folder entry (a file, a link — never its target —, a FIFO). */
  remove(name: string): Promise<void>;
  /** Removes an empty folder entry. */
  removeDirectory(name: string): Promise<void>;
  /** Creates a symbolic link entry. */
  symlink(target: string, name: string): Promise<void>;
  /** Sets the permission bits of a file or folder entry (never through a link). */
  chmod(name: string, mode: number): Promise<void>;
  /** Closes the folder; safe to call more than once. */
  close(): Promise<void>;
}

let procFdFolder: string | null | undefined;

/** `/proc/self/fd` where the platform has it: a descriptor's real path, and a way to name entries relative to an open folder. */
function procFd(): string | null {
  procFdFolder ??= process.platform === 'linux' && existsSync('/proc/self/fd') ? '/proc/self/fd' : null;
  return procFdFolder;
}

/**
 * True when `path` is `root` or lies below it. Both must be absolute and
 * normalised (as `path.resolve` leaves them); no disk access.
 *
 * @throws Never.
 */
export function isPathInside(path: string, root: string): boolean {
  if (path === root) return true;
  const between = relative(root, path);
  return between !== '' && between !== '..' && !between.startsWith(`..${sep}`) && !isAbsolute(between);
}

/**
 * `fs.realpath` that also works for paths that do not exist yet: the nearest
 * existing parent is resolved and the missing names appended. A dangling link
 * is followed to where it points, so creating through it cannot escape.
 * With `followFinalLink: false` the last name is kept as it is.
 *
 * @throws The file system's error when a parent cannot be resolved (`EACCES`,
 *   a link loop), as a plain Node error.
 */
export async function resolveRealPath(path: string, options: { readonly followFinalLink?: boolean } = {}): Promise<string> {
  const absolute = resolve(path);
  if (options.followFinalLink === false && dirname(absolute) !== absolute) {
    return join(await realpathNearest(dirname(absolute), 0), basename(absolute));
  }
  return realpathNearest(absolute, 0);
}

async function realpathNearest(path: string, hops: number): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
  const stats = await lstat(path).catch(() => undefined);
  if (stats?.isSymbolicLink()) {
    if (hops >= MAX_LINK_HOPS) throw Object.assign(new Error(`too many levels of symbolic links at "${path}"`), { code: 'ELOOP' });
    let target: string;
    try {
      target = await readlink(path);
    } catch (error) {
      // The link was replaced or removed since lstat: resolve the name again (bounded by the hop count).
      const code = errorCode(error);
      if (code !== 'EINVAL' && code !== 'ENOENT') throw error;
      if (hops + 1 >= MAX_LINK_HOPS) throw Object.assign(new Error(`"${path}" kept changing while it was resolved`), { code: CHANGED });
      return realpathNearest(path, hops + 1);
    }
    return realpathNearest(resolve(dirname(path), target), hops + 1);
  }
  const parent = dirname(path);
  if (parent === path) return path;
  return join(await realpathNearest(parent, hops), basename(path));
}

/**
 * Makes a {@link ConfinementRoot}: checks the path and resolves its links once.
 *
 * @throws {PathConfinementError} `PATH_INVALID` when the path is not absolute;
 *   `PATH_IO_FAILED` when it cannot be resolved.
 */
export async function resolveConfinementRoot(options: ConfinementRootOptions): Promise<ConfinementRoot> {
  const path = options?.path;
  if (typeof path !== 'string' || path.length === 0 || path.includes('\0') || !isAbsolute(path)) {
    throw new PathConfinementError({ code: 'PATH_INVALID', ...(typeof path === 'string' ? { requestedPath: path } : {}) });
  }
  let realPath: string;
  try {
    realPath = await resolveRealPath(path);
  } catch (error) {
    throw new PathConfinementError({ code: 'PATH_IO_FAILED', path, rootName: options.name, cause: error });
  }
  return Object.freeze({
    name: options.name,
    path: resolve(path),
    realPath,
    writable: options.writable === true,
    ...(options.resource === undefined ? {} : { resource: options.resource }),
  });
}

/**
 * Resolves a requested path inside the roots and refuses what leaves them:
 * `..` that climbs out, absolute paths elsewhere (or any absolute path with
 * `allowAbsolute: false`), links — also in a parent, also dangling — that lead
 * out, and changes inside a read-only root. The most specific root holding
 * the path decides, so a read-only root nested in a writable one stays
 * read-only. Nothing is opened: pass the result to {@link openConfinedFile},
 * {@link openConfinedDirectory} or {@link openConfinedParent}, which check
 * again what they open.
 *
 * @throws {PathConfinementError} `PATH_INVALID`, `PATH_OUTSIDE_ROOT`,
 *   `PATH_READ_ONLY`, `PATH_IO_FAILED`.
 */
export async function confinePath(request: ConfinePathRequest): Promise<ConfinedPath> {
  const details = detailsOf(request);
  const given = request.path ?? '.';
  if (typeof given !== 'string' || given.length === 0 || given.includes('\0')) {
    throw new PathConfinementError({ code: 'PATH_INVALID', ...details, ...(typeof given === 'string' ? { requestedPath: given } : {}) });
  }
  const roots = request.roots;
  if (!Array.isArray(roots) || roots.length === 0) {
    throw new PathConfinementError({ code: 'PATH_OUTSIDE_ROOT', ...details, requestedPath: given });
  }
  const base = request.base ?? roots[0];
  const outside = (path?: string): PathConfinementError =>
    new PathConfinementError({
      code: 'PATH_OUTSIDE_ROOT',
      ...details,
      requestedPath: given,
      ...(path === undefined ? {} : { path }),
      ...(request.base !== undefined || roots.length === 1
        ? { rootName: base.name, rootPath: base.path }
        : { rootName: 'every root', rootPath: roots.map((root) => `${root.name}: ${root.path}`).join(', ') }),
    });
  const absolute = isAbsolute(given) || /^[A-Za-z]:[\\/]/.test(given) || given.startsWith('\\\\');
  if (absolute && request.allowAbsolute === false) throw outside();
  const lexical = isAbsolute(given) ? resolve(given) : resolve(base.path, given);
  // Without absolute paths, a relative one must stay in its base even before links are looked at (and the disk is not touched).
  if (request.allowAbsolute === false && !isPathInside(lexical, base.path) && !isPathInside(lexical, base.realPath)) throw outside();
  let real: string;
  try {
    real = await resolveRealPath(lexical, { followFinalLink: request.followFinalLink !== false });
  } catch (error) {
    const code = errorCode(error) === CHANGED ? 'PATH_CHANGED' : 'PATH_IO_FAILED';
    throw new PathConfinementError({ code, ...details, requestedPath: given, path: lexical, cause: error });
  }
  let chosen: ConfinementRoot | undefined;
  let baseHolds = false;
  for (const root of roots) {
    if (!isPathInside(real, root.realPath)) continue;
    if (root === base) baseHolds = true;
    if (chosen === undefined || root.realPath.length > chosen.realPath.length) chosen = root;
  }
  if (chosen === undefined || (request.base !== undefined && !baseHolds)) throw outside(real);
  if (request.access === 'write' && !chosen.writable) {
    throw new PathConfinementError({ code: 'PATH_READ_ONLY', ...details, requestedPath: given, path: real, rootName: chosen.name, rootPath: chosen.path });
  }
  const holder = chosen;
  const excluded = request.access === 'write' ? roots.filter((root) => !root.writable && root !== holder && isPathInside(root.realPath, holder.realPath)) : [];
  return Object.freeze({ ...details, requestedPath: given, path: real, root: holder, access: request.access, excluded: Object.freeze(excluded) });
}

/**
 * Opens a confined path as a regular file for reading, safely: the last name
 * is opened without following a link (`O_NOFOLLOW`) and without blocking
 * (`O_NONBLOCK`, so a FIFO never holds a libuv thread), the descriptor is
 * `fstat`ed, and where it really is (`/proc/self/fd`, else the device and
 * inode of the resolved path) must lie inside the root. A folder, FIFO,
 * socket or device is closed again and refused.
 *
 * With `followFinalLink: true` the path may name a link (not resolved by the
 * caller): it is followed when it stays inside the root.
 *
 * @throws {PathConfinementError} `PATH_NOT_FOUND`, `PATH_IS_DIRECTORY`,
 *   `PATH_NOT_REGULAR_FILE`, `PATH_OUTSIDE_ROOT`, `PATH_READ_ONLY`,
 *   `PATH_CHANGED`, `PATH_IO_FAILED`.
 */
export async function openConfinedFile(target: ConfinedPath, options: { readonly followFinalLink?: boolean } = {}): Promise<ConfinedFile> {
  let path = target.path;
  let handle: FileHandle;
  try {
    handle = await open(path, OPEN_FILE);
  } catch (error) {
    if (errorCode(error) !== 'ELOOP' || options.followFinalLink !== true) throw fromSystemError(error, target, path);
    // The name is a link: follow it by hand, then open what it leads to, again without following.
    path = await followLinkInside(target, path);
    try {
      handle = await open(path, OPEN_FILE);
    } catch (again) {
      throw fromSystemError(again, target, path);
    }
  }
  try {
    const stats = await handle.stat();
    const actual = await verifyDescriptor(handle, stats, target, path);
    checkRegularFile(stats, target, actual);
    return confinedFile(handle, actual, stats);
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw PathConfinementError.isInstance(error) ? error : fromSystemError(error, target, path);
  }
}

/** A regular file opened by {@link openConfinedEntry}: a bare descriptor, for callers that read through the callback API. */
export interface ConfinedDescriptor {
  /** Open for reading; the caller closes it (`fs.close`). */
  readonly fd: number;
  /** The entry's path (where a followed link led, when the entry was a link). */
  readonly path: string;
  /** `fstat` of the descriptor: a regular file. */
  readonly stats: Stats;
}

const openDescriptor = (path: string): Promise<number> =>
  new Promise((resolvePromise, reject) => openCallback(path, OPEN_FILE, (error, fd) => (error === null ? resolvePromise(fd) : reject(error))));
const fstatDescriptor = (fd: number): Promise<Stats> =>
  new Promise((resolvePromise, reject) => fstatCallback(fd, (error, stats) => (error === null ? resolvePromise(stats) : reject(error))));
const closeDescriptor = (fd: number): Promise<void> => new Promise((resolvePromise) => closeCallback(fd, () => resolvePromise()));

/**
 * Opens the entry `name` of the folder `folder` as a regular file for
 * reading: `O_NOFOLLOW | O_NONBLOCK`, then `fstat`. Opened that way the file is
 * an entry of the folder (as its path resolves at that moment) by
 * construction, so no location check is needed — the cheap path for reading a
 * known file of many folders, such as each skill's `SKILL.md`. When the entry
 * is a link, it is followed only to a file inside the folder, and the
 * descriptor is then checked like {@link openConfinedFile} checks it. Returns
 * a bare descriptor (the callback API costs less per file than `FileHandle`);
 * the caller closes it.
 *
 * @throws {PathConfinementError} `PATH_INVALID` (a name with a separator),
 *   `PATH_NOT_FOUND`, `PATH_IS_DIRECTORY`, `PATH_NOT_REGULAR_FILE`,
 *   `PATH_OUTSIDE_ROOT` (a link that leads out), `PATH_CHANGED`, `PATH_IO_FAILED`.
 */
export async function openConfinedEntry(folder: string, name: string, details: ConfinementDetails = {}): Promise<ConfinedDescriptor> {
  const root: ConfinementRoot = { name: 'the folder', path: folder, realPath: folder, writable: false };
  if (typeof name !== 'string' || name.length === 0 || name === '.' || name === '..' || name.includes('/') || name.includes(sep) || name.includes('\0')) {
    throw refusal('PATH_INVALID', { ...detailsOf(details), root, path: folder }, folder);
  }
  let path = join(folder, name);
  let target: ConfinedPath = { ...detailsOf(details), root, path, requestedPath: name };
  let followed = false;
  let fd: number;
  try {
    fd = await openDescriptor(path);
  } catch (error) {
    if (errorCode(error) !== 'ELOOP') throw fromSystemError(error, target, path);
    // The entry is a link: resolve the folder, then follow the link only to a file inside it.
    target = { ...target, root: await resolveConfinementRoot({ name: 'the folder', path: folder }) };
    path = await followLinkInside(target, path);
    try {
      fd = await openDescriptor(path);
    } catch (again) {
      throw fromSystemError(again, target, path);
    }
    followed = true;
  }
  try {
    const stats = await fstatDescriptor(fd);
    const actual = followed ? await verifyDescriptor(fd, stats, target, path) : path;
    checkRegularFile(stats, target, actual);
    return { fd, path: actual, stats };
  } catch (error) {
    await closeDescriptor(fd);
    throw PathConfinementError.isInstance(error) ? error : fromSystemError(error, target, path);
  }
}

/**
 * Opens a confined path as a folder (`O_DIRECTORY | O_NOFOLLOW`), verifies
 * where the descriptor really is, and returns it as a {@link ConfinedDirectory}.
 *
 * @throws {PathConfinementError} `PATH_NOT_FOUND`, `PATH_NOT_DIRECTORY`,
 *   `PATH_OUTSIDE_ROOT`, `PATH_READ_ONLY`, `PATH_CHANGED`, `PATH_IO_FAILED`.
 */
export async function openConfinedDirectory(target: ConfinedPath): Promise<ConfinedDirectory> {
  return openDirectoryAt(target.path, target, { expected: 'inside' });
}

/**
 * Opens the folder holding a confined path, for changes to the path's entry
 * (write, create, delete): returns the verified folder and the entry's name.
 * The parent of a root that is a single file is allowed, for that one name only.
 *
 * @throws {PathConfinementError} As {@link openConfinedDirectory}; `PATH_OUTSIDE_ROOT`
 *   when the path is the root folder itself (its entry lies outside it).
 */
export async function openConfinedParent(target: ConfinedPath): Promise<{ readonly directory: ConfinedDirectory; readonly name: string }> {
  const name = basename(target.path);
  const parent = dirname(target.path);
  if (target.path === target.root.realPath) {
    const rootStats = await lstat(target.path).catch(() => undefined);
    if (rootStats?.isDirectory() === true || parent === target.path) throw refusal('PATH_OUTSIDE_ROOT', target, target.path);
    return { directory: await openDirectoryAt(parent, target, { expected: 'exactly', onlyName: name }), name };
  }
  return { directory: await openDirectoryAt(parent, target, { expected: 'inside' }), name };
}

interface DirectoryScope {
  /** `inside`: the folder must lie in the root; `exactly`: it must be this very path (the parent of a file root). */
  readonly expected: 'inside' | 'exactly';
  /** The one entry that may be touched (parent of a file root). */
  readonly onlyName?: string;
}

async function openDirectoryAt(path: string, target: ConfinedPath, scope: DirectoryScope): Promise<ConfinedDirectory> {
  let handle: FileHandle;
  try {
    handle = await open(path, OPEN_DIRECTORY);
  } catch (error) {
    throw await directoryOpenError(error, target, path, path);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isDirectory()) throw refusal('PATH_NOT_DIRECTORY', target, path, { fileType: fileTypeOf(stats) });
    const actual = scope.expected === 'exactly' ? await descriptorLocation(handle, stats, path) : await verifyDescriptor(handle, stats, target, path);
    if (scope.expected === 'exactly' && actual !== path) throw refusal('PATH_OUTSIDE_ROOT', target, actual ?? path, { viaDescriptor: true });
    return confinedDirectory(handle, actual ?? path, stats, target, scope.onlyName);
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw PathConfinementError.isInstance(error) ? error : fromSystemError(error, target, path);
  }
}

async function directoryOpenError(error: unknown, target: ConfinedPath, path: string, openedAt: string): Promise<PathConfinementError> {
  const code = errorCode(error);
  if (code === 'ENOTDIR' || code === 'ELOOP') {
    // O_NOFOLLOW fails with ELOOP on a link; a folder found now means the entry changed since the open failed.
    const stats = await lstat(openedAt).catch(() => undefined);
    if (stats !== undefined && !stats.isSymbolicLink() && !stats.isDirectory()) {
      return refusal('PATH_NOT_DIRECTORY', target, path, { fileType: fileTypeOf(stats) });
    }
    if (stats !== undefined) return refusal('PATH_CHANGED', target, path, { cause: error });
  }
  return fromSystemError(error, target, path);
}

function confinedDirectory(handle: FileHandle, path: string, stats: Stats, target: ConfinedPath, onlyName: string | undefined): ConfinedDirectory {
  const proc = procFd();
  // Entries are named through the open descriptor: the kernel looks the name up in the verified folder, whatever its path leads to now.
  const anchor = proc === null ? path : `${proc}/${handle.fd}`;
  let closed: Promise<void> | undefined;
  let excludedIds: Promise<ReadonlySet<string>> | undefined;
  const entry = (name: string): string => {
    if (typeof name !== 'string' || name.length === 0 || name === '.' || name === '..' || name.includes('/') || name.includes(sep) || name.includes('\0')) {
      throw refusal('PATH_INVALID', target, join(path, String(name)));
    }
    if (onlyName !== undefined && name !== onlyName) throw refusal('PATH_OUTSIDE_ROOT', target, join(path, name));
    return `${anchor}/${name}`;
  };
  const checkExcluded = async (childStats: Stats, childPath: string): Promise<void> => {
    if (target.access !== 'write' || (target.excluded?.length ?? 0) === 0) return;
    excludedIds ??= identitiesOf(target.excluded ?? []);
    if ((await excludedIds).has(identity(childStats))) {
      const nested = target.excluded?.find((root) => isPathInside(childPath, root.realPath));
      throw new PathConfinementError({
        code: 'PATH_READ_ONLY',
        ...detailsOf(target),
        path: childPath,
        ...(nested === undefined ? {} : { rootName: nested.name, rootPath: nested.path }),
      });
    }
  };
  const wrap = async <T>(name: string, operation: (at: string) => Promise<T>): Promise<T> => {
    const at = entry(name);
    try {
      return await operation(at);
    } catch (error) {
      throw PathConfinementError.isInstance(error) ? error : fromSystemError(error, target, join(path, name));
    }
  };
  const directory: ConfinedDirectory = {
    path,
    stats,
    root: target.root,
    childPath: (name) => join(path, name),
    list: (options) => opendir(anchor, { bufferSize: options?.bufferSize ?? 256 }),
    lstat: (name) =>
      wrap(name, (at) =>
        lstat(at).catch((error: unknown) => {
          if (errorCode(error) === 'ENOENT') return undefined;
          throw error;
        }),
      ),
    readLink: (name) => wrap(name, (at) => readlink(at)),
    openFile: (name) =>
      wrap(name, async (at) => {
        const childPath = join(path, name);
        const child = await open(at, OPEN_FILE);
        try {
          const childStats = await child.stat();
          const actual = proc === null ? await verifyDescriptor(child, childStats, target, childPath) : childPath;
          checkRegularFile(childStats, target, actual);
          await checkExcluded(childStats, actual);
          return confinedFile(child, actual, childStats);
        } catch (error) {
          await child.close().catch(() => undefined);
          throw error;
        }
      }),
    openDirectory: (name) =>
      wrap(name, async (at) => {
        const childPath = join(path, name);
        let child: FileHandle;
        try {
          child = await open(at, OPEN_DIRECTORY);
        } catch (error) {
          throw await directoryOpenError(error, target, childPath, at);
        }
        try {
          const childStats = await child.stat();
          if (!childStats.isDirectory()) throw refusal('PATH_NOT_DIRECTORY', target, childPath, { fileType: fileTypeOf(childStats) });
          const actual = proc === null ? await verifyDescriptor(child, childStats, target, childPath) : childPath;
          await checkExcluded(childStats, actual);
          return confinedDirectory(child, actual, childStats, { ...target, path: actual }, undefined);
        } catch (error) {
          await child.close().catch(() => undefined);
          throw error;
        }
      }),
    makeDirectory: (name, mode) => wrap(name, async (at) => void (await mkdir(at, mode))),
    writeFile: (name, content, options = {}) => wrap(name, (at) => writeThroughTemporary(anchor, at, name, path, content, options, target)),
    remove: (name) =>
      wrap(name, async (at) => {
        const current = await lstat(at);
        if (current.isDirectory()) throw refusal('PATH_IS_DIRECTORY', target, join(path, name));
        await unlink(at);
      }),
    removeDirectory: (name) =>
      wrap(name, async (at) => {
        const current = await lstat(at);
        if (!current.isDirectory()) throw refusal('PATH_NOT_DIRECTORY', target, join(path, name), { fileType: fileTypeOf(current) });
        await checkExcluded(current, join(path, name));
        await rmdir(at);
      }),
    symlink: (linkTarget, name) => wrap(name, async (at) => void (await symlink(linkTarget, at))),
    chmod: (name, mode) =>
      wrap(name, async (at) => {
        // chmod(2) follows links; the open below does not, and fchmod acts on what was opened.
        const child = await open(at, OPEN_FILE);
        try {
          const childStats = await child.stat();
          if (!childStats.isFile() && !childStats.isDirectory()) {
            throw refusal('PATH_NOT_REGULAR_FILE', target, join(path, name), { fileType: fileTypeOf(childStats) });
          }
          await child.chmod(mode);
        } finally {
          await child.close();
        }
      }),
    close: () => (closed ??= handle.close()),
  };
  return directory;
}

async function writeThroughTemporary(
  anchor: string,
  at: string,
  name: string,
  folder: string,
  content: ConfinedContent,
  options: ConfinedWriteOptions,
  target: ConfinedPath,
): Promise<ConfinedWriteResult> {
  const finalPath = join(folder, name);
  const current = await lstat(at).catch((error: unknown) => {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  });
  if (current !== undefined) {
    if (options.exclusive === true) throw refusal('PATH_ALREADY_EXISTS', target, finalPath);
    if (current.isDirectory()) throw refusal('PATH_IS_DIRECTORY', target, finalPath);
    if (current.isSymbolicLink()) throw refusal('PATH_CHANGED', target, finalPath);
    if (!current.isFile()) throw refusal('PATH_NOT_REGULAR_FILE', target, finalPath, { fileType: fileTypeOf(current) });
    if (current.nlink > 1 && options.allowHardLinks !== true) throw refusal('PATH_HARD_LINKED', target, finalPath, { linkCount: current.nlink });
  }
  const mode = options.mode ?? (current === undefined ? undefined : current.mode & 0o7777);
  const temporaryName = `.${name.slice(0, 48)}.${randomBytes(6).toString('hex')}.tmp`;
  const temporary = `${anchor}/${temporaryName}`;
  const handle = await open(temporary, CREATE_TEMPORARY, mode === undefined ? 0o666 : 0o600);
  let placed = false;
  try {
    try {
      if (typeof content === 'function') await content(handle);
      else await handle.writeFile(content);
      if (mode !== undefined) await handle.chmod(mode);
    } finally {
      await handle.close();
    }
    if (options.exclusive === true) {
      // link(2) fails when the name exists, where rename(2) would replace it.
      await link(temporary, at);
      placed = true;
      await unlink(temporary);
    } else {
      await rename(temporary, at);
      placed = true;
    }
  } catch (error) {
    if (!placed || options.exclusive === true) await unlink(temporary).catch(() => undefined);
    if (errorCode(error) === 'EEXIST') throw refusal('PATH_ALREADY_EXISTS', target, finalPath, { cause: error });
    throw error;
  }
  return { created: current === undefined, path: finalPath };
}

function confinedFile(handle: FileHandle, path: string, stats: Stats): ConfinedFile {
  let closed: Promise<void> | undefined;
  return { handle, path, stats, close: () => (closed ??= handle.close()) };
}

function checkRegularFile(stats: Stats, target: ConfinedPath, path: string): void {
  if (stats.isFile()) return;
  if (stats.isDirectory()) throw refusal('PATH_IS_DIRECTORY', target, path);
  throw refusal('PATH_NOT_REGULAR_FILE', target, path, { fileType: fileTypeOf(stats) });
}

/** Where an open descriptor really is, or `undefined` when that cannot be told (no `/proc`, and the name now leads elsewhere). */
async function descriptorLocation(descriptor: FileHandle | number, stats: Stats, openedPath: string): Promise<string | undefined> {
  const proc = procFd();
  if (proc !== null) {
    const location = await readlink(`${proc}/${typeof descriptor === 'number' ? descriptor : descriptor.fd}`);
    // A file removed after it was opened reads as "<path> (deleted)".
    return stats.nlink === 0 && location.endsWith(' (deleted)') ? location.slice(0, -' (deleted)'.length) : location;
  }
  // Without /proc: the name must still lead to the very file that was opened.
  const real = await realpath(openedPath).catch(() => undefined);
  if (real === undefined) return undefined;
  const now = await lstat(real).catch(() => undefined);
  return now !== undefined && now.dev === stats.dev && now.ino === stats.ino ? real : undefined;
}

async function verifyDescriptor(descriptor: FileHandle | number, stats: Stats, target: ConfinedPath, openedPath: string): Promise<string> {
  const actual = await descriptorLocation(descriptor, stats, openedPath);
  if (actual === undefined || !isPathInside(actual, target.root.realPath)) {
    throw refusal('PATH_OUTSIDE_ROOT', target, actual ?? openedPath, { viaDescriptor: true });
  }
  if (target.access === 'write') {
    const nested = target.excluded?.find((root) => isPathInside(actual, root.realPath));
    if (nested !== undefined) {
      throw new PathConfinementError({ code: 'PATH_READ_ONLY', ...detailsOf(target), path: actual, rootName: nested.name, rootPath: nested.path });
    }
  }
  return actual;
}

async function identitiesOf(roots: readonly ConfinementRoot[]): Promise<ReadonlySet<string>> {
  const ids = new Set<string>();
  for (const root of roots) {
    const stats = await lstat(root.realPath).catch(() => undefined);
    if (stats !== undefined) ids.add(identity(stats));
  }
  return ids;
}

function identity(stats: Stats): string {
  return `${stats.dev}:${stats.ino}`;
}

/**
 * What kind of entry `stats` describes, in words for messages.
 *
 * @throws Never.
 */
export function fileTypeOf(stats: Stats): ConfinedFileType {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice()) return 'character device';
  if (stats.isBlockDevice()) return 'block device';
  return 'unknown';
}

function detailsOf(details: ConfinementDetails): ConfinementDetails {
  return {
    ...(details.toolName === undefined ? {} : { toolName: details.toolName }),
    ...(details.planId === undefined ? {} : { planId: details.planId }),
  };
}

/**
 * Where the link at `path` leads, resolved by hand: refused when it leads out
 * of `target`'s root (`PATH_OUTSIDE_ROOT`, naming the resolved path) or is a
 * loop of links (`PATH_IO_FAILED`). The caller opens the result, again
 * without following links.
 */
async function followLinkInside(target: ConfinedPath, path: string): Promise<string> {
  let resolved: string;
  try {
    resolved = await realpath(path);
  } catch (resolveError) {
    // Here ELOOP is a loop of links, not a link that appeared after a check.
    if (errorCode(resolveError) === 'ELOOP') throw refusal('PATH_IO_FAILED', target, path, { cause: resolveError });
    throw fromSystemError(resolveError, target, path);
  }
  if (!isPathInside(resolved, target.root.realPath)) throw refusal('PATH_OUTSIDE_ROOT', target, resolved);
  return resolved;
}

function refusal(
  code: PathConfinementErrorOptions['code'],
  target: ConfinedPath,
  path: string,
  extra: Omit<PathConfinementErrorOptions, 'code'> = {},
): PathConfinementError {
  return new PathConfinementError({
    code,
    ...detailsOf(target),
    ...(target.requestedPath === undefined ? {} : { requestedPath: target.requestedPath }),
    path,
    rootName: target.root.name,
    rootPath: target.root.path,
    ...extra,
  });
}

function fromSystemError(error: unknown, target: ConfinedPath, path: string): PathConfinementError {
  if (PathConfinementError.isInstance(error)) return error;
  switch (errorCode(error)) {
    case 'ENOENT':
      return refusal('PATH_NOT_FOUND', target, path, { cause: error });
    case 'ENOTDIR':
      return refusal('PATH_NOT_FOUND', target, path, { cause: error });
    case 'EISDIR':
      return refusal('PATH_IS_DIRECTORY', target, path, { cause: error });
    case 'EEXIST':
      return refusal('PATH_ALREADY_EXISTS', target, path, { cause: error });
    case 'ELOOP':
      return refusal('PATH_CHANGED', target, path, { cause: error });
    case 'ENXIO':
      return refusal('PATH_NOT_REGULAR_FILE', target, path, { cause: error });
    default:
      return refusal('PATH_IO_FAILED', target, path, { cause: error });
  }
}

function errorCode(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The {@link ConfinementRoot}s of a plan's bound resources that have a
 * `file:` URI, in order: named by resource id, writable when bound with
 * `access: 'write'`, resolved once. Other resources are left out.
 *
 * @throws {ContextValidationError} When a `file:` URI names no local path (see `resourcePath`).
 * @throws {PathConfinementError} `PATH_IO_FAILED` when a resource's path cannot be resolved.
 */
export async function confinementRootsOf(resources: readonly BoundResource[]): Promise<ConfinementRoot[]> {
  const roots: ConfinementRoot[] = [];
  for (const resource of resources) {
    if (!resource.uri.toLowerCase().startsWith('file:')) continue;
    roots.push(
      await resolveConfinementRoot({ name: `resource "${resource.id}"`, path: resourcePath(resource), writable: resource.access === 'write', resource }),
    );
  }
  return roots;
}
