import { close, fstat, promises as fs, read } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { openConfinedEntry, openConfinedFile, resolveConfinementRoot } from '@ca/tool-context';

/** One entry of {@link SkillsFileSystem.readdir}, shaped like `fs.Dirent`. */
export interface SkillsDirectoryEntry {
  readonly name: string;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/** What {@link SkillsFileSystem.stat} and {@link SkillsFileHandle.stat} return, shaped like `fs.Stats`. */
export interface SkillsFileStats {
  readonly size: number;
  readonly mode: number;
  isFile(): boolean;
  isDirectory(): boolean;
}

/** An open file, shaped like `fs.promises.FileHandle`. */
export interface SkillsFileHandle {
  /** Reads up to `length` bytes at `position` into `buffer` at `offset`. */
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ readonly bytesRead: number }>;
  stat(): Promise<SkillsFileStats>;
  close(): Promise<void>;
}

/**
 * The file-system operations the adapter uses, all asynchronous and
 * read-only. Inject your own (e.g. one that counts bytes read, or serves a
 * virtual tree) through `SkillsAdapterSettings.fileSystem`; errors must carry
 * Node's `code` (`ENOENT`, `ENOTDIR`, …).
 */
export interface SkillsFileSystem {
  /** The entries of a folder (like `fs.promises.readdir(path, { withFileTypes: true })`). */
  readdir(path: string): Promise<readonly SkillsDirectoryEntry[]>;
  /** Follows symlinks (like `fs.promises.stat`). */
  stat(path: string): Promise<SkillsFileStats>;
  /** Resolves every symlink (like `fs.promises.realpath`). */
  realpath(path: string): Promise<string>;
  /**
   * Opens `path`, a regular file inside the folder `root`, for reading. It
   * must not block (a FIFO), must refuse anything that is not a regular file,
   * and must refuse a file whose real location is outside `root` (a link that
   * leads out, a folder swapped for a link while it is opened); a link that
   * stays inside `root` is followed. The default does this with
   * `openConfinedFile` of `@ca/tool-context`, which checks the open
   * descriptor and rejects with a `PathConfinementError` (`PATH_NOT_FOUND`,
   * `PATH_IS_DIRECTORY`, `PATH_NOT_REGULAR_FILE`, `PATH_OUTSIDE_ROOT`, …).
   * An injected implementation takes these checks over.
   */
  open(path: string, root: string): Promise<SkillsFileHandle>;
}

/**
 * The default {@link SkillsFileSystem}, on `node:fs`. Files are opened through
 * the confinement functions of `@ca/tool-context`: without following the last
 * name, without blocking, checked to be regular files that really lie inside
 * the given folder.
 */
export const nodeSkillsFileSystem: SkillsFileSystem = Object.freeze({
  readdir: (path: string) => fs.readdir(path, { withFileTypes: true }),
  stat: (path: string) => fs.stat(path),
  realpath: (path: string) => fs.realpath(path),
  open: async (path: string, root?: string): Promise<SkillsFileHandle> => {
    // A caller written before `root` existed (a wrapper passing only the path) still gets every check, confined to the file's own folder.
    const folder = root === undefined ? dirname(path) : resolve(root);
    if (dirname(path) === folder) {
      // An entry of the folder itself (each SKILL.md) needs no location check, and a bare descriptor costs less than a
      // FileHandle: both keep discovery of thousands of skills cheap.
      return descriptorHandle((await openConfinedEntry(folder, basename(path))).fd);
    }
    const file = await openConfinedFile({ root: await resolveConfinementRoot({ name: 'the skill folder', path: folder }), path }, { followFinalLink: true });
    return {
      read: (buffer, offset, length, position) => file.handle.read(buffer, offset, length, position),
      stat: () => file.handle.stat(),
      close: () => file.close(),
    };
  },
});

function descriptorHandle(descriptor: number): SkillsFileHandle {
  let closed: Promise<void> | undefined;
  return {
    read: (buffer, offset, length, position) =>
      new Promise((resolvePromise, reject) => {
        read(descriptor, buffer, offset, length, position, (error, bytesRead) => (error === null ? resolvePromise({ bytesRead }) : reject(error)));
      }),
    stat: () =>
      new Promise((resolvePromise, reject) => {
        fstat(descriptor, (error, stats) => (error === null ? resolvePromise(stats) : reject(error)));
      }),
    close: () =>
      (closed ??= new Promise((resolvePromise, reject) => {
        close(descriptor, (error) => (error === null ? resolvePromise() : reject(error)));
      })),
  };
}

/** @internal The `code` of a Node file-system error, if any. */
export function errorCode(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}
