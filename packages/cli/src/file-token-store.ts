import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { McpStoredCredentials, McpTokenStore } from '@ca/adapters-mcp';
import { CliError } from './cli-error';

/**
 * Keeps MCP OAuth credentials in files only the user can read: one file per
 * server and client (named by a hash of the key) in a folder of mode 0700,
 * each file of mode 0600, written to a temporary file and renamed, so a
 * crash never leaves half a file. A folder or file that others could read or
 * write, or that is a symbolic link, is refused rather than used.
 */
export class FileTokenStore implements McpTokenStore {
  constructor(readonly folder: string) {}

  load(key: string): McpStoredCredentials | undefined {
    // Checked before anything is read or written: a folder others can enter must not receive tokens either.
    let folder: fs.Stats | undefined;
    try {
      folder = fs.lstatSync(this.folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw this.#unusable(this.folder, (error as Error).message, error);
    }
    if (folder === undefined) return undefined;
    this.#checkOwnedPrivate(this.folder, folder, 'folder');
    const file = this.#file(key);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw this.#unusable(file, (error as Error).message, error);
    }
    this.#checkOwnedPrivate(file, stat, 'file');
    let stored: unknown;
    try {
      stored = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (error) {
      throw this.#unusable(file, `it is not the JSON this command writes (${(error as Error).message}); delete it and sign in again`, error);
    }
    const entry = stored as { key?: unknown; credentials?: unknown };
    if (entry?.key !== key || typeof entry.credentials !== 'object' || entry.credentials === null) return undefined;
    return entry.credentials as McpStoredCredentials;
  }

  save(key: string, credentials: McpStoredCredentials): void {
    this.#ensureFolder();
    const file = this.#file(key);
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    const descriptor = fs.openSync(temporary, 'wx', 0o600);
    try {
      fs.writeFileSync(descriptor, `${JSON.stringify({ key, credentials }, null, 2)}\n`);
    } finally {
      fs.closeSync(descriptor);
    }
    fs.renameSync(temporary, file);
  }

  delete(key: string): void {
    fs.rmSync(this.#file(key), { force: true });
  }

  #file(key: string): string {
    return path.join(this.folder, `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`);
  }

  #ensureFolder(): void {
    fs.mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    this.#checkOwnedPrivate(this.folder, fs.lstatSync(this.folder), 'folder');
  }

  #checkOwnedPrivate(target: string, stat: fs.Stats, kind: 'file' | 'folder'): void {
    if (stat.isSymbolicLink()) throw this.#unusable(target, 'it is a symbolic link');
    if (kind === 'file' ? !stat.isFile() : !stat.isDirectory()) throw this.#unusable(target, `it is not a ${kind}`);
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) throw this.#unusable(target, 'it belongs to another user');
    if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
      throw this.#unusable(
        target,
        `others may ${kind === 'file' ? 'read' : 'enter'} it (mode ${(stat.mode & 0o777).toString(8)}); run chmod ${kind === 'file' ? '600' : '700'} on it, or delete it and sign in again`,
      );
    }
  }

  #unusable(target: string, why: string, cause?: unknown): CliError {
    return new CliError({
      code: 'CLI_STATE_UNSAFE',
      message: `The MCP sign-in store ${target} cannot be used: ${why}. It holds OAuth tokens, so it must be a ${target === this.folder ? 'folder' : 'file'} of yours that only you can read (set --state-dir or AGENTS_STATE_DIR to use another place).`,
      ...(cause === undefined ? {} : { cause }),
    });
  }
}
