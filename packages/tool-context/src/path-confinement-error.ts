import { CaError } from '@ca/domain';

/**
 * Stable codes of {@link PathConfinementError}.
 *
 * - `PATH_INVALID` — the requested path is not a non-empty string, holds a NUL byte, or a name holds a separator.
 * - `PATH_OUTSIDE_ROOT` — the path, or what was actually opened, lies outside the root (`..`, an absolute path
 *   elsewhere, a link that leads out, a folder swapped for a link while it was being opened).
 * - `PATH_READ_ONLY` — a change inside a root (or a nested root) that may only be read.
 * - `PATH_NOT_FOUND` — nothing exists at the path.
 * - `PATH_NOT_REGULAR_FILE` — a FIFO, socket or device where a regular file is needed (refused without blocking).
 * - `PATH_IS_DIRECTORY` — a folder where a regular file is needed.
 * - `PATH_NOT_DIRECTORY` — something else where a folder is needed.
 * - `PATH_HARD_LINKED` — a write through a file that has more than one link, which was not allowed.
 * - `PATH_ALREADY_EXISTS` — an exclusive create found the name taken.
 * - `PATH_CHANGED` — the path changed while it was being used (a link appeared where a file or folder was checked).
 * - `PATH_IO_FAILED` — any other file-system failure (permissions, disk full).
 */
export type PathConfinementErrorCode =
  | 'PATH_INVALID'
  | 'PATH_OUTSIDE_ROOT'
  | 'PATH_READ_ONLY'
  | 'PATH_NOT_FOUND'
  | 'PATH_NOT_REGULAR_FILE'
  | 'PATH_IS_DIRECTORY'
  | 'PATH_NOT_DIRECTORY'
  | 'PATH_HARD_LINKED'
  | 'PATH_ALREADY_EXISTS'
  | 'PATH_CHANGED'
  | 'PATH_IO_FAILED';

/** What kind of file system entry was found, as {@link PathConfinementError.fileType} names it. */
export type ConfinedFileType = 'file' | 'directory' | 'symlink' | 'fifo' | 'socket' | 'character device' | 'block device' | 'unknown';

/** Options of {@link PathConfinementError}: the fields its message is built from. */
export interface PathConfinementErrorOptions {
  /** Stable code, see {@link PathConfinementErrorCode}. */
  readonly code: PathConfinementErrorCode;
  /** The path as it was asked for (relative or absolute), when there is one. */
  readonly requestedPath?: string;
  /** The absolute path concerned (resolved, or what the descriptor was found to be). */
  readonly path?: string;
  /** Name of the root in messages (a resource id, `skill folder`, …). */
  readonly rootName?: string;
  /** Real path of the root (or, for `PATH_OUTSIDE_ROOT` with several roots, a list of them). */
  readonly rootPath?: string;
  /** For `PATH_NOT_REGULAR_FILE`, `PATH_IS_DIRECTORY`, `PATH_NOT_DIRECTORY`: what was found. */
  readonly fileType?: ConfinedFileType;
  /** For `PATH_HARD_LINKED`: the file's link count. */
  readonly linkCount?: number;
  /** For `PATH_OUTSIDE_ROOT`: the check was on the opened descriptor (a race), not on the name. */
  readonly viaDescriptor?: boolean;
  /** The tool concerned, when known. */
  readonly toolName?: string;
  /** The plan concerned, when known. */
  readonly planId?: string;
  /** The underlying error, per ES2022 `cause`. */
  readonly cause?: unknown;
}

/**
 * A path was refused, or could not be used, by the confinement functions
 * ({@link confinePath}, {@link openConfinedFile}, {@link openConfinedDirectory}, …).
 * The message is built from the fields: the tool and plan, the path, the root
 * and what to do. Adapters usually turn it into their own coded error and keep
 * it as `cause`.
 *
 * Tell it apart with `PathConfinementError.isInstance` or `code`.
 */
export class PathConfinementError extends CaError {
  declare readonly code: PathConfinementErrorCode;
  /** The path as it was asked for, when there is one. */
  declare readonly requestedPath?: string;
  /** The absolute path concerned, when known. */
  declare readonly path?: string;
  /** Name of the root, when known. */
  declare readonly rootName?: string;
  /** Real path of the root, when known. */
  declare readonly rootPath?: string;
  /** What was found, for type refusals. */
  declare readonly fileType?: ConfinedFileType;
  /** Link count, for `PATH_HARD_LINKED`. */
  declare readonly linkCount?: number;

  /**
   * @param options - The code and the fields the message is built from.
   * @throws Never.
   */
  constructor(options: PathConfinementErrorOptions) {
    super(options.code, confinementMessage(options), options);
    if (options.requestedPath !== undefined) this.requestedPath = options.requestedPath;
    if (options.path !== undefined) this.path = options.path;
    if (options.rootName !== undefined) this.rootName = options.rootName;
    if (options.rootPath !== undefined) this.rootPath = options.rootPath;
    if (options.fileType !== undefined) this.fileType = options.fileType;
    if (options.linkCount !== undefined) this.linkCount = options.linkCount;
  }
}

function confinementMessage(options: PathConfinementErrorOptions): string {
  const who =
    options.toolName === undefined ? 'The path check' : `Tool "${options.toolName}"${options.planId === undefined ? '' : ` in plan "${options.planId}"`}`;
  const asked = options.requestedPath === undefined ? (options.path === undefined ? 'the path' : `"${options.path}"`) : `"${options.requestedPath}"`;
  const resolved = options.requestedPath !== undefined && options.path !== undefined && options.path !== options.requestedPath ? ` ("${options.path}")` : '';
  const root =
    options.rootPath === undefined ? 'its root' : options.rootName === undefined ? `"${options.rootPath}"` : `${options.rootName} (${options.rootPath})`;
  const found = options.fileType === undefined ? '' : ` it is a ${options.fileType}`;
  switch (options.code) {
    case 'PATH_INVALID':
      return `${who} got an invalid path ${asked}: it must be a non-empty string without NUL bytes. Pass a plain path.`;
    case 'PATH_OUTSIDE_ROOT':
      return options.viaDescriptor === true
        ? `${who} refused ${asked}: what was opened${resolved} lies outside ${root}; the path changed while it was being opened (a folder was swapped for a link). Use a path inside the root and try again.`
        : `${who} refused ${asked}: it leads${resolved === '' ? '' : ` to${resolved}`} outside ${root}. Use a path inside it without '..' or links that leave it.`;
    case 'PATH_READ_ONLY':
      return `${who} refused to change ${asked}${resolved}: it is inside ${root}, which may only be read. Bind it with write access to allow changes.`;
    case 'PATH_NOT_FOUND':
      return `${who} found nothing at ${asked}${resolved}. Check the path (list the folder to see what exists).`;
    case 'PATH_NOT_REGULAR_FILE':
      return `${who} refused ${asked}${resolved}:${found || ' it is not a regular file'}, and only regular files are opened (FIFOs, sockets and devices could block or never end). Use a regular file.`;
    case 'PATH_IS_DIRECTORY':
      return `${who} cannot use ${asked}${resolved} as a file: it is a folder. List it instead, or name a file inside it.`;
    case 'PATH_NOT_DIRECTORY':
      return `${who} cannot use ${asked}${resolved} as a folder:${found || ' it is not a folder'}. Name a folder.`;
    case 'PATH_HARD_LINKED':
      return `${who} refused to write ${asked}${resolved}: the file has ${options.linkCount ?? 'more than one'} links, so other names (perhaps outside ${root}) share its content. Copy it to a new file first, or allow writes through hard links in the settings (the write then gives this name a new file and leaves the other names as they were).`;
    case 'PATH_ALREADY_EXISTS':
      return `${who} did not create ${asked}${resolved}: something already exists there. Choose another name or allow overwriting.`;
    case 'PATH_CHANGED':
      return `${who} stopped using ${asked}${resolved}: it changed while it was being used (a link appeared where a file or folder had been checked). Try again once the folder is stable.`;
    case 'PATH_IO_FAILED':
      return `${who} could not use ${asked}${resolved}${causeText(options.cause)}. Check permissions and free space.`;
  }
}

// Duck-typed: errors from node:fs may come from another realm (a VM context), where instanceof Error fails.
function causeText(cause: unknown): string {
  const message = typeof cause === 'object' && cause !== null ? (cause as { message?: unknown }).message : undefined;
  return typeof message === 'string' && message.length > 0 ? ` (${message})` : '';
}
