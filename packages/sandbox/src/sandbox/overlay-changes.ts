import { constants, type Stats } from 'node:fs';
import { lstat, open, readdir, readlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { BoundResource } from '@ca/tool-context';
import { findOpaqueDirectories } from './opaque-directories';

/** An entry of the real tree or of the overlay, as far as a change needs it. */
export type OverlayEntry =
  | { readonly type: 'file'; readonly mode: number; readonly size: number }
  | { readonly type: 'directory'; readonly mode: number }
  | { readonly type: 'symlink'; readonly target: string };

/** One change the program made to a writable resource, found in the overlay's upper layer. */
export interface OverlayChange {
  /** `create`: nothing was there; `modify`: the entry was there and is now different; `delete`: it is gone. */
  readonly kind: 'create' | 'modify' | 'delete';
  /** The absolute path in the real tree (the resource's resolved root joined with `relativePath`). */
  readonly path: string;
  /** The path below the resource's root, `/`-separated. */
  readonly relativePath: string;
  /** The write-bound resource it belongs to. */
  readonly resource: BoundResource;
  /** What was there before (`modify`, `delete`). */
  readonly before?: OverlayEntry;
  /** What is there after (`create`, `modify`). */
  readonly after?: OverlayEntry;
}

/** Something in the upper layer that cannot be carried to the real tree (a FIFO, a socket, a device). */
export interface OverlaySkippedEntry {
  readonly path: string;
  readonly reason: string;
}

/** One overlaid resource: its real root (the lower layer) and the upper layer the program's writes went to. */
export interface OverlayLayer {
  readonly resource: BoundResource;
  /** The resource's resolved root: the lower layer, and where changes are applied. */
  readonly root: string;
  /** The upper layer. */
  readonly upper: string;
}

/** @internal A change with where its new content lies in the upper layer. */
export interface PendingChange extends OverlayChange {
  /** The resource's resolved root. */
  readonly root: string;
  /** The entry in the upper layer (`create`, `modify`). */
  readonly upperPath?: string;
}

/** @internal What reading the upper layers found. */
export interface OverlayReading {
  readonly changes: PendingChange[];
  readonly skipped: OverlaySkippedEntry[];
}

const PERMISSION_BITS = 0o7777;
const COMPARE_CHUNK_BYTES = 64 * 1024;

/**
 * @internal Turns the upper layers into changes, in the order they must be
 * applied (and recorded, so that undoing them newest first restores the tree):
 * a folder's deleted entries before the folder, a created folder before its
 * entries. Reads only; the real tree is compared, never changed.
 *
 * - A character device 0/0 is a whiteout: the lower entry (with everything
 *   below it, entry by entry, deepest first) was deleted.
 * - An opaque folder (`user.overlay.opaque=y`, read with tar) was deleted and
 *   made again: every lower entry below it that the upper layer does not
 *   hold was deleted.
 * - A file, link or folder without a lower counterpart was created; one whose
 *   lower counterpart has another type replaced it (delete, then create).
 * - A file copied up is a `modify` only when its content or permission bits
 *   differ (overlayfs copies a file up as soon as it is opened for writing or
 *   its metadata changes); a link, when its target differs; a folder, when
 *   its permission bits differ. Timestamps and owners are not compared.
 * - FIFOs, sockets and devices the program made are `skipped`.
 *
 * @throws Error when a layer cannot be read, a name is not valid UTF-8 (it
 *   could not be named back), or tar cannot read the folders' attributes.
 */
export async function readOverlayChanges(layers: readonly OverlayLayer[], tarPath: string, scratch: string, signal?: AbortSignal): Promise<OverlayReading> {
  const reading: OverlayReading = { changes: [], skipped: [] };
  for (const [index, layer] of layers.entries()) {
    const tree = await readUpperTree(layer.upper, layer.root);
    const candidates = tree.filter((node) => node.upper.isDirectory() && node.lower?.isDirectory() === true).map((node) => node.relativePath);
    const opaque = await findOpaqueDirectories(tarPath, layer.upper, candidates, join(scratch, `opaque-${index}.tar`), signal);
    const children = new Map<string, UpperNode[]>();
    for (const node of tree) {
      const siblings = children.get(node.parentPath);
      if (siblings === undefined) children.set(node.parentPath, [node]);
      else siblings.push(node);
    }
    await emitFolder(reading, layer, children, opaque, '', false);
  }
  return reading;
}

interface UpperNode {
  readonly relativePath: string;
  readonly parentPath: string;
  readonly name: string;
  readonly upper: Stats;
  /** The lower entry at the same path, when there is one and it shows (not under a replaced folder). */
  readonly lower: Stats | undefined;
}

/** Every entry of the upper layer, parents before children, with the lower entry at the same path. */
async function readUpperTree(upper: string, root: string): Promise<UpperNode[]> {
  const nodes: UpperNode[] = [];
  const visit = async (relativeFolder: string, lowerShows: boolean): Promise<void> => {
    const folder = relativeFolder === '' ? upper : join(upper, relativeFolder);
    const names = (await readdir(folder, { encoding: 'buffer' })).map((raw) => {
      const name = raw.toString('utf8');
      if (!Buffer.from(name, 'utf8').equals(raw)) throw new Error(`the program made an entry in "${join(root, relativeFolder)}" whose name is not valid UTF-8`);
      return name;
    });
    names.sort();
    for (const name of names) {
      const relativePath = relativeFolder === '' ? name : `${relativeFolder}/${name}`;
      const upperStats = await lstat(join(upper, relativePath));
      const lowerStats = lowerShows ? await lstat(join(root, relativePath)).catch(() => undefined) : undefined;
      nodes.push({ relativePath, parentPath: relativeFolder, name, upper: upperStats, lower: lowerStats });
      // Below a folder that replaced a lower non-folder there is no lower tree.
      if (upperStats.isDirectory()) await visit(relativePath, lowerStats?.isDirectory() === true);
    }
  };
  await visit('', true);
  return nodes;
}

async function emitFolder(
  reading: OverlayReading,
  layer: OverlayLayer,
  children: ReadonlyMap<string, UpperNode[]>,
  opaque: ReadonlySet<string>,
  relativeFolder: string,
  hidesLower: boolean,
): Promise<void> {
  const upperChildren = children.get(relativeFolder) ?? [];
  if (hidesLower) {
    // The folder was made again: lower entries the upper layer does not name are gone.
    const named = new Set(upperChildren.map((node) => node.name));
    const lowerNames = await readdir(relativeFolder === '' ? layer.root : join(layer.root, relativeFolder)).catch(() => [] as string[]);
    for (const name of lowerNames.sort()) {
      if (!named.has(name)) await emitDeletion(reading, layer, relativeFolder === '' ? name : `${relativeFolder}/${name}`);
    }
  }
  for (const node of upperChildren) {
    const { upper, lower, relativePath } = node;
    const upperPath = join(layer.upper, relativePath);
    const realPath = join(layer.root, relativePath);
    if (isWhiteout(upper)) {
      if (lower !== undefined) await emitDeletion(reading, layer, relativePath, lower);
      continue;
    }
    const after = await entryOf(upper, upperPath);
    if (after === undefined) {
      reading.skipped.push({ path: realPath, reason: `a ${describeType(upper)} cannot be carried out of the sandbox` });
      continue;
    }
    // Inside a folder that hides the lower one, a lower entry of the same name is replaced, whatever its type.
    if (lower !== undefined && (after.type === 'directory') !== lower.isDirectory()) {
      await emitDeletion(reading, layer, relativePath, lower);
      push(reading, layer, { kind: 'create', relativePath, after, upperPath });
    } else if (lower !== undefined) {
      const before = await entryOf(lower, realPath);
      if (before === undefined) {
        // A FIFO or socket of the real tree replaced by the program: delete, then create.
        await emitDeletion(reading, layer, relativePath, lower);
        push(reading, layer, { kind: 'create', relativePath, after, upperPath });
      } else if (await differs(before, after, realPath, upperPath)) {
        push(reading, layer, { kind: 'modify', relativePath, before, after, upperPath });
      }
    } else {
      push(reading, layer, { kind: 'create', relativePath, after, upperPath });
    }
    if (after.type === 'directory') {
      const hides = lower?.isDirectory() === true && (hidesLower || opaque.has(relativePath));
      await emitFolder(reading, layer, children, opaque, relativePath, hides);
    }
  }
}

/** Deletes of a lower entry and, for a folder, of everything below it, deepest first. */
async function emitDeletion(reading: OverlayReading, layer: OverlayLayer, relativePath: string, known?: Stats): Promise<void> {
  const realPath = join(layer.root, relativePath);
  const stats = known ?? (await lstat(realPath).catch(() => undefined));
  if (stats === undefined) return;
  if (stats.isDirectory()) {
    for (const name of (await readdir(realPath)).sort()) await emitDeletion(reading, layer, `${relativePath}/${name}`);
  }
  const before = await entryOf(stats, realPath);
  push(reading, layer, { kind: 'delete', relativePath, ...(before === undefined ? {} : { before }) });
}

function push(reading: OverlayReading, layer: OverlayLayer, change: Omit<PendingChange, 'path' | 'resource' | 'root'>): void {
  reading.changes.push({ ...change, path: join(layer.root, change.relativePath), resource: layer.resource, root: layer.root });
}

async function entryOf(stats: Stats, path: string): Promise<OverlayEntry | undefined> {
  if (stats.isFile()) return { type: 'file', mode: stats.mode & PERMISSION_BITS, size: stats.size };
  if (stats.isDirectory()) return { type: 'directory', mode: stats.mode & PERMISSION_BITS };
  if (stats.isSymbolicLink()) return { type: 'symlink', target: await readlink(path) };
  return undefined;
}

function isWhiteout(stats: Stats): boolean {
  return stats.isCharacterDevice() && stats.rdev === 0;
}

async function differs(before: OverlayEntry, after: OverlayEntry, lowerPath: string, upperPath: string): Promise<boolean> {
  if (before.type !== after.type) return true;
  if (before.type === 'symlink') return before.target !== (after as { readonly target: string }).target;
  if (before.mode !== (after as { readonly mode: number }).mode) return true;
  if (before.type === 'directory') return false;
  if (before.size !== (after as { readonly size: number }).size) return true;
  return !(await sameContent(lowerPath, upperPath));
}

async function sameContent(left: string, right: string): Promise<boolean> {
  // Not following a link, and not blocking on a FIFO swapped in since the lstat.
  const flags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
  const opened = await Promise.allSettled([open(left, flags), open(right, flags)]);
  const handles = opened.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  const failed = opened.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(handles.map((handle) => handle.close()));
    throw failed.reason;
  }
  const [first, second] = handles as [FileHandle, FileHandle];
  try {
    const a = Buffer.allocUnsafe(COMPARE_CHUNK_BYTES);
    const b = Buffer.allocUnsafe(COMPARE_CHUNK_BYTES);
    for (let position = 0; ; position += COMPARE_CHUNK_BYTES) {
      const [readA, readB] = await Promise.all([first.read(a, 0, a.length, position), second.read(b, 0, b.length, position)]);
      if (readA.bytesRead !== readB.bytesRead) return false;
      if (readA.bytesRead === 0) return true;
      if (!a.subarray(0, readA.bytesRead).equals(b.subarray(0, readB.bytesRead))) return false;
    }
  } finally {
    await Promise.all([first.close(), second.close()]);
  }
}

function describeType(stats: Stats): string {
  if (stats.isFIFO()) return 'FIFO';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'device';
  return 'special file';
}
