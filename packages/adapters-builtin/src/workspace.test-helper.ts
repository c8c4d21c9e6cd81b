// Shared by the specs (excluded from the build): temporary folders, a strict
// runtime over the built-in source, and a byte-exact snapshot of a tree.
import { createHash } from 'node:crypto';
import { lstat, mkdtemp, readFile, readdir, readlink, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourceFromPath, type BoundResource, type ResourceAccess } from '@ca/tool-context';
import { ToolRuntime, type ToolRuntimeSettings } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import type { BuiltinAdapterSettings } from './builtin-adapter-settings';
import { createBuiltinAdapter } from './builtin-tool-source';

/** Temporary folders made by {@link makeTemporaryFolder}, removed by {@link removeTemporaryFolders}. */
const folders: string[] = [];

/** A new, real (symlink-resolved) temporary folder. */
export async function makeTemporaryFolder(label = 'ca-builtin-'): Promise<string> {
  const folder = await realpath(await mkdtemp(join(tmpdir(), label)));
  folders.push(folder);
  return folder;
}

/** Removes every folder made by {@link makeTemporaryFolder}. */
export async function removeTemporaryFolders(): Promise<void> {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
}

/** A file resource. */
export function folderResource(id: string, path: string, access: ResourceAccess = 'write'): BoundResource {
  return resourceFromPath({ id, path, access });
}

/** A runtime whose only source is the built-in one (logging to the runtime's logger), failing any output that does not match its schema. */
export function strictRuntime(
  settings: BuiltinAdapterSettings = {},
  runtimeSettings: Pick<ToolRuntimeSettings, 'approvalHandler'> = {},
): { runtime: ToolRuntime; logger: RecordingLogger } {
  const logger = new RecordingLogger();
  const runtime = new ToolRuntime({ sources: [createBuiltinAdapter({ logger, ...settings })], logger, options: { strictOutput: true }, ...runtimeSettings });
  return { runtime, logger };
}

/** Every entry under `root` with its type, permission bits and the sha256 of file contents or link targets. */
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

/** The failure code of a result, or `'ok'`. */
export function codeOf(result: { ok: boolean; error?: { code?: string } }): string | undefined {
  return result.ok ? 'ok' : result.error?.code;
}
