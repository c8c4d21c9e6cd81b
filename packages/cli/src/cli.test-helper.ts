import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CliIo } from './cli-io';

export const fixtures = path.join(__dirname, '__fixtures__');

/** An in-memory CliIo that collects what the command prints. */
export function captureIo(env: Record<string, string | undefined> = {}, cwd = fixtures): CliIo & { out: () => string; err: () => string } {
  let stdout = '';
  let stderr = '';
  return {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    cwd,
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...env },
    interactive: false,
    out: () => stdout,
    err: () => stderr,
  };
}

const created: string[] = [];

/** A temporary folder removed by {@link removeTemporaryFolders}. */
export function temporaryFolder(label = 'ca-cli-'): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), label));
  created.push(folder);
  return folder;
}

export function removeTemporaryFolders(): void {
  for (const folder of created.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
}
