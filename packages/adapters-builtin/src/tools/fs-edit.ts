import { openConfinedFile, openConfinedParent } from '@ca/tool-context';
import { toolSuccess } from '@ca/tool-lifecycle';
import { schema, type BuiltinToolSpec } from '../builtin-tool';
import { fileChange } from '../undo-store';
import { PATH_PROPERTY, RESOURCE_PROPERTY } from './common';
import { refuseHardLinked } from './fs-write';

/** `builtin.fs.edit`: exact string replacement in a text file. */
export const editTool: BuiltinToolSpec = {
  name: 'builtin.fs.edit',
  description:
    'Replace an exact piece of text in an existing UTF-8 file inside a resource bound with write access. oldString must match the file exactly, whitespace and line endings included, ' +
    'and must occur exactly once unless replaceAll is true; include a few surrounding lines to make it unique. Read the file first (builtin.fs.read) to copy the text. Every change can be rolled back.',
  capability: { writes: true, checkpointable: true, idempotent: false, destructive: true, openWorld: false },
  keepsUndoData: true,
  inputSchema: schema({
    type: 'object',
    properties: {
      path: PATH_PROPERTY,
      resource: RESOURCE_PROPERTY,
      oldString: { type: 'string', minLength: 1, description: 'The exact text to replace.' },
      newString: { type: 'string', description: 'The text to put in its place.' },
      replaceAll: { type: 'boolean', default: false, description: 'Replace every occurrence instead of exactly one.' },
    },
    required: ['path', 'oldString', 'newString'],
    additionalProperties: false,
  }),
  outputSchema: schema({
    type: 'object',
    properties: {
      path: { type: 'string' },
      resource: { type: 'string' },
      replacements: { type: 'integer', minimum: 1 },
    },
    required: ['path', 'resource', 'replacements'],
    additionalProperties: false,
  }),
  async run(input, call) {
    const oldString = input['oldString'];
    const newString = input['newString'];
    if (typeof oldString !== 'string' || oldString.length === 0 || typeof newString !== 'string') {
      throw call.fail('BUILTIN_INVALID_INPUT', 'needs a non-empty "oldString" and a "newString".');
    }
    const guarded = await call.guard({ path: input['path'] as string, resource: input['resource'] as string | undefined, access: 'write' });
    const file = await openConfinedFile(guarded.confined);
    let original: Buffer;
    try {
      const stats = file.stats;
      const allowHardLinks = call.settings.files.allowHardLinkedWrites;
      if (stats.nlink > 1 && !allowHardLinks) refuseHardLinked(call, guarded.path, stats.nlink);
      const maxBytes = call.settings.files.editMaxBytes;
      if (stats.size > maxBytes) {
        throw call.fail(
          'BUILTIN_TOO_LARGE',
          `will not edit "${guarded.path}": it has ${stats.size} bytes, more than the limit of ${maxBytes} (files.editMaxBytes). Raise the limit or rewrite the file with builtin.fs.write.`,
          guarded.path,
        );
      }
      original = await file.handle.readFile({ signal: call.ctx.cancellationToken.signal });
    } finally {
      await file.close();
    }
    const text = original.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(original)) {
      throw call.fail('BUILTIN_WRONG_TYPE', `cannot edit "${guarded.path}": it is not valid UTF-8 text.`, guarded.path);
    }
    let occurrences = 0;
    for (let at = text.indexOf(oldString); at !== -1; at = text.indexOf(oldString, at + oldString.length)) occurrences++;
    if (occurrences === 0) {
      throw call.fail(
        'BUILTIN_EDIT_NO_MATCH',
        `found no occurrence of oldString in "${guarded.path}". It must match exactly, including whitespace and line endings; read the file again and copy the text.`,
        guarded.path,
      );
    }
    if (occurrences > 1 && input['replaceAll'] !== true) {
      throw call.fail(
        'BUILTIN_EDIT_AMBIGUOUS',
        `found ${occurrences} occurrences of oldString in "${guarded.path}". Add surrounding lines to make it unique, or set replaceAll: true.`,
        guarded.path,
      );
    }
    const updated = input['replaceAll'] === true ? text.split(oldString).join(newString) : replaceOnce(text, oldString, newString);
    const { directory, name } = await openConfinedParent(guarded.confined);
    try {
      const before = await call.undo.captureContent(call.planId, name, file.stats.mode & 0o7777, original);
      call.checkCancelled();
      await directory.writeFile(name, Buffer.from(updated, 'utf8'), { allowHardLinks: call.settings.files.allowHardLinkedWrites });
      call.changes.push(fileChange('modify', guarded, before, `replaced ${occurrences} occurrence(s) in ${guarded.path}`));
    } finally {
      await directory.close();
    }
    return toolSuccess({ path: guarded.path, resource: guarded.resource.id, replacements: occurrences });
  },
};

function replaceOnce(text: string, search: string, replacement: string): string {
  const at = text.indexOf(search);
  return text.slice(0, at) + replacement + text.slice(at + search.length);
}
