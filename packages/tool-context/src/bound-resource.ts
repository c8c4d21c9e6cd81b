import { isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ContextValidationError } from './context-validation-error';
import { describeType } from './describe-type';

/** How a plan may use a {@link BoundResource}. */
export type ResourceAccess = 'read' | 'write';

const ACCESS_MODES: readonly ResourceAccess[] = ['read', 'write'];

/**
 * Something a plan may touch — a folder, a repository, a database, a URL —
 * identified by an absolute URI. Built-in tools refuse paths outside every
 * bound resource and writes to a `'read'` one.
 */
export interface BoundResource {
  /** Unique within the plan; changes refer to it as `resourceId`. */
  readonly id: string;
  /** What kind of thing it is, free-form: `'filesystem'`, `'git'`, `'http'`, … */
  readonly kind: string;
  /** Absolute URI with a scheme, e.g. `file:///home/me/project` or `https://api.example.com/`. */
  readonly uri: string;
  /** `'read'`: the plan may only read; `'write'`: it may also change it. */
  readonly access: ResourceAccess;
  /** Anything else a tool needs to know about the resource. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** Options of {@link resourceFromPath}. */
export interface ResourceFromPathOptions {
  /** Id of the resource, unique within the plan. */
  readonly id: string;
  /** Absolute filesystem path (a file or a folder). */
  readonly path: string;
  /** `'read'` or `'write'`. */
  readonly access: ResourceAccess;
  /** Default `'filesystem'`. */
  readonly kind?: string;
  /** Optional metadata, copied and frozen. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/**
 * A {@link BoundResource} for an absolute filesystem path, with a `file:` URI
 * made by `url.pathToFileURL` (so spaces, `#` and `%` are encoded correctly).
 * The path is resolved (`..` segments removed); the result is frozen.
 *
 * @example
 * resourceFromPath({ id: 'workspace', path: '/home/me/project', access: 'write' })
 * // → { id: 'workspace', kind: 'filesystem', uri: 'file:///home/me/project', access: 'write' }
 *
 * @throws {ContextValidationError} When `path` is not an absolute path, or
 *   `id`, `kind`, `access` or `metadata` is invalid (see `createExecutionContext`).
 */
export function resourceFromPath(options: ResourceFromPathOptions): BoundResource {
  if (typeof options !== 'object' || options === null) {
    throw new ContextValidationError({
      field: 'options',
      message: `resourceFromPath expects { id, path, access, kind? }, got ${describeType(options)}.`,
    });
  }
  const { id, path, access, kind = 'filesystem', metadata } = options;
  if (typeof path !== 'string' || path.length === 0 || !isAbsolute(path)) {
    throw new ContextValidationError({
      field: 'path',
      message: `expected an absolute filesystem path such as "/home/me/project", got ${describeType(path)}; resolve it first (path.resolve).`,
    });
  }
  const resource = { id, kind, uri: pathToFileURL(path).href, access, ...(metadata === undefined ? {} : { metadata }) };
  return freezeResource(resource, 'resource', undefined);
}

/**
 * The filesystem path of a `file:` resource, the reverse of
 * {@link resourceFromPath} (via `url.fileURLToPath`).
 *
 * @throws {ContextValidationError} When the resource's URI is not a `file:`
 *   URI, or one that names no local path (a remote host, an encoded `/`).
 */
export function resourcePath(resource: BoundResource): string {
  const uri: unknown = typeof resource === 'object' && resource !== null ? resource.uri : undefined;
  const name = typeof resource === 'object' && resource !== null ? `resource "${String(resource.id)}"` : 'the resource';
  if (typeof uri !== 'string' || !uri.toLowerCase().startsWith('file:')) {
    throw new ContextValidationError({
      field: 'resource.uri',
      message: `${name} has the URI ${describeType(uri)}, which is not a file: URI; only filesystem resources have a path (use the URI itself for other schemes).`,
    });
  }
  try {
    return fileURLToPath(uri);
  } catch (error) {
    throw new ContextValidationError({
      field: 'resource.uri',
      message: `${name} has the URI "${uri}", which names no local path (${error instanceof Error ? error.message : String(error)}); bind it with resourceFromPath().`,
      cause: error,
    });
  }
}

/**
 * Validates a list of resources and returns a frozen list of frozen copies.
 * Refuses duplicate ids, URIs that are not absolute, unknown access modes and
 * missing ids or kinds.
 */
export function freezeResources(resources: unknown, planId: string): readonly BoundResource[] {
  if (resources === undefined) return Object.freeze([]);
  if (!Array.isArray(resources)) {
    throw new ContextValidationError({
      field: 'resources',
      planId,
      message: `expected an array of { id, kind, uri, access } objects, got ${describeType(resources)}.`,
    });
  }
  const seen = new Set<string>();
  const frozen = resources.map((resource: unknown, index) => {
    const copy = freezeResource(resource, `resources[${index}]`, planId);
    if (seen.has(copy.id)) {
      throw new ContextValidationError({
        field: `resources[${index}].id`,
        planId,
        message: `the id "${copy.id}" is already used by another resource; give every bound resource its own id.`,
      });
    }
    seen.add(copy.id);
    return copy;
  });
  return Object.freeze(frozen);
}

function freezeResource(resource: unknown, field: string, planId: string | undefined): BoundResource {
  const fail = (name: string, message: string): never => {
    throw new ContextValidationError({ field: `${field}${name}`, planId, message });
  };
  if (typeof resource !== 'object' || resource === null || Array.isArray(resource)) {
    fail('', `expected an object like { id, kind, uri, access }, got ${describeType(resource)}.`);
  }
  const { id, kind, uri, access, metadata } = resource as Record<string, unknown>;
  if (typeof id !== 'string' || id.trim().length === 0) {
    fail('.id', `expected a non-empty string naming the resource (e.g. "workspace"), got ${describeType(id)}.`);
  }
  const label = `resource "${id as string}"`;
  if (typeof kind !== 'string' || kind.trim().length === 0) {
    fail('.kind', `${label} needs a non-empty kind such as "filesystem" or "http", got ${describeType(kind)}.`);
  }
  checkUri(uri, label, (message) => fail('.uri', message));
  if (typeof access !== 'string' || !(ACCESS_MODES as readonly string[]).includes(access)) {
    fail('.access', `${label} needs access "read" or "write", got ${describeType(access)}.`);
  }
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))) {
    fail('.metadata', `${label} has metadata that is not an object (got ${describeType(metadata)}); pass a plain object or leave it out.`);
  }
  const copy: { -readonly [K in keyof BoundResource]: BoundResource[K] } = {
    id: id as string,
    kind: kind as string,
    uri: uri as string,
    access: access as ResourceAccess,
  };
  if (metadata !== undefined) copy.metadata = Object.freeze({ ...(metadata as Record<string, unknown>) });
  return Object.freeze(copy);
}

function checkUri(uri: unknown, label: string, fail: (message: string) => never): void {
  if (typeof uri !== 'string' || uri.length === 0) {
    fail(`${label} needs an absolute URI such as "file:///tmp/project", got ${describeType(uri)}.`);
  }
  let protocol: string;
  try {
    protocol = new URL(uri as string).protocol;
  } catch {
    return fail(
      `${label} has the URI "${uri as string}", which is not an absolute URI with a scheme; ` +
        'use e.g. "file:///tmp/project" (resourceFromPath() makes one from a path).',
    );
  }
  // `new URL('C:\\work')` parses with the scheme "c:"; that is a Windows path, not a URI.
  if (protocol.length <= 2) {
    fail(
      `${label} has the URI "${uri as string}", which looks like a Windows path; ` +
        'turn paths into file: URIs with resourceFromPath() or url.pathToFileURL().',
    );
  }
}
