import picomatch from 'picomatch';
import { openConfinedDirectory } from '@ca/tool-context';
import { toolSuccess } from '@ca/tool-lifecycle';
import { schema, type BuiltinToolSpec } from '../builtin-tool';
import { walk, type WalkProgress } from '../walk';
import { PATH_PROPERTY, RESOURCE_PROPERTY } from './common';

/** `builtin.fs.glob`: paths matching a glob pattern under a folder, a page at a time. */
export const globTool: BuiltinToolSpec = {
  name: 'builtin.fs.glob',
  description:
    'Find files whose path matches a glob pattern (picomatch syntax: *, **, ?, [abc], {a,b}) under a folder inside the bound resources. The pattern is matched against paths relative to that folder, ' +
    'e.g. "**/*.ts" or "src/*.{js,json}". Returns absolute paths, at most limit per call; when nextCursor is present call again with cursor = nextCursor. Symbolic links are not followed; ' +
    'names starting with a dot match only with dot: true. Folders are returned too with includeDirectories: true.',
  capability: { writes: false, checkpointable: true, idempotent: true, openWorld: false },
  inputSchema: schema({
    type: 'object',
    properties: {
      pattern: { type: 'string', minLength: 1, description: 'Glob relative to path, e.g. "**/*.md".' },
      path: { ...PATH_PROPERTY, default: '.', description: 'Folder to search under; default the root of the resource.' },
      resource: RESOURCE_PROPERTY,
      dot: { type: 'boolean', default: false, description: 'Let * and ** match names starting with a dot.' },
      includeDirectories: { type: 'boolean', default: false },
      limit: { type: 'integer', minimum: 1, description: 'Most paths to return (capped by the adapter settings).' },
      cursor: { type: 'string', pattern: '^[0-9]+$', description: 'nextCursor of the previous page.' },
    },
    required: ['pattern'],
    additionalProperties: false,
  }),
  outputSchema: schema({
    type: 'object',
    properties: {
      base: { type: 'string' },
      resource: { type: 'string' },
      paths: { type: 'array', items: { type: 'string' } },
      nextCursor: { type: 'string' },
      truncated: { type: 'boolean', description: 'More matches may follow (see nextCursor), or the walk stopped at its entry limit.' },
      visitedEntries: { type: 'integer', minimum: 0 },
    },
    required: ['base', 'resource', 'paths', 'truncated', 'visitedEntries'],
    additionalProperties: false,
  }),
  async run(input, call) {
    const pattern = input['pattern'];
    if (typeof pattern !== 'string' || pattern.length === 0) throw call.fail('BUILTIN_INVALID_INPUT', 'needs a non-empty "pattern".');
    const guarded = await call.guard({ path: input['path'] as string | undefined, resource: input['resource'] as string | undefined, access: 'read' });
    const base = await openConfinedDirectory(guarded.confined).catch((error: unknown) => {
      if ((error as { code?: unknown }).code === 'PATH_NOT_DIRECTORY') {
        throw call.fail('BUILTIN_WRONG_TYPE', `cannot search under "${guarded.path}": it is not a folder.`, guarded.path, error);
      }
      throw error;
    });
    await base.close();
    const { globMaxResults, walkMaxEntries } = call.settings.files;
    const limit = Math.min(typeof input['limit'] === 'number' ? input['limit'] : globMaxResults, globMaxResults);
    const skip = typeof input['cursor'] === 'string' ? Number.parseInt(input['cursor'], 10) || 0 : 0;
    const isMatch = picomatch(pattern, { dot: input['dot'] === true });
    const includeDirectories = input['includeDirectories'] === true;
    const paths: string[] = [];
    const progress: WalkProgress = { visited: 0, stoppedAtLimit: false };
    let matched = 0;
    let more = false;
    for await (const entry of walk(guarded.confined, {
      check: () => call.checkCancelled(),
      maxEntries: walkMaxEntries,
      start: staticStart(pattern),
      progress,
    })) {
      if (entry.type === 'directory' && !includeDirectories) continue;
      if (!isMatch(entry.relative)) continue;
      if (matched++ < skip) continue;
      if (paths.length === limit) {
        more = true;
        break;
      }
      paths.push(entry.path);
    }
    return toolSuccess({
      base: guarded.path,
      resource: guarded.resource.id,
      paths,
      ...(more ? { nextCursor: String(skip + paths.length) } : {}),
      truncated: more || progress.stoppedAtLimit,
      visitedEntries: progress.visited,
    });
  },
};

// The literal folder a pattern starts with ("src/lib/**/*.ts" → "src/lib"), so the walk skips the rest of the tree.
function staticStart(pattern: string): string | undefined {
  const { base, isGlob } = picomatch.scan(pattern);
  if (!isGlob || base === '' || base.startsWith('/') || base.split('/').some((segment) => segment === '..' || segment === '.')) {
    return undefined;
  }
  return base;
}
