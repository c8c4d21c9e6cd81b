import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CliIo } from './cli-io';

export const fixtures = path.join(__dirname, '__fixtures__');

/**
 * An in-memory CliIo that collects what the command prints. Its state folder
 * is a fresh temporary one (AGENTS_STATE_DIR), unless `env` names one, so no
 * test reads what another left there (cached tool lists, kept approvals).
 */
export function captureIo(env: Record<string, string | undefined> = {}, cwd = fixtures): CliIo & { out: () => string; err: () => string } {
  let stdout = '';
  let stderr = '';
  return {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    cwd,
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'], AGENTS_STATE_DIR: temporaryFolder('ca-cli-state-'), ...env },
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

/** Folder of the configuration with a real MCP server (server-everything, counting its starts in $TEST_STARTS). */
export const withMcpFixtures = path.join(fixtures, 'with-mcp');

/**
 * An in-memory CliIo in the folder of the MCP configuration, with a fresh
 * workspace and a file that counts the server's starts.
 */
export function captureMcpIo(env: Record<string, string> = {}): CliIo & { out: () => string; err: () => string; workspace: string; starts: () => number[] } {
  const workspace = temporaryFolder();
  const startsFile = path.join(workspace, '.server-starts');
  const io = captureIo({ TEST_WORKSPACE: workspace, TEST_FIXTURES: fixtures, TEST_STARTS: startsFile, ...env }, withMcpFixtures);
  return {
    ...io,
    workspace,
    starts: () => (fs.existsSync(startsFile) ? fs.readFileSync(startsFile, 'utf8').trim().split('\n').filter(Boolean).map(Number) : []),
  };
}

/** Writes `content` to `name` in `folder` and returns the file's path. */
export function writeFixture(folder: string, name: string, content: string): string {
  const file = path.join(folder, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  return file;
}
