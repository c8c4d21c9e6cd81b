import path from 'node:path';
import { isProcessAlive } from '@ca/tool-lifecycle/testing';
import { captureIo, captureMcpIo, fixtures, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import { EXIT_CODES, main } from './index';

// These run @modelcontextprotocol/server-everything as a real stdio server,
// through __fixtures__/counted-server.js, which records every start.
jest.setTimeout(90_000);
afterEach(() => removeTemporaryFolders());

function expectAllStopped(pids: readonly number[]): void {
  for (const pid of pids) expect(isProcessAlive(pid)).toBe(false);
}

describe('a command starts only the MCP servers it needs', () => {
  it('no server for a custom or a built-in tool', async () => {
    const custom = captureMcpIo();
    expect(await main(['tools', 'run', 'test.echo', '--input', '{"text":"hi"}'], custom)).toBe(EXIT_CODES.ok);
    expect(custom.out()).toBe('{\n  "text": "hi"\n}\n');
    expect(custom.starts()).toEqual([]);
    const builtin = captureMcpIo();
    expect(await main(['tools', 'run', 'builtin.fs.write', '--input', '{"resource":"work","path":"a.txt","content":"x"}'], builtin)).toBe(EXIT_CODES.ok);
    expect(builtin.starts()).toEqual([]);
    const check = captureMcpIo();
    writeFixture(check.workspace, 'plan.yaml', 'steps:\n  - { tool: test.echo, input: { text: x } }\n');
    expect(await main(['plan', 'check', path.join(check.workspace, 'plan.yaml')], check)).toBe(EXIT_CODES.ok);
    expect(check.starts()).toEqual([]);
  });

  it('one start for an MCP tool: the discovery session serves the plan, and nothing is left running', async () => {
    const io = captureMcpIo();
    expect(await main(['tools', 'run', 'mcp.everything.get-sum', '--input', '{"a":19,"b":23}'], io)).toBe(EXIT_CODES.ok);
    expect(io.out()).toBe('The sum of 19 and 23 is 42.\n');
    expect(io.starts()).toHaveLength(1);
    expectAllStopped(io.starts());

    const wrapped = captureMcpIo();
    expect(await main(['tools', 'run', 'test.sum', '--input', '{"a":1,"b":2}'], wrapped)).toBe(EXIT_CODES.ok);
    expect(wrapped.out()).toBe('The sum of 1 and 2 is 3.\n');
    expect(wrapped.starts()).toHaveLength(1);
    expectAllStopped(wrapped.starts());
  });

  it('tools list starts the configured server once', async () => {
    const io = captureMcpIo();
    expect(await main(['tools', 'list'], io)).toBe(EXIT_CODES.ok);
    expect(io.out()).toMatch(/^mcp\.everything\.get-sum\s+mcp/m);
    expect(io.starts()).toHaveLength(1);
    expectAllStopped(io.starts());
  });

  it('suggests an MCP tool for a name no source offers (looking at every source)', async () => {
    const io = captureMcpIo();
    expect(await main(['tools', 'run', 'get-summ'], io)).toBe(EXIT_CODES.notFound);
    expect(io.err()).toBe("TOOL_NOT_FOUND: No configured source offers a tool named 'get-summ'. Did you mean 'mcp.everything.get-sum'? Run 'agents tools list' to see every tool.\n");
    expectAllStopped(io.starts());
  });
});

describe('progress off a terminal', () => {
  it('plan run prints a line when each step starts and ends, with its duration, and the MCP progress in between', async () => {
    const io = captureMcpIo();
    expect(await main(['--state-dir', temporaryFolder(), 'plan', 'run', 'progress-plan.yaml'], io)).toBe(EXIT_CODES.ok);
    const lines = io.out().split('\n');
    const long = lines.filter((line) => line.startsWith('[1/2] long mcp.everything.trigger-long-running-operation … '));
    expect(long[0]).toBe('[1/2] long mcp.everything.trigger-long-running-operation … started');
    expect(long[1]).toMatch(/… progress 1\/3 \(\d+ ms\)$/);
    expect(long[long.length - 1]).toMatch(/… ok \(1\.\d s\) "Long running operation completed\. Duration: 1\.5 seconds, Steps: 3\."$/);
    expect(lines.indexOf('[2/2] sum mcp.everything.get-sum … started')).toBeGreaterThan(lines.indexOf(long[long.length - 1] as string));
    expect(io.out()).toMatch(/\[2\/2\] sum mcp\.everything\.get-sum … ok \(\d+ ms\) "The sum of 19 and 23 is 42\."/);
    // One server for the whole command: discovery, the check and both steps.
    expect(io.starts()).toHaveLength(1);
    expectAllStopped(io.starts());
  });

  it('tools run writes progress lines on stderr and the output alone on stdout', async () => {
    const io = captureMcpIo();
    expect(await main(['tools', 'run', 'mcp.everything.trigger-long-running-operation', '--input', '{"duration":1,"steps":2}'], io)).toBe(EXIT_CODES.ok);
    expect(io.out()).toBe('Long running operation completed. Duration: 1 seconds, Steps: 2.\n');
    expect(io.err()).toMatch(/^mcp\.everything\.trigger-long-running-operation: progress 1\/2 \(\d+ ms\)$/m);
  });
});

describe('an MCP server that fails', () => {
  function brokenConfig(extra: Record<string, unknown> = {}): string {
    const folder = temporaryFolder();
    writeFixture(
      folder,
      'agents.config.json',
      JSON.stringify({
        builtin: true,
        mcpServers: { broken: { command: process.execPath, args: ['-e', "process.stderr.write('missing API key\\n'); process.exit(3)"] } },
        ...extra,
      }),
    );
    return folder;
  }

  it('to start: its error is printed once, and a command that needs it exits 4 with the code', async () => {
    const folder = brokenConfig();
    const run = captureIo({}, folder);
    expect(await main(['tools', 'run', 'mcp.broken.echo'], run)).toBe(EXIT_CODES.notFound);
    expect(run.err()).toMatch(/^MCP_SERVER_START_FAILED: Tool 'mcp\.broken\.echo' is unavailable: MCP server 'broken' could not be started \(.*\): it exited with code 3 before completing the MCP handshake\. Its stderr ended with:\nmissing API key\n/);
    expect(run.err().match(/could not be started/g)).toHaveLength(1);
    expect(run.err()).toContain('of mcpServers.broken in agents.config.json.');

    const list = captureIo({}, folder);
    expect(await main(['tools', 'list'], list)).toBe(EXIT_CODES.failed);
    expect(list.err().match(/could not be started/g)).toHaveLength(1);
    expect(list.out()).toMatch(/^builtin\.fs\.read\s+builtin/m);

    // A command that does not need the server does not start it, and succeeds.
    const other = captureIo({}, folder);
    expect(await main(['tools', 'describe', 'builtin.fs.read'], other)).toBe(EXIT_CODES.ok);
    expect(other.err()).toBe('');
  });

  it('to answer in time: the advice names the key of the configuration', async () => {
    const folder = temporaryFolder();
    writeFixture(
      folder,
      'agents.config.json',
      JSON.stringify({
        mcpServers: { everything: { command: process.execPath, args: [path.join(fixtures, 'counted-server.js')], callTimeoutMs: 300, resetTimeoutOnProgress: false } },
      }),
    );
    const io = captureIo({}, folder);
    expect(await main(['tools', 'run', 'mcp.everything.trigger-long-running-operation', '--input', '{"duration":3,"steps":1}'], io)).toBe(EXIT_CODES.failed);
    expect(io.err()).toMatch(/^MCP_CALL_TIMEOUT: .*did not answer within callTimeoutMs \(300 ms\) and was cancelled\. Raise mcpServers\.everything\.callTimeoutMs in agents\.config\.json if the tool needs longer\.\n$/);
  });
});
