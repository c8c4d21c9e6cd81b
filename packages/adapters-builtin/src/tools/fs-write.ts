import { lstat } from 'node:fs/promises';
import { toolSuccess } from '@ca/tool-lifecycle';
import { schema, type BuiltinToolSpec, type ToolCall } from '../builtin-tool';
import { openParentFolder } from '../parent-folder';
import { fileChange } from '../undo-store';
import { PATH_PROPERTY, RESOURCE_PROPERTY } from './common';

/** `builtin.fs.write`: create or overwrite a file, recording undo data. */
export const writeTool: BuiltinToolSpec = {
  name: 'builtin.fs.write',
  description:
    'Create a file, or replace the whole content of an existing one, inside a resource bound with write access. Missing parent folders are created unless createDirectories is false; ' +
    'set overwrite to false to refuse replacing an existing file. Content is UTF-8 text, or base64 for binary data with encoding "base64". ' +
    'To change part of a file use builtin.fs.edit instead. Every change can be rolled back.',
  capability: { writes: true, checkpointable: true, idempotent: true, destructive: true, openWorld: false },
  keepsUndoData: true,
  inputSchema: schema({
    type: 'object',
    properties: {
      path: PATH_PROPERTY,
      resource: RESOURCE_PROPERTY,
      content: { type: 'string', description: 'The complete new content.' },
      encoding: { enum: ['utf8', 'base64'], default: 'utf8' },
      createDirectories: { type: 'boolean', default: true, description: 'Create missing parent folders.' },
      overwrite: { type: 'boolean', default: true, description: 'Replace an existing file.' },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  }),
  outputSchema: schema({
    type: 'object',
    properties: {
      path: { type: 'string' },
      resource: { type: 'string' },
      created: { type: 'boolean', description: 'The file did not exist before.' },
      bytesWritten: { type: 'integer', minimum: 0 },
      createdDirectories: { type: 'array', items: { type: 'string' } },
    },
    required: ['path', 'resource', 'created', 'bytesWritten', 'createdDirectories'],
    additionalProperties: false,
  }),
  async run(input, call) {
    if (typeof input['content'] !== 'string') throw call.fail('BUILTIN_INVALID_INPUT', 'needs "content" as a string.');
    const data = Buffer.from(input['content'], input['encoding'] === 'base64' ? 'base64' : 'utf8');
    const guarded = await call.guard({ path: input['path'] as string, resource: input['resource'] as string | undefined, access: 'write' });
    const overwrite = input['overwrite'] !== false;
    if (guarded.path === guarded.root && (await lstat(guarded.path).catch(() => undefined))?.isDirectory() === true) {
      throw call.fail('BUILTIN_WRONG_TYPE', `cannot write "${guarded.path}": it is a folder (the root of resource "${guarded.resource.id}").`, guarded.path);
    }
    const { directory, name, createdDirectories } = await openParentFolder(guarded, call, { create: input['createDirectories'] !== false });
    try {
      const current = await directory.lstat(name);
      if (current?.isDirectory() === true) {
        throw call.fail('BUILTIN_WRONG_TYPE', `cannot write "${guarded.path}": it is a folder.`, guarded.path);
      }
      if (current !== undefined && !overwrite) {
        throw call.fail('BUILTIN_ALREADY_EXISTS', `did not write "${guarded.path}": it exists and overwrite is false.`, guarded.path);
      }
      const allowHardLinks = call.settings.files.allowHardLinkedWrites;
      if (current?.isFile() === true && current.nlink > 1 && !allowHardLinks) refuseHardLinked(call, guarded.path, current.nlink);
      const before = await call.undo.capture(call.planId, directory, name);
      call.checkCancelled();
      // Not interrupted once started (no signal): a half-written file would be worse than a late one.
      const { created } = await directory.writeFile(name, data, { exclusive: !overwrite, allowHardLinks });
      call.changes.push(
        fileChange(created ? 'create' : 'modify', guarded, before, `${created ? 'created' : 'replaced'} ${guarded.path} (${data.length} bytes)`),
      );
      return toolSuccess({
        path: guarded.path,
        resource: guarded.resource.id,
        created,
        bytesWritten: data.length,
        createdDirectories: [...createdDirectories],
      });
    } finally {
      await directory.close();
    }
  },
};

/** Refuses a write through a file with more than one link (`files.allowHardLinkedWrites` is off). */
export function refuseHardLinked(call: ToolCall, path: string, links: number): never {
  throw call.fail(
    'BUILTIN_HARD_LINKED_FILE',
    `refused to write "${path}": the file has ${links} hard links, so other names (perhaps outside the bound resources) share its content. ` +
      'Write to a new file instead, or set files.allowHardLinkedWrites in the adapter settings (the write then gives this name a new file; the other names keep the old content).',
    path,
  );
}
