import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { failedChecks, type ConformanceCheck } from './client-mode';
import { CONFORMANCE_CLI, runWithNode22, type RunnerOutput } from './runner';

/** How long one server scenario may take before its suite run is killed. */
export const SERVER_SCENARIO_TIMEOUT_MS = 90_000;

/** One server scenario's outcome. */
export interface ServerScenarioResult {
  readonly scenario: string;
  readonly checks: readonly ConformanceCheck[];
  readonly suite: RunnerOutput;
  /** The suite ended with success, with no FAILURE or WARNING check and at least one SUCCESS. */
  readonly passed: boolean;
}

/**
 * Runs one server scenario of the suite against the MCP endpoint at `url`:
 * `conformance server --url <url> --scenario <name> --output-dir <temp>`,
 * then `<temp>/server-<scenario>-<time>/checks.json`; the temporary folder
 * is removed afterwards.
 */
export async function runServerScenario(scenario: string, url: string): Promise<ServerScenarioResult> {
  const output = await mkdtemp(join(tmpdir(), 'ca-conformance-server-'));
  try {
    const suite = await runWithNode22([CONFORMANCE_CLI, 'server', '--url', url, '--scenario', scenario, '--output-dir', output], {
      timeoutMs: SERVER_SCENARIO_TIMEOUT_MS,
    });
    const folder = (await readdir(output).catch(() => [])).find((name) => name.startsWith(`server-${scenario}-`));
    const checksText = folder === undefined ? '' : await readFile(join(output, folder, 'checks.json'), 'utf8').catch(() => '');
    const checks = checksText === '' ? [] : (JSON.parse(checksText) as ConformanceCheck[]);
    const passed = suite.exitCode === 0 && failedChecks(checks).length === 0 && checks.some((check) => check.status === 'SUCCESS');
    return { scenario, checks, suite, passed };
  } finally {
    await rm(output, { recursive: true, force: true });
  }
}
