import fs from 'node:fs';
import path from 'node:path';
import { captureIo, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import { EXIT_CODES, main } from './index';

jest.setTimeout(60_000);
afterEach(() => removeTemporaryFolders());

// What the library says to its own users; none of it may reach a user of the command.
const LIBRARY_ADVICE = /runtime\.|resourceFromPath|new token|start a new plan|wrapTool|in a plan whose policy|See the cause/;

function setup() {
  const workspace = temporaryFolder();
  fs.writeFileSync(path.join(workspace, 'hello.txt'), 'hello\n');
  return { workspace, io: (env: Record<string, string> = {}) => captureIo({ TEST_WORKSPACE: workspace, ...env }) };
}

describe('errors seen through the command give the flag or key to change', () => {
  it('no bound resource: --resource, not resourceFromPath', async () => {
    const empty = captureIo({}, temporaryFolder());
    expect(await main(['tools', 'run', 'builtin.fs.read', '--input', '{"path":"x"}'], empty)).toBe(EXIT_CODES.failed);
    expect(empty.err()).toMatch(
      /^BUILTIN_NO_RESOURCE: .* Bind one with --resource id=path \(read-only; id=path:write allows changes\), or under "resources" in the configuration\.\n$/,
    );
    expect(empty.err()).not.toMatch(LIBRARY_ADVICE);
  });

  it('a read-only resource: --resource <id>=<path>:write', async () => {
    const { workspace } = setup();
    const io = captureIo({}, temporaryFolder());
    const input = JSON.stringify({ resource: 'data', path: 'new.txt', content: 'x' });
    expect(await main(['tools', 'run', 'builtin.fs.write', '--resource', `data=${workspace}`, '--input', input], io)).toBe(EXIT_CODES.failed);
    expect(io.err()).toMatch(/^BUILTIN_RESOURCE_READ_ONLY: .* Bind it with --resource data=<path>:write to allow changes\.\n$/);
    expect(io.err()).not.toMatch(/access: 'write'/);
    expect(fs.existsSync(path.join(workspace, 'new.txt'))).toBe(false);
  });

  it('policy refusals name --read-only and --require-checkpoint', async () => {
    const { io } = setup();
    const readOnly = io();
    expect(await main(['tools', 'run', 'test.unsafe-write', '--read-only'], readOnly)).toBe(EXIT_CODES.refused);
    expect(readOnly.err()).toMatch(
      /^TOOL_ACCESS_DENIED: Tool 'test\.unsafe-write' writes, but plan '.+' is read-only\. Run it without --read-only, or choose a tool that does not write\.\n$/,
    );
    const checkpoint = io();
    expect(await main(['tools', 'run', 'test.unsafe-write', '--require-checkpoint'], checkpoint)).toBe(EXIT_CODES.refused);
    expect(checkpoint.err()).toMatch(/Run it without --require-checkpoint, or choose a tool that records undoable changes\.\n$/);
    expect(readOnly.err() + checkpoint.err()).not.toMatch(LIBRARY_ADVICE);
  });

  it('a plan without network refuses an open-world tool and names --no-network', async () => {
    const { io } = setup();
    const offline = io();
    expect(await main(['tools', 'run', 'test.echo', '--input', '{"text":"x"}', '--no-network'], offline)).toBe(EXIT_CODES.refused);
    expect(offline.err()).toMatch(
      /^TOOL_ACCESS_DENIED: Tool 'test\.echo' reaches outside the plan .* Run it without --no-network, or choose a tool that is not openWorld\.\n$/,
    );
    expect(offline.err()).not.toMatch(LIBRARY_ADVICE);
  });

  it('in a plan, a refusal names the plan file\'s "policy"', async () => {
    const { workspace, io } = setup();
    const file = writeFixture(
      workspace,
      'plan.yaml',
      'policy: { readOnly: true }\nsteps:\n  - { tool: test.unsafe-write, input: {}, continueOnError: true }\n',
    );
    const run = io();
    expect(await main(['--state-dir', temporaryFolder(), 'plan', 'run', file, '--json'], run)).toBe(EXIT_CODES.refused);
    const report = JSON.parse(run.out()) as { steps: { code: string; message: string }[] };
    expect(report.steps[0]?.code).toBe('TOOL_ACCESS_DENIED');
    expect(report.steps[0]?.message).toMatch(/Set "policy": \{ "readOnly": false \} in the plan file, or choose a tool that does not write/);
    expect(report.steps[0]?.message).not.toMatch(LIBRARY_ADVICE);
  });

  it('an execution deadline is a failure of that tool, says --timeout, and does not blame the plan', async () => {
    const { workspace, io } = setup();
    const marker = path.join(workspace, 'marker');
    const run = io();
    const input = JSON.stringify({ marker });
    expect(await main(['tools', 'run', 'test.wait-for-cancel', '--input', input, '--timeout', '200'], run)).toBe(EXIT_CODES.failed);
    expect(run.err()).toMatch(
      /^TOOL_CANCELLED: Tool "test\.wait-for-cancel" in plan ".+" was cancelled: timed out after 200 ms\. Raise it with --timeout <ms> \(or "runtime": \{ "defaultTimeoutMs" \} in agents\.config\.json\) if the tool needs longer\.\n$/,
    );
    expect(run.err()).not.toMatch(LIBRARY_ADVICE);
    expect(fs.readFileSync(marker, 'utf8')).toBe('timed out after 200 ms');

    // A step's deadline fails the step (exit 1), not the plan (130).
    const file = writeFixture(
      workspace,
      'plan.yaml',
      `steps:\n  - { id: slow, tool: test.wait-for-cancel, input: { marker: "${marker}-2" }, timeoutMs: 200 }\n`,
    );
    const plan = io();
    expect(await main(['--state-dir', temporaryFolder(), 'plan', 'run', file], plan)).toBe(EXIT_CODES.failed);
    expect(plan.out()).toMatch(
      /\[1\/1\] slow test\.wait-for-cancel … failed \(\d+ ms\) TOOL_CANCELLED: .*timed out after 200 ms\. Raise "timeoutMs" of the step/,
    );
    expect(plan.out()).toContain('failed; 1 tool(s) deactivated');
  });

  it("a tool's own exception: --verbose shows where it came from", async () => {
    const { io } = setup();
    const quiet = io();
    expect(await main(['tools', 'run', 'test.throw'], quiet)).toBe(EXIT_CODES.failed);
    expect(quiet.err()).toMatch(
      /^TOOL_EXECUTION_FAILED: Tool 'test\.throw' failed in plan '.+': the disk is on fire\. Run the command with --verbose to see where it failed\.\n$/,
    );
    const verbose = io();
    expect(await main(['--verbose', 'tools', 'run', 'test.throw'], verbose)).toBe(EXIT_CODES.failed);
    expect(verbose.err()).toMatch(/cause: Error: the disk is on fire\n\s+at /);
  });

  it('what a tool chose to say reaches the terminal without escapes or secrets, and capped', async () => {
    const { io } = setup();
    const hostile = `\u001b]0;owned\u0007\u001b[31mred https://alice:hunter2@api.example.com/v1?api_key=abc123 ${'x'.repeat(100_000)}`;
    const run = io();
    expect(await main(['tools', 'run', 'test.throw', '--input', JSON.stringify({ message: hostile })], run)).toBe(EXIT_CODES.failed);
    const printed = run.err();
    expect(printed.includes('\u001b') || printed.includes('\u0007')).toBe(false);
    expect(printed).not.toContain('hunter2');
    expect(printed).not.toContain('abc123');
    expect(printed).toContain('https://***@api.example.com/v1?api_key=***');
    expect(printed.length).toBeLessThan(5_000);
    expect(printed).toMatch(/truncated, \d+ characters in all/);
  });

  it('an unknown tool: agents tools list, not runtime.listTools()', async () => {
    const { io } = setup();
    const run = io();
    expect(await main(['tools', 'describe', 'test.ecoh'], run)).toBe(EXIT_CODES.notFound);
    expect(run.err()).toBe(
      "TOOL_NOT_FOUND: No configured source offers a tool named 'test.ecoh'. Did you mean 'test.echo'? Run 'agents tools list' to see every tool.\n",
    );
  });
});
