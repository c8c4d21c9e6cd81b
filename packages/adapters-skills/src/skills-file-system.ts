import { close, fstat, open, promises as fs, read } from 'node:fs';

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
  /** Opens a file for reading (like `fs.promises.open(path, 'r')`). */
  open(path: string): Promise<SkillsFileHandle>;
}

/**
 * The default {@link SkillsFileSystem}, on `node:fs`. Files are opened as
 * plain descriptors through the callback API, which costs much less per call
 * than `FileHandle` objects when discovery opens thousands of `SKILL.md` files.
 */
export const nodeSkillsFileSystem: SkillsFileSystem = Object.freeze({
  readdir: (path: string) => fs.readdir(path, { withFileTypes: true }),
  stat: (path: string) => fs.stat(path),
  realpath: (path: string) => fs.realpath(path),
  open: (path: string) =>
    new Promise<SkillsFileHandle>((resolve, reject) => {
      open(path, 'r', (error, descriptor) => (error === null ? resolve(descriptorHandle(descriptor)) : reject(error)));
    }),
});

function descriptorHandle(descriptor: number): SkillsFileHandle {
  let closed: Promise<void> | undefined;
  return {
    read: (buffer, offset, length, position) =>
      new Promise((resolve, reject) => {
        read(descriptor, buffer, offset, length, position, (error, bytesRead) => (error === null ? resolve({ bytesRead }) : reject(error)));
      }),
    stat: () =>
      new Promise((resolve, reject) => {
        fstat(descriptor, (error, stats) => (error === null ? resolve(stats) : reject(error)));
      }),
    close: () =>
      (closed ??= new Promise((resolve, reject) => {
        close(descriptor, (error) => (error === null ? resolve() : reject(error)));
      })),
  };
}

/** @internal The `code` of a Node file-system error, if any. */
export function errorCode(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** @internal The message of anything thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
