import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { confinePath, openConfinedDirectory, type ConfinedDirectory, type ConfinementRoot } from '@ca/tool-context';
import type { OverlayChange, PendingChange } from './overlay-changes';

/** Where a change is made: the verified folder of the real tree that holds the entry, and the entry's name. */
export interface OverlayTarget {
  readonly directory: ConfinedDirectory;
  readonly name: string;
}

/** What the caller of {@link SandboxOverlay.apply} does around each change. */
export interface OverlayApplyHooks<Captured = unknown> {
  /**
   * Called for every `modify` and `delete`, before anything is applied, with
   * the entry as it is in the real tree: capture the undo data here. A throw
   * stops everything; nothing is applied.
   */
  readonly capture?: (change: OverlayChange, target: OverlayTarget) => Promise<Captured>;
  /** Called once a change was made to the real tree, with what `capture` returned for it (`undefined` for a `create`). */
  readonly applied?: (change: OverlayChange, captured: Captured | undefined) => void;
}

/** Bits never carried out of the sandbox: a set-user-id or set-group-id file made inside must not gain rights outside. */
const PRIVILEGE_BITS = 0o6000;
const COPY_CHUNK_BYTES = 64 * 1024;
const OPEN_UPPER_FILE = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

/** @internal Who an application acts for, named in the confinement errors. */
export interface ApplyDetails {
  readonly roots: readonly ConfinementRoot[];
  readonly toolName?: string;
  readonly planId?: string;
}

/** @internal A failure of one change, with how many were applied before it. */
export class ApplyFailure extends Error {
  constructor(
    readonly change: OverlayChange,
    readonly appliedCount: number,
    cause: unknown,
  ) {
    super(`${change.kind} of "${change.path}"`, { cause });
  }
}

/**
 * @internal Captures the previous state of every `modify` and `delete`, then
 * makes the changes, in order, to the real tree through the confinement
 * functions of `@ca/tool-context`: each folder is opened without following
 * links and verified to lie in its resource (and outside any read-only
 * resource nested in it), and every entry is changed through its verified
 * folder. Files are written to a temporary name and renamed into place.
 * Folders are made `0700` and get their permission bits last, deepest first,
 * so a read-only folder can still be filled.
 *
 * @throws ApplyFailure naming the change that failed and how many were applied before it.
 */
export async function applyOverlayChanges<Captured>(
  changes: readonly PendingChange[],
  hooks: OverlayApplyHooks<Captured>,
  details: ApplyDetails,
): Promise<void> {
  const captured = new Map<PendingChange, Captured>();
  const cursors = new FolderCursors(details);
  try {
    const capture = hooks.capture;
    if (capture !== undefined) {
      for (const batch of batchesOf(changes.filter((change) => change.kind !== 'create'))) {
        const directory = await cursors.folderOf(batch[0] as PendingChange).catch((error: unknown) => {
          throw new ApplyFailure(batch[0] as PendingChange, 0, error);
        });
        const outcomes = await inParallel(batch, (change) => capture(change, { directory, name: nameOf(change) }));
        outcomes.forEach((outcome, index) => {
          if (!outcome.ok) throw new ApplyFailure(batch[index] as PendingChange, 0, outcome.error);
          captured.set(batch[index] as PendingChange, outcome.value);
        });
      }
    }
    const folderModes: { readonly change: PendingChange; readonly mode: number }[] = [];
    let appliedCount = 0;
    for (const batch of batchesOf(changes, isFileWrite)) {
      const directory = await cursors.folderOf(batch[0] as PendingChange).catch((error: unknown) => {
        throw new ApplyFailure(batch[0] as PendingChange, appliedCount, error);
      });
      const outcomes = await inParallel(batch, (change) => applyOne(change, { directory, name: nameOf(change) }, folderModes));
      let failure: ApplyFailure | undefined;
      outcomes.forEach((outcome, index) => {
        const change = batch[index] as PendingChange;
        if (!outcome.ok) {
          failure ??= new ApplyFailure(change, appliedCount, outcome.error);
          return;
        }
        appliedCount++;
        hooks.applied?.(change, captured.get(change));
      });
      if (failure !== undefined) throw new ApplyFailure(failure.change, appliedCount, failure.cause);
    }
    for (const { change, mode } of folderModes.reverse()) {
      try {
        const directory = await cursors.folderOf(change);
        await directory.chmod(nameOf(change), mode);
      } catch (error) {
        throw new ApplyFailure(change, appliedCount, error);
      }
    }
  } finally {
    await cursors.close();
  }
}

/** How many changes of one folder are made at once: files are independent, and the file system answers from several threads. */
const PARALLEL_CHANGES = 8;

/**
 * Consecutive changes in one folder, under different names, that may be made
 * in any order: with `parallel`, only those it accepts are grouped (file
 * writes); every other change is a batch of its own, in order.
 */
function batchesOf(changes: readonly PendingChange[], parallel: (change: PendingChange) => boolean = () => true): PendingChange[][] {
  const batches: PendingChange[][] = [];
  let current: PendingChange[] = [];
  let names = new Set<string>();
  for (const change of changes) {
    const previous = current[0];
    const joins =
      previous !== undefined &&
      parallel(change) &&
      parallel(previous) &&
      current.length < PARALLEL_CHANGES &&
      previous.resource.id === change.resource.id &&
      parentOf(previous) === parentOf(change) &&
      !names.has(nameOf(change));
    if (!joins) {
      if (current.length > 0) batches.push(current);
      current = [];
      names = new Set();
    }
    current.push(change);
    names.add(nameOf(change));
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

function isFileWrite(change: PendingChange): boolean {
  return change.kind !== 'delete' && change.after?.type === 'file';
}

async function inParallel<T>(
  items: readonly PendingChange[],
  work: (item: PendingChange) => Promise<T>,
): Promise<({ ok: true; value: T } | { ok: false; error: unknown })[]> {
  return Promise.all(
    items.map((item) =>
      work(item).then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      ),
    ),
  );
}

function parentOf(change: PendingChange): string {
  const slash = change.relativePath.lastIndexOf('/');
  return slash === -1 ? '' : change.relativePath.slice(0, slash);
}

function nameOf(change: PendingChange): string {
  return change.relativePath.slice(change.relativePath.lastIndexOf('/') + 1);
}

async function applyOne(change: PendingChange, target: OverlayTarget, folderModes: { readonly change: PendingChange; readonly mode: number }[]): Promise<void> {
  const { directory, name } = target;
  const current = await directory.lstat(name);
  const removeCurrent = async (): Promise<void> => {
    if (current === undefined) return;
    if (current.isDirectory()) await directory.removeDirectory(name);
    else await directory.remove(name);
  };
  if (change.kind === 'delete') {
    await removeCurrent();
    return;
  }
  const after = change.after;
  if (after === undefined || change.upperPath === undefined) throw new Error('the change carries nothing to apply');
  switch (after.type) {
    case 'directory':
      if (current === undefined || !current.isDirectory()) {
        await removeCurrent();
        await directory.makeDirectory(name, 0o700);
      }
      folderModes.push({ change, mode: after.mode });
      return;
    case 'file':
      if (current !== undefined && !current.isFile()) await removeCurrent();
      await directory.writeFile(name, copyFrom(change.upperPath), { mode: after.mode & ~PRIVILEGE_BITS, allowHardLinks: true });
      return;
    case 'symlink':
      await removeCurrent();
      await directory.symlink(after.target, name);
      return;
  }
}

function copyFrom(upperPath: string): (handle: FileHandle) => Promise<void> {
  return async (handle) => {
    const source = await open(upperPath, OPEN_UPPER_FILE);
    try {
      const buffer = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
      for (let position = 0; ;) {
        const { bytesRead } = await source.read(buffer, 0, buffer.length, position);
        if (bytesRead === 0) return;
        await handle.write(buffer, 0, bytesRead);
        position += bytesRead;
      }
    } finally {
      await source.close();
    }
  };
}

/**
 * Open, verified folders along the path of the last change of each resource:
 * changes come in tree order, so moving to the next one closes and opens only
 * the folders where the two paths part.
 */
class FolderCursors {
  readonly #stacks = new Map<string, { readonly name: string; readonly directory: ConfinedDirectory }[]>();

  constructor(private readonly details: ApplyDetails) {}

  /** The verified folder that holds the change's entry. */
  folderOf(change: PendingChange): Promise<ConfinedDirectory> {
    const segments = change.relativePath.split('/');
    segments.pop();
    return this.#folder(change, segments);
  }

  async #folder(change: PendingChange, segments: readonly string[]): Promise<ConfinedDirectory> {
    const key = change.resource.id;
    let stack = this.#stacks.get(key);
    if (stack === undefined) {
      const confined = await confinePath({
        roots: this.details.roots,
        path: change.root,
        access: 'write',
        ...(this.details.toolName === undefined ? {} : { toolName: this.details.toolName }),
        ...(this.details.planId === undefined ? {} : { planId: this.details.planId }),
      });
      stack = [{ name: '', directory: await openConfinedDirectory(confined) }];
      this.#stacks.set(key, stack);
    }
    let depth = 0;
    while (depth < segments.length && depth + 1 < stack.length && stack[depth + 1]?.name === segments[depth]) depth++;
    for (const left of stack.splice(depth + 1)) await left.directory.close();
    for (let index = depth; index < segments.length; index++) {
      const segment = segments[index] as string;
      const parent = (stack[stack.length - 1] as { readonly directory: ConfinedDirectory }).directory;
      stack.push({ name: segment, directory: await parent.openDirectory(segment) });
    }
    return (stack[stack.length - 1] as { readonly directory: ConfinedDirectory }).directory;
  }

  async close(): Promise<void> {
    for (const stack of this.#stacks.values()) {
      for (const entry of stack.splice(0).reverse()) await entry.directory.close().catch(() => undefined);
    }
    this.#stacks.clear();
  }
}
