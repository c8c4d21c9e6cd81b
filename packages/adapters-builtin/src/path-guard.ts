import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { resourcePath, type BoundResource, type ToolExecutionContext } from '@ca/tool-context';
import { BuiltinToolError } from './builtin-tool-error';

/** A path a tool may use, after confinement. */
export interface GuardedPath {
  /** Absolute path with every symbolic link resolved (for a missing target: its nearest existing parent resolved). */
  readonly path: string;
  /** The most specific bound resource that holds the path; it decides the access. */
  readonly resource: BoundResource;
  /** The resolved root of that resource. */
  readonly root: string;
}

/** What a tool asks of {@link guardPath}. */
export interface GuardRequest {
  readonly toolName: string;
  /** The path as given; relative paths resolve against the chosen resource. Default `'.'`. */
  readonly path?: string;
  /** Id of the resource the path belongs to; default the first file resource. */
  readonly resource?: string;
  /** `'write'` refuses paths in a resource bound with `access: 'read'`. */
  readonly access: 'read' | 'write';
  /**
   * When `false`, a final symbolic link is not followed: the path names the
   * link itself (used by delete, which removes a link, not its target).
   */
  readonly followFinalLink?: boolean;
}

interface FileRoot {
  readonly resource: BoundResource;
  readonly lexical: string;
  readonly real: string;
}

const MAX_LINK_HOPS = 40;

/**
 * Resolves a tool's path against the plan's bound resources and refuses
 * anything outside them: `..` that climbs out, absolute paths elsewhere,
 * symbolic links (also dangling ones, and links in a missing target's
 * parents) that lead out, and writes to a read-only resource.
 *
 * @throws {BuiltinToolError} `BUILTIN_NO_RESOURCE`, `BUILTIN_INVALID_INPUT`,
 *   `BUILTIN_PATH_OUTSIDE_RESOURCES`, `BUILTIN_RESOURCE_READ_ONLY`, `BUILTIN_IO_FAILED`.
 */
export async function guardPath(ctx: ToolExecutionContext, request: GuardRequest): Promise<GuardedPath> {
  const { toolName } = request;
  const planId = ctx.planId;
  const where = `Tool "${toolName}" in plan "${planId}"`;
  const given = request.path ?? '.';
  if (typeof given !== 'string' || given.includes('\0')) {
    throw new BuiltinToolError({ code: 'BUILTIN_INVALID_INPUT', toolName, planId, message: `${where} got a path that is not a string or contains a NUL byte; pass a plain path.` });
  }
  const roots = await fileRoots(ctx, toolName);
  if (roots.length === 0) {
    throw new BuiltinToolError({
      code: 'BUILTIN_NO_RESOURCE',
      toolName,
      planId,
      message: `${where} has no file resource to work in: the plan binds no resource with a file: URI. Bind one with resourceFromPath({ id, path, access }).`,
    });
  }
  let base = roots[0];
  if (request.resource !== undefined) {
    const named = roots.find((root) => root.resource.id === request.resource);
    if (named === undefined) {
      const known = roots.map((root) => `"${root.resource.id}"`).join(', ');
      throw new BuiltinToolError({
        code: 'BUILTIN_NO_RESOURCE',
        toolName,
        planId,
        message: `${where} was asked for resource "${request.resource}", which is not a file resource of the plan; use one of ${known}.`,
      });
    }
    base = named;
  }
  const lexical = isAbsolute(given) ? resolve(given) : resolve(base.lexical, given);
  let real: string;
  try {
    real =
      request.followFinalLink === false && dirname(lexical) !== lexical
        ? join(await realpathNearest(dirname(lexical)), basename(lexical))
        : await realpathNearest(lexical);
  } catch (error) {
    throw new BuiltinToolError({
      code: 'BUILTIN_IO_FAILED',
      toolName,
      planId,
      target: lexical,
      cause: error,
      message: `${where} could not resolve the path "${given}" (${(error as Error).message}); check that it exists and is readable.`,
    });
  }
  const holders = roots.filter((root) => isWithin(real, root.real));
  const chosen = holders.sort((left, right) => right.real.length - left.real.length)[0];
  const listing = roots.map((root) => `${root.resource.id} (${root.lexical})`).join(', ');
  if (chosen === undefined || (request.resource !== undefined && !holders.includes(base))) {
    const viaLink = real !== lexical && roots.some((root) => isWithin(lexical, root.lexical)) ? ' through a symbolic link' : '';
    const scope = request.resource !== undefined ? `resource "${base.resource.id}" (${base.lexical})` : `every bound resource: ${listing}`;
    throw new BuiltinToolError({
      code: 'BUILTIN_PATH_OUTSIDE_RESOURCES',
      toolName,
      planId,
      target: real,
      message: `${where} refused the path "${given}": it leads${viaLink} to "${real}", which is outside ${scope}. Use a path inside a bound resource, or bind the folder to the plan.`,
    });
  }
  if (request.access === 'write' && chosen.resource.access !== 'write') {
    throw new BuiltinToolError({
      code: 'BUILTIN_RESOURCE_READ_ONLY',
      toolName,
      planId,
      target: real,
      message: `${where} refused to change "${real}": it is in resource "${chosen.resource.id}", which the plan bound read-only. Bind it with access: 'write' to allow changes.`,
    });
  }
  return { path: real, resource: chosen.resource, root: chosen.real };
}

/** True when `path` is `root` or inside it (both absolute and normalised). */
export function isWithin(path: string, root: string): boolean {
  if (path === root) return true;
  return path.startsWith(root.endsWith(sep) ? root : root + sep);
}

async function fileRoots(ctx: ToolExecutionContext, toolName: string): Promise<FileRoot[]> {
  const roots: FileRoot[] = [];
  for (const resource of ctx.resources) {
    if (!resource.uri.toLowerCase().startsWith('file:')) continue;
    let lexical: string;
    try {
      lexical = resourcePath(resource);
    } catch (error) {
      throw new BuiltinToolError({
        code: 'BUILTIN_NO_RESOURCE',
        toolName,
        planId: ctx.planId,
        cause: error,
        message: `Tool "${toolName}" in plan "${ctx.planId}" cannot use resource "${resource.id}": ${(error as Error).message}`,
      });
    }
    roots.push({ resource, lexical, real: await realpathNearest(lexical) });
  }
  return roots;
}

/**
 * `fs.realpath` that also works for paths that do not exist yet: the nearest
 * existing parent is resolved and the missing segments appended. A dangling
 * symbolic link is followed to where it points, so that creating through it
 * cannot escape.
 */
export async function realpathNearest(path: string, hops = 0): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
  const stats = await lstat(path).catch(() => undefined);
  if (stats?.isSymbolicLink()) {
    if (hops >= MAX_LINK_HOPS) throw new Error(`too many levels of symbolic links at "${path}"`);
    return realpathNearest(resolve(dirname(path), await readlink(path)), hops + 1);
  }
  const parent = dirname(path);
  if (parent === path) return path;
  return join(await realpathNearest(parent, hops), basename(path));
}
