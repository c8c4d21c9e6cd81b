// Shared by the sandbox specs (excluded from the build): temporary trees and
// a byte-exact snapshot of them.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { lstat, mkdtemp, readdir, readFile, readlink, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isProcessAlive } from '../testing';

const folders: string[] = [];

/** A new, real (symlink-resolved) temporary folder, removed by {@link removeTemporaryFolders}. */
export async function makeTemporaryFolder(label = 'ca-sandbox-test-'): Promise<string> {
  const folder = await realpath(await mkdtemp(join(tmpdir(), label)));
  folders.push(folder);
  return folder;
}

export async function removeTemporaryFolders(): Promise<void> {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
}

/** Every entry under `root`: type, permission bits, and the sha256 of a file's content or a link's target. */
export async function snapshotTree(root: string): Promise<Record<string, string>> {
  const snapshot: Record<string, string> = {};
  const visit = async (folder: string, prefix: string): Promise<void> => {
    for (const name of (await readdir(folder)).sort()) {
      const path = join(folder, name);
      const relative = prefix === '' ? name : `${prefix}/${name}`;
      const stats = await lstat(path);
      const mode = (stats.mode & 0o7777).toString(8);
      if (stats.isSymbolicLink()) snapshot[relative] = `link ${await readlink(path)}`;
      else if (stats.isDirectory()) {
        snapshot[relative] = `dir ${mode}`;
        await visit(path, relative);
      } else
        snapshot[relative] = `file ${mode} ${createHash('sha256')
          .update(await readFile(path))
          .digest('hex')}`;
    }
  };
  await visit(root, '');
  return snapshot;
}

/** Pids of the live processes whose command line holds `argument` as one of its words. */
export function processesWithArgument(argument: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(argument) && isProcessAlive(Number(entry));
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/** A hang guard for conditions that become true a little after a call returns; not a speed requirement. */
export async function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

/** A sleep duration no other process uses, to find the process by its command line. */
export function uniqueSleep(): string {
  return `60.${process.pid}${Math.floor(Math.random() * 1e6)}`;
}

/** True when this process may start one of another user (root): then {@link runNodeAsAnotherUser} runs as nobody. */
export const MAY_CHANGE_USER = process.getuid?.() === 0;

/**
 * Runs `script` in a Node process of another user — nobody (65534) when this
 * process may change users, else this one — with only `env`, and returns the
 * JSON it wrote on stdout.
 * @throws when the script exits with another code than 0, with its stderr.
 */
export async function runNodeAsAnotherUser(script: string, env: Record<string, string>, cwd = '/'): Promise<unknown> {
  const child = spawn(process.execPath, ['-e', script], {
    env,
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(MAY_CHANGE_USER ? { uid: 65534, gid: 65534 } : {}),
  });
  let output = '';
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`the script failed (exit ${String(code)}): ${errors.trim()}`);
  return JSON.parse(output) as unknown;
}
