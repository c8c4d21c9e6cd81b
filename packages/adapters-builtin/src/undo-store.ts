import { randomUUID } from 'node:crypto';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { BoundResource, ChangeInput, ChangeKind, ConfinedDirectory } from '@ca/tool-context';

/** What was at a path before a built-in tool changed it. JSON-serialisable. */
export type BuiltinFileState =
  | { readonly type: 'absent' }
  | {
      readonly type: 'file';
      /** Permission bits (`stat.mode & 0o7777`). */
      readonly mode: number;
      readonly size: number;
      /** The previous content, base64, when at most `undo.inlineMaxBytes`. */
      readonly contentBase64?: string;
      /** A copy of the previous content in the plan's backup folder, for larger files. */
      readonly backupPath?: string;
    }
  | { readonly type: 'directory'; readonly mode: number }
  | { readonly type: 'symlink'; readonly linkTarget: string };

/** The `undo` of every change a built-in file tool records. JSON-serialisable. */
export interface BuiltinFileUndo {
  /** Marks undo data that `rollback()` understands. */
  readonly format: typeof UNDO_FORMAT;
  /** Absolute, resolved path that was changed. */
  readonly path: string;
  /** What to put back. */
  readonly before: BuiltinFileState;
}

/** Value of {@link BuiltinFileUndo.format}. */
export const UNDO_FORMAT = 'ca.builtin.file-undo/1';

/**
 * Captures previous states for undo. Small contents go inline (base64); larger
 * ones are copied in chunks through descriptors (never whole in memory) into one backup folder
 * per plan, created on first need and removed by {@link UndoStore.release}
 * when the plan's write tools are deactivated.
 */
export class UndoStore {
  private readonly folders = new Map<string, Promise<string>>();

  constructor(
    private readonly directory: string,
    private readonly inlineMaxBytes: number,
  ) {}

  /**
   * The state of the entry `name` of a confined folder now, ready to be put
   * back later. A file is read through a descriptor opened without following
   * links and without blocking; FIFOs, sockets and devices are refused
   * (`PATH_NOT_REGULAR_FILE`), since they can neither be read safely nor restored.
   */
  async capture(planId: string, directory: ConfinedDirectory, name: string): Promise<BuiltinFileState> {
    const stats = await directory.lstat(name);
    if (stats === undefined) return { type: 'absent' };
    const mode = stats.mode & 0o7777;
    if (stats.isSymbolicLink()) return { type: 'symlink', linkTarget: await directory.readLink(name) };
    if (stats.isDirectory()) return { type: 'directory', mode };
    const file = await directory.openFile(name);
    try {
      const size = file.stats.size;
      if (size <= this.inlineMaxBytes) {
        return { type: 'file', mode: file.stats.mode & 0o7777, size, contentBase64: (await file.handle.readFile()).toString('base64') };
      }
      const backupPath = await this.backup(planId, name, async (backup) => copyHandle(file.handle, backup));
      return { type: 'file', mode: file.stats.mode & 0o7777, size, backupPath };
    } finally {
      await file.close();
    }
  }

  /** The state of a file whose content the caller already holds (edit reads it anyway). */
  async captureContent(planId: string, name: string, mode: number, content: Buffer): Promise<BuiltinFileState> {
    if (content.length <= this.inlineMaxBytes) return { type: 'file', mode, size: content.length, contentBase64: content.toString('base64') };
    const backupPath = await this.backup(planId, name, (backup) => backup.writeFile(content));
    return { type: 'file', mode, size: content.length, backupPath };
  }

  private async backup(planId: string, name: string, write: (backup: FileHandle) => Promise<void>): Promise<string> {
    const backupPath = join(await this.folder(planId), `${randomUUID()}-${name.slice(0, 100)}`);
    const backup = await open(backupPath, 'wx', 0o600);
    try {
      await write(backup);
    } finally {
      await backup.close();
    }
    return backupPath;
  }

  /** Removes the plan's backup folder, if any. Never throws. */
  async release(planId: string): Promise<void> {
    const folder = this.folders.get(planId);
    if (folder === undefined) return;
    this.folders.delete(planId);
    try {
      await rm(await folder, { recursive: true, force: true });
    } catch {
      // Nothing was created, or it is already gone.
    }
  }

  private folder(planId: string): Promise<string> {
    let folder = this.folders.get(planId);
    if (folder === undefined) {
      const safe = planId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40);
      folder = mkdtemp(join(this.directory, `ca-builtin-undo-${safe}-`));
      this.folders.set(planId, folder);
      // A failed mkdtemp must not poison later attempts.
      folder.catch(() => this.folders.delete(planId));
    }
    return folder;
  }
}

/** A change with undo data for a path in a resource. */
export function fileChange(
  kind: ChangeKind,
  target: { readonly path: string; readonly resource: BoundResource },
  before: BuiltinFileState,
  summary: string,
): ChangeInput {
  const undo: BuiltinFileUndo = { format: UNDO_FORMAT, path: target.path, before };
  return { kind, target: target.path, resourceId: target.resource.id, summary, undo };
}

const COPY_CHUNK_BYTES = 64 * 1024;

/** Copies a file from one open handle to another in chunks, never the whole file in memory. */
export async function copyHandle(from: FileHandle, to: FileHandle): Promise<void> {
  const buffer = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
  for (let position = 0; ;) {
    const { bytesRead } = await from.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return;
    await to.write(buffer, 0, bytesRead);
    position += bytesRead;
  }
}
