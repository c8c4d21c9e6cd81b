import { accessSync, constants, statSync } from 'node:fs';
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
 * `searchPath`. Synchronous on purpose: a `stat` per folder of the `PATH`
 * takes microseconds, where a round trip through libuv's thread pool costs
 * far more on a busy machine, on the path of every sandboxed start.
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
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats === undefined) return { found: false, code: 'ENOENT' };
  if (!stats.isFile()) return { found: false, code: 'EACCES' };
  try {
    accessSync(path, constants.X_OK);
    return { found: true, path };
  } catch {
    return { found: false, code: 'EACCES' };
  }
}

/** @internal A program found on the runtime's own `PATH` (or the usual system folders), as an absolute path. */
export function findSystemProgram(name: string): string | undefined {
  const searchPath = [process.env['PATH'] ?? '', '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'].join(delimiter);
  for (const folder of searchPath.split(delimiter)) {
    if (folder === '' || !isAbsolute(folder)) continue;
    const checked = checkExecutable(join(folder, name));
    if (checked.found) return checked.path;
  }
  return undefined;
}
