import fs from 'node:fs';
import path from 'node:path';
import { MemoryDefinitionPins, type DefinitionLock } from '@ca/tool-lifecycle';
import { CliError } from './cli-error';
import type { AgentsConfig } from './config';

/** The lockfile's name, beside the configuration (like a package lock). */
export const LOCKFILE_NAME = 'agents.lock.json';

/** Where the configuration's lockfile is: its `lockfile` key, else `agents.lock.json` in its folder. */
export function lockfilePath(config: AgentsConfig): string {
  return path.resolve(config.baseDir, config.lockfile ?? LOCKFILE_NAME);
}

/**
 * The pinned definitions of the lockfile, or undefined when there is none.
 * @throws CliError (CLI_CONFIG_INVALID) for a lockfile that is not a definition lock.
 */
export function readLockfile(config: AgentsConfig): DefinitionLock | undefined {
  const file = lockfilePath(config);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError({ code: 'CLI_CONFIG_INVALID', message: `Lockfile ${file} cannot be read: ${(error as Error).message}`, cause: error });
  }
  try {
    return new MemoryDefinitionPins(JSON.parse(text) as DefinitionLock).toLock();
  } catch (error) {
    throw new CliError({
      code: 'CLI_CONFIG_INVALID',
      message: `Lockfile ${file} is not a lock of tool definitions (${(error as Error).message}). Write it anew with 'agents tools lock'.`,
      cause: error,
    });
  }
}

/** Writes the lock (keys in a stable order, one tool per block, as a lockfile under version control wants). */
export function writeLockfile(config: AgentsConfig, lock: DefinitionLock): string {
  const file = lockfilePath(config);
  fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  return file;
}
