import type { Dirent } from 'node:fs';
import { join } from 'node:path';
import { openConfinedDirectory, type ConfinedDirectory, type ConfinedPath } from '@ca/tool-context';

/** Kind of a directory entry (links are not followed). */
export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

/** One entry met by {@link walk}. */
export interface WalkEntry {
  /** Absolute path. */
  readonly path: string;
  /** Path relative to the walk's base, with `/` separators. */
  readonly relative: string;
  readonly type: EntryType;
  /** The verified folder holding the entry; open the entry through it (valid until the walk moves on). */
  readonly folder: ConfinedDirectory;
  /** The entry's name in `folder`. */
  readonly name: string;
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
 * Walks a confined folder tree depth first, streaming each folder, without
 * following symbolic links. Each folder is opened with the confinement
 * functions (no link at its last name, descriptor checked) and must be exactly
 * where the walk expects it: a folder swapped for a link, or moved, while the
 * walk runs is skipped. Only the folders still to visit are held in memory,
 * never the tree. Stops after `maxEntries` entries.
 */
export async function* walk(
  base: ConfinedPath,
  options: { readonly check: () => void; readonly maxEntries: number; readonly start?: string; readonly progress: WalkProgress },
): AsyncGenerator<WalkEntry> {
  const start = options.start ?? '';
  const pending: string[] = [start];
  while (pending.length > 0) {
    options.check();
    const relativeFolder = pending.pop() as string;
    const expected = relativeFolder === '' ? base.path : join(base.path, relativeFolder);
    let folder: ConfinedDirectory;
    try {
      folder = await openConfinedDirectory({ ...base, path: expected });
    } catch (error) {
      // A folder that vanished or cannot be read is skipped, not fatal to the walk (except the first).
      if (relativeFolder === start) throw error;
      continue;
    }
    try {
      if (folder.path !== expected) continue;
      for await (const entry of await folder.list()) {
        if (options.progress.visited >= options.maxEntries) {
          options.progress.stoppedAtLimit = true;
          return; // leaving the loops closes the listing and the folder
        }
        options.progress.visited++;
        const relative = relativeFolder === '' ? entry.name : `${relativeFolder}/${entry.name}`;
        const type = entryType(entry);
        if (type === 'directory') pending.push(relative);
        yield { path: join(base.path, relative), relative, type, folder, name: entry.name };
      }
    } finally {
      await folder.close();
    }
  }
}
