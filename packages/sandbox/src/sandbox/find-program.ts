import { accessSync, constants, statSync, type Stats } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** Why {@link findProgram} found nothing: the code `execvp` would have failed with. */
export interface ProgramNotFound {
  readonly found: false;
  /** `ENOENT` (no such program) or `EACCES` (found, not executable). */
  readonly code: 'ENOENT' | 'EACCES';
}

/** Where {@link findProgram} found the program. */
export interface ProgramFound {
  readonly found: true;
  readonly path: string;
}

/**
 * @internal Finds a program as `execvp` would: a name holding `/` is taken as
 * it is (relative to `cwd`), any other name is looked up in the folders of
 * `searchPath`, in order. A folder that cannot be searched (no permission, not
 * a folder, a loop of links…) is skipped, as `execvp` skips it; when nothing
 * is found and a folder refused access, the answer is `EACCES`. Synchronous on
 * purpose: a `stat` per folder of the `PATH` takes microseconds, where a round
 * trip through libuv's thread pool costs far more on a busy machine, on the
 * path of every sandboxed start.
 */
export function findProgram(command: string, searchPath: string | undefined, cwd: string | undefined): ProgramFound | ProgramNotFound {
  if (command.includes('/')) return checkExecutable(isAbsolute(command) ? command : resolve(cwd ?? process.cwd(), command));
  let denied = false;
  for (const folder of (searchPath ?? '').split(delimiter)) {
    // An empty entry means the working folder, as execvp reads it.
    const checked = checkExecutable(resolve(cwd ?? process.cwd(), folder === '' ? '.' : folder, command));
    if (checked.found) return checked;
    if (checked.code === 'EACCES') denied = true;
  }
  return { found: false, code: denied ? 'EACCES' : 'ENOENT' };
}

function checkExecutable(path: string): ProgramFound | ProgramNotFound {
  let stats: Stats | undefined;
  try {
    // `throwIfNoEntry: false` spares ENOENT only: a folder of the path that cannot be searched throws EACCES, one that is a file ENOTDIR.
    stats = statSync(path, { throwIfNoEntry: false });
  } catch (error) {
    return { found: false, code: (error as NodeJS.ErrnoException).code === 'EACCES' ? 'EACCES' : 'ENOENT' };
  }
  if (stats === undefined) return { found: false, code: 'ENOENT' };
  if (!stats.isFile()) return { found: false, code: 'EACCES' };
  try {
    accessSync(path, constants.X_OK);
    return { found: true, path };
  } catch {
    return { found: false, code: 'EACCES' };
  }
}

/** The folders searched after the runtime's `PATH` for the programs the sandbox starts (a service's `PATH` often lacks the `sbin` ones). */
export const SYSTEM_PROGRAM_FOLDERS: readonly string[] = Object.freeze(['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']);

/** Where {@link findSystemProgram} looks, for messages: `the PATH (…) and /usr/local/sbin, …, /bin`. */
export function describeSystemProgramSearch(): string {
  return `the folders of the PATH and ${SYSTEM_PROGRAM_FOLDERS.join(', ')}`;
}

/**
 * @internal A program found in the folders of the runtime's own `PATH`, then
 * in {@link SYSTEM_PROGRAM_FOLDERS}, as an absolute path. Relative entries of
 * the `PATH` and folders that cannot be searched are skipped.
 */
export function findSystemProgram(name: string): string | undefined {
  const searchPath = [process.env['PATH'] ?? '', ...SYSTEM_PROGRAM_FOLDERS].join(delimiter);
  for (const folder of searchPath.split(delimiter)) {
    if (folder === '' || !isAbsolute(folder)) continue;
    const checked = checkExecutable(join(folder, name));
    if (checked.found) return checked.path;
  }
  return undefined;
}
