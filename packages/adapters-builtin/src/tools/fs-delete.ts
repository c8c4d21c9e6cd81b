import { lstat, readdir, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { toolSuccess } from '@ca/tool-lifecycle';
import { schema, type BuiltinToolSpec, type ToolCall } from '../builtin-tool';
import type { GuardedPath } from '../path-guard';
import { fileChange } from '../undo-store';
import { PATH_PROPERTY, RESOURCE_PROPERTY } from './common';

/** `builtin.fs.delete`: delete a file, a link or a folder, recording undo data for each entry. */
export const deleteTool: BuiltinToolSpec = {
  name: 'builtin.fs.delete',
  description:
    'Delete a file, a symbolic link (the link, not its target) or a folder inside a resource bound with write access. A folder that is not empty is deleted only with recursive: true. ' +
    'The root of a bound resource is never deleted. Every deleted entry can be restored by rolling back.',
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
      throw call.fail('BUILTIN_INVALID_INPUT', `refuses to delete "${guarded.path}": it is the root of resource "${guarded.resource.id}". Delete what is inside it instead.`, guarded.path);
    }
    const stats = await lstat(guarded.path);
    let deleted: number;
    if (stats.isDirectory()) {
      const entries = await readdir(guarded.path);
      if (entries.length > 0 && input['recursive'] !== true) {
        throw call.fail('BUILTIN_WRONG_TYPE', `did not delete "${guarded.path}": the folder is not empty; pass recursive: true to delete it with its content.`, guarded.path);
      }
      deleted = await deleteFolder(guarded, call);
    } else {
      await deleteEntry(guarded, call);
      deleted = 1;
    }
    return toolSuccess({ path: guarded.path, resource: guarded.resource.id, deleted });
  },
};

async function deleteEntry(guarded: GuardedPath, call: ToolCall): Promise<void> {
  call.checkCancelled();
  const before = await call.undo.capture(call.planId, guarded.path);
  await unlink(guarded.path);
  call.changes.push(fileChange('delete', guarded, before, `deleted ${guarded.path}`));
}

// Depth first, children before their folder, so that rollback (newest first) re-creates the folder before its children.
async function deleteFolder(guarded: GuardedPath, call: ToolCall): Promise<number> {
  let deleted = 0;
  for (const name of await readdir(guarded.path)) {
    const child = { ...guarded, path: join(guarded.path, name) };
    const stats = await lstat(child.path);
    if (stats.isDirectory()) deleted += await deleteFolder(child, call);
    else {
      await deleteEntry(child, call);
      deleted++;
    }
  }
  call.checkCancelled();
  const before = await call.undo.capture(call.planId, guarded.path);
  await rmdir(guarded.path);
  call.changes.push(fileChange('delete', guarded, before, `deleted folder ${guarded.path}`));
  return deleted + 1;
}
