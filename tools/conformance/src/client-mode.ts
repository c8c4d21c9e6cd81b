// The suite's client mode: it starts a test server for a scenario, runs the
// client program against it (appending the server's URL to the command)
// and records its checks in `<output>/<scenario>-<time>/checks.json`.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFORMANCE_CLI, runWithNode22, type RunnerOutput } from './runner';

/** One check of a scenario, as the suite records it. */
export interface ConformanceCheck {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  /** `WARNING` is a SHOULD not met: the suite fails the scenario for it, and so do these tests. */
  readonly status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  readonly errorMessage?: string;
}

/** What one client scenario gave. */
export interface ClientScenarioResult {
  readonly scenario: string;
  readonly checks: readonly ConformanceCheck[];
  /** The suite's own process. */
  readonly suite: RunnerOutput;
  /** What the client program printed. */
  readonly clientStdout: string;
  readonly clientStderr: string;
}

/** How long the suite gives the client program (its `--timeout`); the suite's process gets this plus a margin. */
export const CLIENT_TIMEOUT_MS = 30_000;

/**
 * Runs one client scenario: `command` is the client program's command line,
 * to which the suite appends the server URL. The suite splits it on spaces
 * (and runs it through a shell), so no part may contain whitespace or a
 * character the shell reads.
 */
export async function runClientScenario(scenario: string, command: readonly string[]): Promise<ClientScenarioResult> {
  const unsafe = command.find((part) => !/^[\w./@:=+-]+$/.test(part));
  if (unsafe !== undefined) {
    throw new Error(
      `The client command part ${JSON.stringify(unsafe)} has whitespace or a shell character; the suite splits --command on spaces and runs it through a shell. Move the checkout (or Node) to a path without them.`,
    );
  }
  const output = await mkdtemp(join(tmpdir(), 'ca-conformance-'));
  try {
    const suite = await runWithNode22(
      [CONFORMANCE_CLI, 'client', '--command', command.join(' '), '--scenario', scenario, '--timeout', String(CLIENT_TIMEOUT_MS), '--output-dir', output],
      { timeoutMs: CLIENT_TIMEOUT_MS + 30_000 },
    );
    // The scenario name may hold a slash (`auth/…`): its results are one level down.
    const prefix = join(output, scenario);
    const parent = join(prefix, '..');
    const base = prefix.slice(parent.length + 1);
    const folder = (await readdir(parent).catch(() => [])).find((name) => name.startsWith(`${base}-`));
    const read = (file: string) => (folder === undefined ? Promise.resolve('') : readFile(join(parent, folder, file), 'utf8').catch(() => ''));
    const checksText = await read('checks.json');
    return {
      scenario,
      checks: checksText === '' ? [] : (JSON.parse(checksText) as ConformanceCheck[]),
      suite,
      clientStdout: await read('stdout.txt'),
      clientStderr: await read('stderr.txt'),
    };
  } finally {
    await rm(output, { recursive: true, force: true });
  }
}

/** The checks that fail a scenario (FAILURE, and WARNING as the suite counts it), one line each. */
export function failedChecks(checks: readonly ConformanceCheck[]): string[] {
  return checks
    .filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')
    .map((check) => `${check.status} ${check.id}: ${check.description}${check.errorMessage === undefined ? '' : ` — ${check.errorMessage}`}`);
}
