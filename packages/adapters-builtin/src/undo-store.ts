import { randomUUID } from 'node:crypto';
import { copyFile, lstat, mkdtemp, readFile, readlink, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { ChangeInput, ChangeKind } from '@ca/tool-context';
import type { GuardedPath } from './path-guard';

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
 * ones are copied (`fs.copyFile`, never through memory) into one backup folder
 * per plan, created on first need and removed by {@link UndoStore.release}
 * when the plan's write tools are deactivated.
 */
export class UndoStore {
  private readonly folders = new Map<string, Promise<string>>();

  constructor(
    private readonly directory: string,
    private readonly inlineMaxBytes: number,
  ) {}

  /** The state of `path` now, ready to be put back later. */
  async capture(planId: string, path: string): Promise<BuiltinFileState> {
    const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (stats === undefined) return { type: 'absent' };
    const mode = stats.mode & 0o7777;
    if (stats.isSymbolicLink()) return { type: 'symlink', linkTarget: await readlink(path) };
    if (stats.isDirectory()) return { type: 'directory', mode };
    if (stats.size <= this.inlineMaxBytes) {
      return { type: 'file', mode, size: stats.size, contentBase64: (await readFile(path)).toString('base64') };
    }
    const backupPath = join(await this.folder(planId), `${randomUUID()}-${basename(path)}`);
    await copyFile(path, backupPath);
    return { type: 'file', mode, size: stats.size, backupPath };
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

/** A change with undo data for a guarded path. */
export function fileChange(kind: ChangeKind, guarded: GuardedPath, before: BuiltinFileState, summary: string): ChangeInput {
  const undo: BuiltinFileUndo = { format: UNDO_FORMAT, path: guarded.path, before };
  return { kind, target: guarded.path, resourceId: guarded.resource.id, summary, undo };
}
