import { lstat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { openConfinedDirectory, openConfinedParent, type ConfinedDirectory } from '@ca/tool-context';
import type { ToolCall } from './builtin-tool';
import type { GuardedPath } from './resource-paths';
import { fileChange } from './undo-store';

/** The verified folder holding a guarded path, and the path's name in it. */
export interface ParentFolder {
  readonly directory: ConfinedDirectory;
  readonly name: string;
  /** Folders created on the way, outermost first. */
  readonly createdDirectories: readonly string[];
}

/**
 * Opens the folder that holds a guarded path, for a change to its entry.
 * Missing folders on the way are created one at a time inside the folder
 * opened before (never through a name that could have become a link), each
 * recorded as a `create` change; with `create: false` a missing folder is
 * `BUILTIN_NOT_FOUND`. Close the returned folder when done.
 */
export async function openParentFolder(guarded: GuardedPath, call: ToolCall, options: { readonly create: boolean }): Promise<ParentFolder> {
  const missing: string[] = [];
  let existing = dirname(guarded.path);
  // guarded.path has its existing part resolved, so the names below the nearest existing folder are plain names.
  while (existing !== guarded.root && existing !== dirname(existing) && (await lstat(existing).catch(() => undefined)) === undefined) {
    missing.unshift(basename(existing));
    existing = dirname(existing);
  }
  if (missing.length === 0) {
    const { directory, name } = await openConfinedParent(guarded.confined);
    return { directory, name, createdDirectories: [] };
  }
  if (!options.create) {
    const first = `${existing}/${missing[0]}`;
    throw call.fail('BUILTIN_NOT_FOUND', `cannot write "${guarded.path}": the folder "${first}" does not exist (createDirectories is false).`, first);
  }
  let directory = await openConfinedDirectory({ ...guarded.confined, path: existing });
  const createdDirectories: string[] = [];
  try {
    for (const name of missing) {
      call.checkCancelled();
      await directory.makeDirectory(name);
      const created = directory.childPath(name);
      createdDirectories.push(created);
      call.changes.push(fileChange('create', { path: created, resource: guarded.resource }, { type: 'absent' }, `created folder ${created}`));
      const next = await directory.openDirectory(name);
      await directory.close();
      directory = next;
    }
  } catch (error) {
    await directory.close();
    throw error;
  }
  return { directory, name: basename(guarded.path), createdDirectories };
}
