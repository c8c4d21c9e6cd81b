import { lstat, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { toolSuccess } from '@ca/tool-lifecycle';
import { schema, type BuiltinToolSpec, type ToolCall } from '../builtin-tool';
import type { GuardedPath } from '../path-guard';
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
    const before = await call.undo.capture(call.planId, guarded.path);
    if (before.type === 'directory') {
      throw call.fail('BUILTIN_WRONG_TYPE', `cannot write "${guarded.path}": it is a folder.`, guarded.path);
    }
    if (before.type !== 'absent' && input['overwrite'] === false) {
      throw call.fail('BUILTIN_ALREADY_EXISTS', `did not write "${guarded.path}": it exists and overwrite is false.`, guarded.path);
    }
    const createdDirectories = await createParents(guarded, input['createDirectories'] !== false, call);
    call.checkCancelled();
    // Not interrupted once started (no signal): a half-written file would be worse than a late one.
    await writeFile(guarded.path, data);
    const created = before.type === 'absent';
    call.changes.push(fileChange(created ? 'create' : 'modify', guarded, before, `${created ? 'created' : 'replaced'} ${guarded.path} (${data.length} bytes)`));
    return toolSuccess({ path: guarded.path, resource: guarded.resource.id, created, bytesWritten: data.length, createdDirectories });
  },
};

/**
 * Creates the missing parent folders of a guarded path, outermost first,
 * recording a change for each, and returns them.
 */
export async function createParents(guarded: GuardedPath, allowed: boolean, call: ToolCall): Promise<string[]> {
  const missing: string[] = [];
  for (let folder = dirname(guarded.path); folder !== dirname(folder); folder = dirname(folder)) {
    const stats = await lstat(folder).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (stats !== undefined) break;
    missing.unshift(folder);
  }
  if (missing.length === 0) return missing;
  if (!allowed) {
    throw call.fail('BUILTIN_NOT_FOUND', `cannot write "${guarded.path}": the folder "${missing[0]}" does not exist (createDirectories is false).`, missing[0]);
  }
  for (const folder of missing) {
    call.checkCancelled();
    await mkdir(folder);
    call.changes.push(fileChange('create', { ...guarded, path: folder }, { type: 'absent' }, `created folder ${folder}`));
  }
  return missing;
}
