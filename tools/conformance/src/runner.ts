// The runner folder (`tools/conformance/runner`): outside suites that need
// Node 22, pinned by their own package-lock.json, outside the npm
// workspaces so that its Node 22 binary shadows nothing. This module installs
// it when needed and runs its programs, each in a process group of its own.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** The runner folder. */
export const RUNNER_DIR = join(__dirname, '..', 'runner');
/** The Node 22 binary the `node` package of the runner installs. */
export const NODE_22 = join(RUNNER_DIR, 'node_modules', '.bin', 'node');
/** The entry of `@modelcontextprotocol/conformance`. */
export const CONFORMANCE_CLI = join(RUNNER_DIR, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

/** The launcher of `@modelcontextprotocol/inspector` 2.x (`--cli` runs its CLI mode). */
export const INSPECTOR_CLI = join(RUNNER_DIR, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');

/** Written into node_modules after an install: the hash of the lockfile it installed. */
const INSTALLED_MARK = join(RUNNER_DIR, 'node_modules', '.ca-installed-lock');

/**
 * Installs the runner folder from its lockfile (`npm ci --prefix`), unless
 * what is installed came from the same lockfile. Needs the npm registry the
 * first time only.
 */
export async function ensureRunnerInstalled(): Promise<void> {
  const lock = createHash('sha256')
    .update(readFileSync(join(RUNNER_DIR, 'package-lock.json')))
    .digest('hex');
  if (
    existsSync(NODE_22) &&
    existsSync(CONFORMANCE_CLI) &&
    existsSync(INSPECTOR_CLI) &&
    existsSync(INSTALLED_MARK) &&
    readFileSync(INSTALLED_MARK, 'utf8') === lock
  )
    return;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  await promisify(execFile)(npm, ['ci', '--prefix', RUNNER_DIR, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: RUNNER_DIR,
    maxBuffer: 16 * 1024 * 1024,
  });
  writeFileSync(INSTALLED_MARK, lock);
}

/** What a program of the runner printed, and how it ended. */
export interface RunnerOutput {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when `timeoutMs` ran out and the group was killed. */
  readonly timedOut: boolean;
}

/**
 * Runs `node22 <args>` in the runner folder, in a process group of its own:
 * when it ends (or `timeoutMs` runs out), SIGKILL goes to the whole group,
 * so that nothing it started — a client program whose shell the suite
 * killed on its own timeout — outlives it. With `killGroupAtExit: false` the
 * group is killed on timeout only: a test that checks what the program left
 * behind when it ended on its own. `onStart` gets the program's process id.
 */
export function runWithNode22(
  args: readonly string[],
  options: { readonly timeoutMs: number; readonly env?: NodeJS.ProcessEnv; readonly killGroupAtExit?: boolean; readonly onStart?: (pid: number) => void },
): Promise<RunnerOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE_22, [...args], { cwd: RUNNER_DIR, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? process.env });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    if (child.pid !== undefined) options.onStart?.(child.pid);
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (exitCode, signal) => {
      clearTimeout(timer);
      if (options.killGroupAtExit !== false || timedOut) killGroup();
      resolve({ exitCode, signal, stdout, stderr, timedOut });
    });
  });
}

/** A scenario as `conformance list` names it, with the spec versions it belongs to. */
export interface ListedScenario {
  readonly name: string;
  readonly specVersions: readonly string[];
}

/**
 * The scenarios of one mode, read from `conformance list` (`client`: the
 * scenarios that test a client; `server`: those that test a server).
 */
export async function listScenarios(mode: 'client' | 'server'): Promise<ListedScenario[]> {
  const output = await runWithNode22([CONFORMANCE_CLI, 'list'], { timeoutMs: 60_000 });
  if (output.exitCode !== 0) throw new Error(`conformance list failed (exit ${output.exitCode}): ${output.stderr}`);
  const heading = mode === 'client' ? 'Client scenarios' : 'Server scenarios';
  const section = output.stdout.split(/\n\s*\n/).find((part) => part.trimStart().startsWith(heading));
  if (section === undefined) throw new Error(`conformance list printed no "${heading}" section:\n${output.stdout}`);
  return [...section.matchAll(/^\s*- (\S+) \[([^\]]*)\]/gm)].map((match) => ({ name: match[1] as string, specVersions: (match[2] as string).split(',') }));
}
