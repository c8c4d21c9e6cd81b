import {
  confinePath,
  isPathInside,
  PathConfinementError,
  resolveConfinementRoot,
  resourcePath,
  type BoundResource,
  type ConfinedPath,
  type ConfinementRoot,
  type PathConfinementErrorCode,
  type ToolExecutionContext,
} from '@ca/tool-context';
import { resolve } from 'node:path';
import { messageOf } from '@ca/domain';
import { BuiltinToolError, type BuiltinToolErrorCode } from './builtin-tool-error';

/** A path a tool may use, after confinement. */
export interface GuardedPath {
  /** Absolute path with every symbolic link resolved (for a missing target: its nearest existing parent resolved). */
  readonly path: string;
  /** The most specific bound resource that holds the path; it decides the access. */
  readonly resource: BoundResource;
  /** The resolved root of that resource. */
  readonly root: string;
  /** What the confinement functions of `@ca/tool-context` take to open it. */
  readonly confined: ConfinedPath;
  /** Every file resource of the plan, as confinement roots. */
  readonly roots: readonly ConfinementRoot[];
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

/**
 * Resolves a tool's path against the plan's bound resources with
 * `confinePath` and refuses anything outside them: `..` that climbs out,
 * absolute paths elsewhere, symbolic links (also dangling ones, and links in a
 * missing target's parents) that lead out, and writes to a read-only resource
 * (the most specific resource holding the path decides). What is then opened
 * is checked again by the open functions of `@ca/tool-context`.
 *
 * @throws {BuiltinToolError} `BUILTIN_NO_RESOURCE`, `BUILTIN_INVALID_INPUT`,
 *   `BUILTIN_PATH_OUTSIDE_RESOURCES`, `BUILTIN_RESOURCE_READ_ONLY`, `BUILTIN_IO_FAILED`.
 */
export async function guardPath(ctx: ToolExecutionContext, request: GuardRequest): Promise<GuardedPath> {
  const { toolName } = request;
  const planId = ctx.planId;
  const where = `Tool "${toolName}" in plan "${planId}"`;
  const given = request.path ?? '.';
  if (typeof given !== 'string' || given.length === 0 || given.includes('\0')) {
    throw new BuiltinToolError({
      code: 'BUILTIN_INVALID_INPUT',
      toolName,
      planId,
      message: `${where} got a path that is not a string or contains a NUL byte; pass a plain path.`,
    });
  }
  const roots: ConfinementRoot[] = [];
  for (const resource of ctx.resources) {
    if (!resource.uri.toLowerCase().startsWith('file:')) continue;
    try {
      roots.push(
        await resolveConfinementRoot({ name: `resource "${resource.id}"`, path: resourcePath(resource), writable: resource.access === 'write', resource }),
      );
    } catch (error) {
      throw new BuiltinToolError({
        code: PathConfinementError.isInstance(error) ? 'BUILTIN_IO_FAILED' : 'BUILTIN_NO_RESOURCE',
        toolName,
        planId,
        cause: error,
        message: `${where} cannot use resource "${resource.id}": ${messageOf(error)}`,
      });
    }
  }
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
    const named = roots.find((root) => root.resource?.id === request.resource);
    if (named === undefined) {
      const known = roots.map((root) => `"${root.resource?.id ?? root.name}"`).join(', ');
      throw new BuiltinToolError({
        code: 'BUILTIN_NO_RESOURCE',
        toolName,
        planId,
        message: `${where} was asked for resource "${request.resource}", which is not a file resource of the plan; use one of ${known}.`,
      });
    }
    base = named;
  }
  let confined: ConfinedPath;
  try {
    confined = await confinePath({
      roots,
      path: given,
      ...(request.resource === undefined ? {} : { base }),
      access: request.access,
      followFinalLink: request.followFinalLink !== false,
      toolName,
      planId,
    });
  } catch (error) {
    if (!PathConfinementError.isInstance(error)) throw error;
    const target = error.path;
    if (error.code === 'PATH_OUTSIDE_ROOT') {
      const lexical = resolve(base.path, given);
      const viaLink = target !== undefined && target !== lexical && roots.some((root) => isPathInside(lexical, root.path)) ? ' through a symbolic link' : '';
      const listing = roots.map((root) => `${root.resource?.id ?? root.name} (${root.path})`).join(', ');
      const scope = request.resource !== undefined ? `resource "${request.resource}" (${base.path})` : `every bound resource: ${listing}`;
      throw new BuiltinToolError({
        code: 'BUILTIN_PATH_OUTSIDE_RESOURCES',
        toolName,
        planId,
        cause: error,
        ...(target === undefined ? {} : { target }),
        message: `${where} refused the path "${given}": it leads${viaLink} to "${target ?? given}", which is outside ${scope}. Use a path inside a bound resource, or bind the folder to the plan.`,
      });
    }
    if (error.code === 'PATH_READ_ONLY') {
      const holder = roots.find((root) => root.name === error.rootName);
      throw new BuiltinToolError({
        code: 'BUILTIN_RESOURCE_READ_ONLY',
        toolName,
        planId,
        cause: error,
        ...(target === undefined ? {} : { target }),
        message: `${where} refused to change "${target ?? given}": it is in resource "${holder?.resource?.id ?? error.rootName}", which the plan bound read-only. Bind it with access: 'write' to allow changes.`,
      });
    }
    throw toBuiltinError(error);
  }
  const resource = confined.root.resource as BoundResource;
  return { path: confined.path, resource, root: confined.root.realPath, confined, roots };
}

const CODES: Readonly<Record<PathConfinementErrorCode, BuiltinToolErrorCode>> = {
  PATH_INVALID: 'BUILTIN_INVALID_INPUT',
  PATH_OUTSIDE_ROOT: 'BUILTIN_PATH_OUTSIDE_RESOURCES',
  PATH_READ_ONLY: 'BUILTIN_RESOURCE_READ_ONLY',
  PATH_NOT_FOUND: 'BUILTIN_NOT_FOUND',
  PATH_NOT_REGULAR_FILE: 'BUILTIN_NOT_REGULAR_FILE',
  PATH_IS_DIRECTORY: 'BUILTIN_WRONG_TYPE',
  PATH_NOT_DIRECTORY: 'BUILTIN_WRONG_TYPE',
  PATH_HARD_LINKED: 'BUILTIN_HARD_LINKED_FILE',
  PATH_ALREADY_EXISTS: 'BUILTIN_ALREADY_EXISTS',
  PATH_CHANGED: 'BUILTIN_PATH_CHANGED',
  PATH_IO_FAILED: 'BUILTIN_IO_FAILED',
};

/**
 * The built-in failure for a refusal of the confinement functions: its code
 * mapped to the adapter's (the public contract), its message (which names the
 * tool and plan), the path as `target`, and the refusal as `cause`.
 *
 * @throws Never.
 */
export function toBuiltinError(error: PathConfinementError): BuiltinToolError {
  return new BuiltinToolError({
    code: CODES[error.code] ?? 'BUILTIN_IO_FAILED',
    message: error.message,
    ...(error.toolName === undefined ? {} : { toolName: error.toolName }),
    ...(error.planId === undefined ? {} : { planId: error.planId }),
    ...(error.path === undefined ? {} : { target: error.path }),
    cause: error,
  });
}
