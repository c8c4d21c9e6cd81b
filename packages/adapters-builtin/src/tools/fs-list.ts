import { openConfinedDirectory } from '@ca/tool-context';
import { toolSuccess } from '@ca/tool-lifecycle';
import { schema, type BuiltinToolSpec } from '../builtin-tool';
import { entryType, type EntryType } from '../walk';
import { PATH_PROPERTY, RESOURCE_PROPERTY } from './common';

/** One entry of `builtin.fs.list`. */
export interface ListEntry {
  readonly name: string;
  readonly type: EntryType;
  /** Size in bytes, for files. */
  readonly size?: number;
}

/** `builtin.fs.list`: one folder's entries, a page at a time. */
export const listTool: BuiltinToolSpec = {
  name: 'builtin.fs.list',
  description:
    'List the entries of one folder inside the bound resources (not recursive; use builtin.fs.glob to search a tree). Returns names with their type (file, directory, symlink, other) and the size of files, ' +
    'in the order the file system gives them, at most limit per call. When nextCursor is present there are more; call again with cursor = nextCursor. Path defaults to the root of the resource.',
  capability: { writes: false, checkpointable: true, idempotent: true, openWorld: false },
  inputSchema: schema({
    type: 'object',
    properties: {
      path: { ...PATH_PROPERTY, default: '.' },
      resource: RESOURCE_PROPERTY,
      limit: { type: 'integer', minimum: 1, description: 'Most entries to return (capped by the adapter settings).' },
      cursor: { type: 'string', pattern: '^[0-9]+$', description: 'nextCursor of the previous page.' },
    },
    additionalProperties: false,
  }),
  outputSchema: schema({
    type: 'object',
    properties: {
      path: { type: 'string' },
      resource: { type: 'string' },
      entries: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            type: { enum: ['file', 'directory', 'symlink', 'other'] },
            size: { type: 'integer', minimum: 0 },
          },
          required: ['name', 'type'],
          additionalProperties: false,
        },
      },
      nextCursor: { type: 'string' },
      truncated: { type: 'boolean', description: 'More entries follow (see nextCursor).' },
    },
    required: ['path', 'resource', 'entries', 'truncated'],
    additionalProperties: false,
  }),
  async run(input, call) {
    const guarded = await call.guard({ path: input['path'] as string | undefined, resource: input['resource'] as string | undefined, access: 'read' });
    const maxEntries = call.settings.files.listMaxEntries;
    const limit = Math.min(typeof input['limit'] === 'number' ? input['limit'] : maxEntries, maxEntries);
    const skip = typeof input['cursor'] === 'string' ? Number.parseInt(input['cursor'], 10) || 0 : 0;
    const folder = await openConfinedDirectory(guarded.confined).catch((error: unknown) => {
      if ((error as { code?: unknown }).code === 'PATH_NOT_DIRECTORY') {
        throw call.fail('BUILTIN_WRONG_TYPE', `cannot list "${guarded.path}": it is not a folder; read it with builtin.fs.read.`, guarded.path, error);
      }
      throw error;
    });
    const entries: ListEntry[] = [];
    let seen = 0;
    let more = false;
    try {
      for await (const entry of await folder.list()) {
        if (seen++ < skip) continue;
        if (entries.length === limit) {
          more = true;
          break;
        }
        if (entries.length % 256 === 0) call.checkCancelled();
        const type = entryType(entry);
        const size = type === 'file' ? (await folder.lstat(entry.name).catch(() => undefined))?.size : undefined;
        entries.push(size === undefined ? { name: entry.name, type } : { name: entry.name, type, size });
      }
    } finally {
      await folder.close();
    }
    return toolSuccess({
      path: folder.path,
      resource: guarded.resource.id,
      entries,
      ...(more ? { nextCursor: String(skip + entries.length) } : {}),
      truncated: more,
    });
  },
};
