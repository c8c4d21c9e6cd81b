import { confinePath, openConfinedDirectory, PathConfinementError, resolveConfinementRoot, type ConfinedDirectory } from '@ca/tool-context';
import { CliError } from './cli-error';
import { checkStateFolder } from './state-folder';

/** Most bytes of one state file the command reads. */
export const MAX_STATE_FILE_BYTES = 64 * 1024 * 1024;

/**
 * A folder of the command's state (the tool-list cache, stored results),
 * checked like the state folder (the user's own, not a link, writable by
 * nobody else) and then opened and verified through its descriptor: every
 * later operation names one entry of it and acts on the folder that was
 * checked, so a folder swapped for a link afterwards changes nothing.
 * `undefined` when it does not exist and `create` is false.
 * @throws CliError `CLI_STATE_UNSAFE` when the folder cannot be used.
 */
export async function openStateDirectory(folder: string, role: string, create: boolean): Promise<ConfinedDirectory | undefined> {
  if (!checkStateFolder(folder, role, { create })) return undefined;
  try {
    const root = await resolveConfinementRoot({ name: role, path: folder, writable: true });
    return await openConfinedDirectory(await confinePath({ roots: [root], path: '.', access: 'write' }));
  } catch (error) {
    throw unsafeState(folder, role, error);
  }
}

/**
 * The entry `name` of a verified state folder as a folder of its own (made,
 * mode 0700, with `create`), opened without following a link and checked to
 * be the user's own and closed to others. `undefined` when it does not exist
 * and `create` is false.
 * @throws CliError `CLI_STATE_UNSAFE` for a link, another user's folder or one others may enter.
 */
export async function openStateSubfolder(parent: ConfinedDirectory, name: string, role: string, create: boolean): Promise<ConfinedDirectory | undefined> {
  const where = parent.childPath(name);
  try {
    let stats = await parent.lstat(name);
    if (stats === undefined) {
      if (!create) return undefined;
      await parent.makeDirectory(name, 0o700).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      });
      stats = await parent.lstat(name);
    }
    if (stats === undefined) return undefined;
    if (stats.isSymbolicLink()) throw new Error('it is a symbolic link');
    const folder = await parent.openDirectory(name);
    const uid = process.getuid?.();
    if ((uid !== undefined && folder.stats.uid !== uid) || (process.platform !== 'win32' && (folder.stats.mode & 0o077) !== 0)) {
      await folder.close();
      throw new Error(`it must be a folder of yours that only you can enter (mode ${(folder.stats.mode & 0o777).toString(8)}, uid ${folder.stats.uid})`);
    }
    return folder;
  } catch (error) {
    throw unsafeState(where, role, error);
  }
}

/** Reads a whole regular file entry of a verified folder (never a link, FIFO or device), at most {@link MAX_STATE_FILE_BYTES}. */
export async function readStateFile(folder: ConfinedDirectory, name: string): Promise<Buffer | undefined> {
  if ((await folder.lstat(name)) === undefined) return undefined;
  const file = await folder.openFile(name);
  try {
    if (file.stats.size > MAX_STATE_FILE_BYTES)
      throw new Error(`${file.path} holds ${file.stats.size} bytes, more than the ${MAX_STATE_FILE_BYTES} a state file may`);
    return await file.handle.readFile();
  } finally {
    await file.close();
  }
}

function unsafeState(folder: string, role: string, error: unknown): CliError {
  if (CliError.isInstance(error)) return error;
  const why = PathConfinementError.isInstance(error) ? error.message : (error as Error)?.message;
  return new CliError({
    code: 'CLI_STATE_UNSAFE',
    message: `The state folder ${folder} (${role}) cannot be used: ${why}. Set --state-dir or AGENTS_STATE_DIR to a folder of your own.`,
    cause: error,
  });
}
