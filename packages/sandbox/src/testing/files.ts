import { createHash } from 'node:crypto';
import { lstat, mkdtemp, readdir, readFile, readlink, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Temporary folders made by {@link makeTemporaryFolder}, removed by {@link removeTemporaryFolders}. */
const folders: string[] = [];

/** A new, real (symlink-resolved) temporary folder, removed by {@link removeTemporaryFolders}. */
export async function makeTemporaryFolder(label = 'ca-test-'): Promise<string> {
  const folder = await realpath(await mkdtemp(join(tmpdir(), label)));
  folders.push(folder);
  return folder;
}

/** Removes every folder made by {@link makeTemporaryFolder} (call it in `afterEach`). */
export async function removeTemporaryFolders(): Promise<void> {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
}

/**
 * Every entry under `root`, by relative path: its type, permission bits, and
 * the sha256 of a file's content or a link's target. Two snapshots are equal
 * when the trees are byte-identical (timestamps and owners aside): what a
 * test compares before a program runs and after a rollback.
 */
export async function snapshotTree(root: string): Promise<Record<string, string>> {
  const snapshot: Record<string, string> = {};
  const visit = async (folder: string, prefix: string): Promise<void> => {
    for (const name of (await readdir(folder)).sort()) {
      const path = join(folder, name);
      const relative = prefix === '' ? name : `${prefix}/${name}`;
      const stats = await lstat(path);
      const mode = (stats.mode & 0o7777).toString(8);
      if (stats.isSymbolicLink()) snapshot[relative] = `link ${await readlink(path)}`;
      else if (stats.isDirectory()) {
        snapshot[relative] = `dir ${mode}`;
        await visit(path, relative);
      } else
        snapshot[relative] = `file ${mode} ${createHash('sha256')
          .update(await readFile(path))
          .digest('hex')}`;
    }
  };
  await visit(root, '');
  return snapshot;
}
