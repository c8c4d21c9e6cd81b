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
export async function applyOverlayChanges<Captured>(changes: readonly PendingChange[], hooks: OverlayApplyHooks<Captured>, details: ApplyDetails): Promise<void> {
  const captured = new Map<PendingChange, Captured>();
  const cursors = new FolderCursors(details);
  try {
    if (hooks.capture !== undefined) {
      for (const change of changes) {
        if (change.kind === 'create') continue;
        try {
          const target = await cursors.targetOf(change);
          captured.set(change, await hooks.capture(change, target));
        } catch (error) {
          throw new ApplyFailure(change, 0, error);
        }
      }
    }
    const folderModes: { readonly change: PendingChange; readonly mode: number }[] = [];
    let appliedCount = 0;
    for (const change of changes) {
      try {
        const target = await cursors.targetOf(change);
        await applyOne(change, target, folderModes);
      } catch (error) {
        throw new ApplyFailure(change, appliedCount, error);
      }
      appliedCount++;
      hooks.applied?.(change, captured.get(change));
    }
    for (const { change, mode } of folderModes.reverse()) {
      try {
        const { directory, name } = await cursors.targetOf(change);
        await directory.chmod(name, mode);
      } catch (error) {
        throw new ApplyFailure(change, appliedCount, error);
      }
    }
  } finally {
    await cursors.close();
  }
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
      for (let position = 0; ; ) {
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

  async targetOf(change: PendingChange): Promise<OverlayTarget> {
    const segments = change.relativePath.split('/');
    const name = segments.pop() as string;
    return { directory: await this.#folder(change, segments), name };
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
