import type { Dirent } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';

/** Kind of a directory entry (links are not followed). */
export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

/** One entry met by {@link walk}. */
export interface WalkEntry {
  /** Absolute path. */
  readonly path: string;
  /** Path relative to the walk's base, with `/` separators. */
  readonly relative: string;
  readonly type: EntryType;
}

/** Counters of a walk, updated as it goes. */
export interface WalkProgress {
  visited: number;
  /** The walk stopped at `maxEntries` before seeing everything. */
  stoppedAtLimit: boolean;
}

/** The type of a directory entry. */
export function entryType(entry: Dirent): EntryType {
  return entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : entry.isSymbolicLink() ? 'symlink' : 'other';
}

/**
 * Walks a folder tree depth first, streaming each folder with `fs.opendir`,
 * without following symbolic links. Only the folders still to visit are held
 * in memory, never the tree. Stops after `maxEntries` entries.
 */
export async function* walk(
  base: string,
  options: { readonly check: () => void; readonly maxEntries: number; readonly start?: string; readonly progress: WalkProgress },
): AsyncGenerator<WalkEntry> {
  const pending: string[] = [options.start ?? ''];
  while (pending.length > 0) {
    options.check();
    const relativeFolder = pending.pop() as string;
    const folder = relativeFolder === '' ? base : join(base, relativeFolder);
    let directory;
    try {
      directory = await opendir(folder, { bufferSize: 256 });
    } catch (error) {
      // A folder that vanished or cannot be read is skipped, not fatal to the walk (except the base).
      if (relativeFolder === (options.start ?? '')) throw error;
      continue;
    }
    for await (const entry of directory) {
      if (options.progress.visited >= options.maxEntries) {
        options.progress.stoppedAtLimit = true;
        return; // leaving the loop closes the directory

      }
      options.progress.visited++;
      const relative = relativeFolder === '' ? entry.name : `${relativeFolder}/${entry.name}`;
      const type = entryType(entry);
      if (type === 'directory') pending.push(relative);
      yield { path: join(base, relative), relative, type };
    }
  }
}
