import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** Why {@link findProgram} found nothing: the code `execvp` would have failed with. */
export interface ProgramNotFound {
  readonly found: false;
  /** `ENOENT` (no such program) or `EACCES` (found, not executable). */
  readonly code: 'ENOENT' | 'EACCES';
}

/**
 * @internal Finds a program as `execvp` would: a name holding `/` is taken as
 * it is (relative to `cwd`), any other name is looked up in the folders of
 * `searchPath`. Resolves to its absolute path when an executable regular file
 * is there.
 */
export async function findProgram(command: string, searchPath: string | undefined, cwd: string | undefined): Promise<{ readonly found: true; readonly path: string } | ProgramNotFound> {
  if (command.includes('/')) {
    const path = isAbsolute(command) ? command : resolve(cwd ?? process.cwd(), command);
    return checkExecutable(path);
  }
  let denied = false;
  for (const folder of (searchPath ?? '').split(delimiter)) {
    // An empty entry means the working folder, as execvp reads it.
    const candidate = resolve(cwd ?? process.cwd(), folder === '' ? '.' : folder, command);
    const checked = await checkExecutable(candidate);
    if (checked.found) return checked;
    if (checked.code === 'EACCES') denied = true;
  }
  return { found: false, code: denied ? 'EACCES' : 'ENOENT' };
}

async function checkExecutable(path: string): Promise<{ readonly found: true; readonly path: string } | ProgramNotFound> {
  const stats = await stat(path).catch(() => undefined);
  if (stats === undefined) return { found: false, code: 'ENOENT' };
  if (!stats.isFile()) return { found: false, code: 'EACCES' };
  try {
    await access(path, constants.X_OK);
    return { found: true, path };
  } catch {
    return { found: false, code: 'EACCES' };
  }
}

/** @internal The first of `names` found on the runtime's own `PATH` (or the fixed system folders), as an absolute path. */
export async function findSystemProgram(name: string): Promise<string | undefined> {
  const searchPath = [process.env['PATH'] ?? '', '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'].join(delimiter);
  for (const folder of searchPath.split(delimiter)) {
    if (folder === '' || !isAbsolute(folder)) continue;
    const checked = await checkExecutable(join(folder, name));
    if (checked.found) return checked.path;
  }
  return undefined;
}
