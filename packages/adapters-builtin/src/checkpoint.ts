import { open } from 'node:fs/promises';
import { messageOf } from '@ca/domain';
import { openConfinedParent, type Change, type ConfinedContent, type ConfinedDirectory, type ToolExecutionContext } from '@ca/tool-context';
import { BuiltinToolError } from './builtin-tool-error';
import { guardPath } from './resource-paths';
import { copyHandle, UNDO_FORMAT, type BuiltinFileState, type BuiltinFileUndo } from './undo-store';

/** A point in a plan's changes to roll back to; JSON-serialisable. */
export interface BuiltinCheckpoint {
  /** The plan the checkpoint belongs to. */
  readonly planId: string;
  /** How many changes the plan had recorded when the checkpoint was made. */
  readonly changeCount: number;
}

/** What {@link rollback} did. */
export interface RollbackReport {
  /** Paths put back, in the order they were restored (newest change first). */
  readonly restored: readonly string[];
  /** Changes after the checkpoint that carry no built-in undo data (a command, another source's tool); left as they are. */
  readonly skipped: readonly Change[];
}

const ROLLBACK_TOOL = 'rollback';

// Changes already undone, per plan (keyed by the plan's shared, stable changes view).
const undone = new WeakMap<readonly Change[], WeakSet<Change>>();

/**
 * Marks the current end of the plan's changes, for {@link rollback}.
 *
 * @example
 * const mark = createCheckpoint(ctx);
 * await runtime.execute('builtin.fs.write', { path: 'a.txt', content: 'x' }, ctx);
 * await rollback(ctx, mark); // a.txt is as it was
 *
 * @throws Never.
 */
export function createCheckpoint(ctx: ToolExecutionContext): BuiltinCheckpoint {
  return Object.freeze({ planId: ctx.planId, changeCount: ctx.changes.length });
}

/**
 * Undoes, newest first, every change recorded after `checkpoint` that carries
 * built-in undo data: deleted files, folders and links are re-created,
 * previous contents and permission bits restored, created files and folders
 * removed. Every path is checked against the plan's writable resources again
 * before it is touched. Changes already rolled back are not undone twice;
 * changes without built-in undo data are reported as `skipped`.
 *
 * Call it before the plan ends: large previous contents live in the plan's
 * backup folder, which is removed when the plan's write tools are deactivated.
 *
 * @throws {BuiltinToolError} `BUILTIN_ROLLBACK_FAILED` when the checkpoint
 *   belongs to another plan or lies beyond the recorded changes, or when a
 *   change could not be undone (the others are still attempted; `cause` is an
 *   `AggregateError` of the failures).
 */
export async function rollback(ctx: ToolExecutionContext, checkpoint: BuiltinCheckpoint): Promise<RollbackReport> {
  const planId = ctx.planId;
  if (
    typeof checkpoint !== 'object' ||
    checkpoint === null ||
    checkpoint.planId !== planId ||
    !Number.isSafeInteger(checkpoint.changeCount) ||
    checkpoint.changeCount < 0 ||
    checkpoint.changeCount > ctx.changes.length
  ) {
    throw new BuiltinToolError({
      code: 'BUILTIN_ROLLBACK_FAILED',
      planId,
      message: `Cannot roll back plan "${planId}" to ${JSON.stringify(checkpoint)}: it is not a checkpoint of this plan made by createCheckpoint(ctx).`,
    });
  }
  let done = undone.get(ctx.changes);
  if (done === undefined) {
    done = new WeakSet();
    undone.set(ctx.changes, done);
  }
  const restored: string[] = [];
  const skipped: Change[] = [];
  const failures: Error[] = [];
  for (let index = ctx.changes.length - 1; index >= checkpoint.changeCount; index--) {
    const change = ctx.changes[index];
    if (done.has(change)) continue;
    const undo = change.undo;
    if (!isFileUndo(undo)) {
      skipped.push(change);
      continue;
    }
    try {
      const guarded = await guardPath(ctx, { toolName: ROLLBACK_TOOL, path: undo.path, access: 'write', followFinalLink: false });
      if (guarded.path !== undo.path) {
        throw new Error(`the path now resolves to "${guarded.path}" through a symbolic link`);
      }
      const { directory, name } = await openConfinedParent(guarded.confined);
      try {
        await restore(directory, name, undo.before);
      } finally {
        await directory.close();
      }
      done.add(change);
      restored.push(undo.path);
    } catch (error) {
      const reason = messageOf(error);
      failures.push(new Error(`${change.kind} of "${undo.path}" by ${change.toolName}: ${reason}`, { cause: error }));
    }
  }
  if (failures.length > 0) {
    throw new BuiltinToolError({
      code: 'BUILTIN_ROLLBACK_FAILED',
      planId,
      cause: new AggregateError(failures, 'rollback failures'),
      message: `Rolling back plan "${planId}" left ${failures.length} change(s) in place: ${failures.map((failure) => failure.message).join('; ')}. The other changes were undone; fix the cause and call rollback again (undone changes are not undone twice).`,
    });
  }
  return { restored, skipped };
}

function isFileUndo(value: unknown): value is BuiltinFileUndo {
  const undo = value as Partial<BuiltinFileUndo> | null;
  return (
    typeof undo === 'object' &&
    undo !== null &&
    undo.format === UNDO_FORMAT &&
    typeof undo.path === 'string' &&
    typeof undo.before === 'object' &&
    undo.before !== null
  );
}

// Every step acts on the entry of the verified parent folder, never through a name that could have become a link.
async function restore(directory: ConfinedDirectory, name: string, before: BuiltinFileState): Promise<void> {
  const current = await directory.lstat(name);
  const removeCurrent = async (): Promise<void> => {
    if (current === undefined) return;
    // A folder is removed only when empty: anything in it was not made by the undone changes.
    if (current.isDirectory()) await directory.removeDirectory(name);
    else await directory.remove(name);
  };
  switch (before.type) {
    case 'absent':
      await removeCurrent();
      return;
    case 'file': {
      if (current !== undefined && !current.isFile()) await removeCurrent();
      let content: ConfinedContent;
      if (before.contentBase64 !== undefined) content = Buffer.from(before.contentBase64, 'base64');
      else if (before.backupPath !== undefined) content = copyFrom(before.backupPath);
      else throw new Error('the undo data holds neither the content nor a backup');
      // The previous file comes back as a new file under its name; other hard links, if any, are left as they are.
      await directory.writeFile(name, content, { mode: before.mode, allowHardLinks: true });
      return;
    }
    case 'directory':
      if (current !== undefined && !current.isDirectory()) await removeCurrent();
      if (current === undefined || !current.isDirectory()) await directory.makeDirectory(name);
      await directory.chmod(name, before.mode);
      return;
    case 'symlink':
      await removeCurrent();
      await directory.symlink(before.linkTarget, name);
      return;
    default:
      throw new Error(`unknown previous state ${JSON.stringify(before)}`);
  }
}

function copyFrom(backupPath: string): (handle: import('node:fs/promises').FileHandle) => Promise<void> {
  return async (handle) => {
    const backup = await open(backupPath, 'r');
    try {
      await copyHandle(backup, handle);
    } finally {
      await backup.close();
    }
  };
}
