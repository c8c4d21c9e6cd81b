// The official MCP conformance suite (@modelcontextprotocol/conformance, in
// the runner folder, under Node 22), client mode, against @ca/adapters-mcp:
// each scenario's client program (src/clients, built) runs on this Node
// through the built packages, as a service would use them. One scenario at
// a time (sse-retry measures timing), each suite run in a process group of
// its own. A scenario passes when the suite ends with success, no check is a
// FAILURE or a WARNING, and the client program reports what it was meant to
// do ("ok: …").
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { failedChecks, runClientScenario, type ConformanceCheck } from './client-mode';
import { CLIENT_PROGRAMS, REQUIRED_SPEC_VERSIONS, SUPPORTED_EXTENSIONS } from './client-scenarios';
import { ensureRunnerInstalled, listScenarios, type ListedScenario } from './runner';

const CLIENTS_DIR = join(__dirname, '..', 'dist', 'clients');

/**
 * True when the only check that fails is sse-retry's timing WARNING (the
 * client reconnected more than 200 ms after the 500 ms asked, on a loaded
 * machine). Too early, or twice as late, is a FAILURE and never retried.
 */
function onlyLateReconnection(checks: readonly ConformanceCheck[]): boolean {
  const failing = checks.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING');
  return failing.length === 1 && failing[0]?.id === 'client-sse-retry-timing' && failing[0].status === 'WARNING';
}

let listed: ListedScenario[] = [];

beforeAll(async () => {
  await ensureRunnerInstalled();
  listed = await listScenarios('client');
}, 300_000);

describe('MCP conformance suite, client mode', () => {
  it('has a client program for every scenario of the released spec versions and the supported extensions', () => {
    const required = listed
      .filter((scenario) => scenario.specVersions.some((version) => REQUIRED_SPEC_VERSIONS.includes(version)))
      .map((scenario) => scenario.name);
    expect(required.length).toBeGreaterThanOrEqual(20);
    expect(required.filter((name) => CLIENT_PROGRAMS[name] === undefined)).toEqual([]);
    const names = listed.map((scenario) => scenario.name);
    expect(SUPPORTED_EXTENSIONS.filter((name) => !names.includes(name))).toEqual([]);
    // Nothing in the table that the suite does not have (a renamed scenario would otherwise pass unnoticed).
    expect(Object.keys(CLIENT_PROGRAMS).filter((name) => !names.includes(name))).toEqual([]);
  });

  it.each(Object.entries(CLIENT_PROGRAMS))('%s', async (scenario, program) => {
    const script = join(CLIENTS_DIR, `${program}.js`);
    expect(existsSync(script)).toBe(true);
    let result = await runClientScenario(scenario, [process.execPath, script]);
    if (onlyLateReconnection(result.checks)) {
      // The one check that measures this machine's timing, and only its "slightly late" warning: once more.
      process.stderr.write(`${scenario}: the reconnection was slightly late (${failedChecks(result.checks).join('; ')}); running it once more\n`);
      result = await runClientScenario(scenario, [process.execPath, script]);
    }
    const report = [
      `suite exit ${result.suite.exitCode}${result.suite.timedOut ? ' (timed out)' : ''}`,
      ...failedChecks(result.checks),
      `client stdout: ${result.clientStdout.trim()}`,
      `client stderr: ${result.clientStderr.trim().slice(-4000)}`,
      `suite stderr: ${result.suite.stderr.trim().slice(-4000)}`,
    ].join('\n');
    expect({ scenario, failed: failedChecks(result.checks) }).toEqual({ scenario, failed: [] });
    expect(result.checks.some((check) => check.status === 'SUCCESS')).toBe(true);
    if (result.suite.exitCode !== 0 || !/^ok: /m.test(result.clientStdout)) throw new Error(`Scenario ${scenario} did not pass:\n${report}`);
  });
});
