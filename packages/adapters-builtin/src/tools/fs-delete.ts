import { isPathInside, openConfinedParent, type ConfinedDirectory } from '@ca/tool-context';
import { toolSuccess } from '@ca/tool-lifecycle';
import { schema, type BuiltinToolSpec, type ToolCall } from '../builtin-tool';
import type { GuardedPath } from '../resource-paths';
import { fileChange } from '../undo-store';
import { PATH_PROPERTY, RESOURCE_PROPERTY } from './common';

/** `builtin.fs.delete`: delete a file, a link or a folder, recording undo data for each entry. */
export const deleteTool: BuiltinToolSpec = {
  name: 'builtin.fs.delete',
  description:
    'Delete a file, a symbolic link (the link, not its target) or a folder inside a resource bound with write access. A folder that is not empty is deleted only with recursive: true. ' +
    'The root of a bound resource, and a folder holding another bound resource, are never deleted. Every deleted entry can be restored by rolling back.',
  capability: { writes: true, checkpointable: true, idempotent: false, destructive: true, openWorld: false },
  keepsUndoData: true,
  inputSchema: schema({
    type: 'object',
    properties: {
      path: PATH_PROPERTY,
      resource: RESOURCE_PROPERTY,
      recursive: { type: 'boolean', default: false, description: 'Delete a folder together with everything in it.' },
    },
    required: ['path'],
    additionalProperties: false,
  }),
  outputSchema: schema({
    type: 'object',
    properties: {
      path: { type: 'string' },
      resource: { type: 'string' },
      deleted: { type: 'integer', minimum: 1, description: 'Entries removed (files, links and folders).' },
    },
    required: ['path', 'resource', 'deleted'],
    additionalProperties: false,
  }),
  async run(input, call) {
    const guarded = await call.guard({
      path: input['path'] as string,
      resource: input['resource'] as string | undefined,
      access: 'write',
      followFinalLink: false,
    });
    if (guarded.path === guarded.root) {
      throw call.fail(
        'BUILTIN_INVALID_INPUT',
        `refuses to delete "${guarded.path}": it is the root of resource "${guarded.resource.id}". Delete what is inside it instead.`,
        guarded.path,
      );
    }
    refuseNestedRoots(guarded, call);
    const { directory: parent, name } = await openConfinedParent(guarded.confined);
    try {
      const stats = await parent.lstat(name);
      if (stats === undefined) {
        throw call.fail('BUILTIN_NOT_FOUND', `found nothing to delete at "${guarded.path}". Check the path (builtin.fs.list shows what exists).`, guarded.path);
      }
      let deleted: number;
      if (stats.isDirectory()) {
        const folder = await parent.openDirectory(name);
        try {
          const entries = await entryNames(folder);
          if (entries.length > 0 && input['recursive'] !== true) {
            throw call.fail(
              'BUILTIN_WRONG_TYPE',
              `did not delete "${guarded.path}": the folder is not empty; pass recursive: true to delete it with its content.`,
              guarded.path,
            );
          }
          deleted = await deleteFolder(parent, name, folder, entries, guarded, call);
        } finally {
          await folder.close();
        }
      } else {
        await deleteEntry(parent, name, guarded, call);
        deleted = 1;
      }
      return toolSuccess({ path: guarded.path, resource: guarded.resource.id, deleted });
    } finally {
      await parent.close();
    }
  },
};

/**
 * A recursive delete must not take another bound resource's root with it: a
 * read-only resource nested in the folder stays read-only, and a writable one
 * keeps its root (the root of a resource is never deleted). Refused before
 * anything is deleted; the walk also checks every folder it opens against
 * the read-only roots (device and inode), in case one is moved in meanwhile.
 */
function refuseNestedRoots(guarded: GuardedPath, call: ToolCall): void {
  const nested = guarded.roots.filter((root) => root.realPath !== guarded.root && isPathInside(root.realPath, guarded.path));
  if (nested.length === 0) return;
  const names = nested.map((root) => `"${root.resource?.id ?? root.name}" (${root.realPath})`).join(', ');
  const readOnly = nested.some((root) => !root.writable);
  throw call.fail(
    readOnly ? 'BUILTIN_RESOURCE_READ_ONLY' : 'BUILTIN_INVALID_INPUT',
    `refused to delete "${guarded.path}": it holds the root of bound resource ${names}${readOnly ? ', bound read-only' : ''}. Nothing was deleted; delete the other entries one by one, or unbind that resource.`,
    guarded.path,
  );
}

async function entryNames(folder: ConfinedDirectory): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of await folder.list()) names.push(entry.name);
  return names;
}

async function deleteEntry(parent: ConfinedDirectory, name: string, guarded: GuardedPath, call: ToolCall): Promise<void> {
  call.checkCancelled();
  const path = parent.childPath(name);
  const before = await call.undo.capture(call.planId, parent, name);
  await parent.remove(name);
  call.changes.push(fileChange('delete', { path, resource: guarded.resource }, before, `deleted ${path}`));
}

// Depth first, children before their folder, so that rollback (newest first) re-creates the folder before its children.
// Every folder is opened from its verified parent without following links, so a folder swapped for a link is never entered.
async function deleteFolder(
  parent: ConfinedDirectory,
  name: string,
  folder: ConfinedDirectory,
  entries: readonly string[],
  guarded: GuardedPath,
  call: ToolCall,
): Promise<number> {
  let deleted = 0;
  for (const entry of entries) {
    const stats = await folder.lstat(entry);
    if (stats === undefined) continue; // removed meanwhile
    if (stats.isDirectory()) {
      const child = await folder.openDirectory(entry);
      try {
        deleted += await deleteFolder(folder, entry, child, await entryNames(child), guarded, call);
      } finally {
        await child.close();
      }
    } else {
      await deleteEntry(folder, entry, guarded, call);
      deleted++;
    }
  }
  call.checkCancelled();
  const path = parent.childPath(name);
  const before = await call.undo.capture(call.planId, parent, name);
  await parent.removeDirectory(name);
  call.changes.push(fileChange('delete', { path, resource: guarded.resource }, before, `deleted folder ${path}`));
  return deleted + 1;
}
