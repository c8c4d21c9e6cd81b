import { join } from 'node:path';
import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { createMcpAdapter } from './mcp-adapter';
import type { McpServerConfig } from './mcp-config';
import { McpServerError } from './mcp-server-error';
import { McpToolError } from './mcp-tool-error';
import { countingSpawn, fixtureServer, makeTempDir, readLines, rejectionOf, removeTempDir, waitFor } from './mcp-fixtures.test-helper';

jest.setTimeout(60_000);

describe('MCP server faults', () => {
  let dir: string;
  let spawns: ReturnType<typeof countingSpawn>;
  let logger: RecordingLogger;
  let runtime: ToolRuntime | undefined;

  beforeEach(async () => {
    dir = await makeTempDir();
    spawns = countingSpawn();
    logger = new RecordingLogger();
  });

  afterEach(async () => {
    await runtime?.dispose();
    runtime = undefined;
    // No server process outlives its test.
    for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(false);
    await removeTempDir(dir);
  });

  function setUp(server: McpServerConfig): ToolRuntime {
    const source = createMcpAdapter({ servers: { mcpServers: { faulty: server } }, spawn: spawns.spawn, logger });
    runtime = new ToolRuntime({ sources: [source], logger });
    return runtime;
  }

  it('reports a server that exits at start, with its exit code and stderr', async () => {
    const local = setUp(fixtureServer({ FIXTURE_MODE: 'exit-at-start' }));
    const { tools, sourceErrors } = await local.discover();
    expect(tools).toEqual([]);
    expect(sourceErrors).toHaveLength(1);
    const error = sourceErrors[0]!.error;
    expect(McpServerError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'MCP_SERVER_START_FAILED', server: 'faulty', exitCode: 3 });
    expect(error.message).toMatch(/MCP server 'faulty' could not be started/);
    expect(error.message).toMatch(/exited with code 3/);
    expect(error.message).toMatch(/fixture: missing API key FIXTURE_TOKEN/);
    expect((error as McpServerError).stderr).toBe('fixture: missing API key FIXTURE_TOKEN');
  });

  it('reports a command that does not exist', async () => {
    const local = setUp({ command: 'ca-mcp-no-such-command-here', args: [] });
    const { sourceErrors } = await local.discover();
    expect(sourceErrors[0]?.error).toMatchObject({ code: 'MCP_SERVER_START_FAILED' });
    expect(sourceErrors[0]?.error.message).toMatch(/'ca-mcp-no-such-command-here' was not found/);
  });

  it('gives up on a server that never completes the handshake, and kills it', async () => {
    const local = setUp({
      command: process.execPath,
      args: ['-e', 'process.stderr.write("booting\\n"); setInterval(() => {}, 1000)'],
      connectTimeoutMs: 500,
      shutdownGraceMs: 300,
    });
    const { sourceErrors } = await local.discover();
    expect(sourceErrors[0]?.error).toMatchObject({ code: 'MCP_SERVER_START_FAILED' });
    expect(sourceErrors[0]?.error.message).toMatch(/did not complete the MCP handshake within 500 ms.*booting/s);
    expect(spawns.count()).toBe(1);
  });

  it('returns a clear failure when the server dies in the middle of a call, and ends the plan cleanly', async () => {
    const local = setUp(fixtureServer({}));
    const ctx = local.createPlan();
    const first = await local.execute('mcp.faulty.die', {}, ctx);
    expect(first.ok).toBe(false);
    if (first.ok) return;
    expect(McpServerError.isInstance(first.error)).toBe(true);
    expect(first.error).toMatchObject({ code: 'MCP_SERVER_EXITED', server: 'faulty', toolName: 'mcp.faulty.die', planId: ctx.planId, exitCode: 7 });
    expect(first.error.message).toMatch(/exited with code 7 during a call of tool 'mcp.faulty.die'/);
    expect(first.error.message).toMatch(/dying in the middle of a call/);
    const again = await local.execute('mcp.faulty.echo', { text: 'x' }, ctx);
    expect(again.ok === false && again.error.code).toBe('MCP_SERVER_EXITED');
    const report = await local.endPlan(ctx);
    expect(report.failures).toEqual([]);
    expect([...report.deactivated].sort()).toEqual(['mcp.faulty.die', 'mcp.faulty.echo']);
  });

  it('times out a call that never answers, cancels it on the server, and ends the plan cleanly', async () => {
    const record = join(dir, 'record.txt');
    const local = setUp(fixtureServer({ FIXTURE_RECORD_FILE: record }, { callTimeoutMs: 500 }));
    await local.runPlan({}, async (ctx) => {
      const result = await local.execute('mcp.faulty.hang', {}, ctx);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(McpToolError.isInstance(result.error)).toBe(true);
      expect(result.error).toMatchObject({ code: 'MCP_CALL_TIMEOUT', mcpToolName: 'hang', rpcCode: -32001 });
      expect(result.error.message).toMatch(/did not answer within callTimeoutMs \(500 ms\)/);
      await waitFor(async () => (await readLines(record)).some((line) => line.startsWith('cancelled hang')), 10_000, 'the cancellation record');
      // The session survives a timeout.
      expect(await local.execute('mcp.faulty.echo', { text: 'still here' }, ctx)).toMatchObject({ ok: true, output: 'echo: still here' });
    });
  });

  it('times out a call answered with garbage, naming the garbage', async () => {
    const local = setUp(fixtureServer({}, { callTimeoutMs: 500 }));
    const result = await local.runPlan({}, (ctx) => local.execute('mcp.faulty.garbage', {}, ctx));
    expect(result.ok === false && result.error.code).toBe('MCP_CALL_TIMEOUT');
    expect(result.ok === false && result.error.message).toMatch(/2 line\(s\) to stdout that are not JSON-RPC messages.*garbage garbage/s);
    expect(logger.at('warn').some((entry) => /not a JSON-RPC message/.test(entry.message))).toBe(true);
  });

  it('fails a call answered with a stdout line over 10 MiB at once with MCP_MESSAGE_TOO_LARGE, and ends the server with its processes', async () => {
    const pidFile = join(dir, 'pids.txt');
    // A call timeout longer than the test's own: the call must end because the line was refused, not because it timed out.
    const local = setUp(fixtureServer({ FIXTURE_GRANDCHILD: '1', FIXTURE_PID_FILE: pidFile }, { callTimeoutMs: 3_600_000 }));
    const ctx = local.createPlan({ planId: 'huge-plan' });
    const result = await local.execute('mcp.faulty.huge-result', {}, ctx);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(McpServerError.isInstance(result.error)).toBe(true);
    expect(result.error).toMatchObject({ code: 'MCP_MESSAGE_TOO_LARGE', server: 'faulty', toolName: 'mcp.faulty.huge-result', planId: 'huge-plan' });
    expect(result.error.message).toMatch(/^MCP server 'faulty' wrote a message \(one stdout line\) of more than 10 MiB \(10485760 bytes\)/);
    expect(result.error.message).toMatch(/during a call of tool 'mcp\.faulty\.huge-result' in plan 'huge-plan'/);
    // The plan's server and the process it started in its group are gone while the plan is still open (and discovery's, long since).
    const started = (await readLines(pidFile)).flatMap((line) => Object.values(JSON.parse(line) as { pid: number; grandchild: number }));
    expect(started.length).toBeGreaterThanOrEqual(2);
    await waitFor(() => started.every((pid) => !isProcessAlive(pid)), 20_000, 'the servers and their grandchildren to end');
    const report = await local.endPlan(ctx);
    expect(report.failures).toEqual([]);
    // The next plan starts the server again.
    expect(await local.runPlan({}, (next) => local.execute('mcp.faulty.echo', { text: 'again' }, next))).toMatchObject({ ok: true, output: 'echo: again' });
  });

  it('reports a server whose first stdout line is over 10 MiB as not started, saying so', async () => {
    const local = setUp(fixtureServer({ FIXTURE_MODE: 'huge-at-start' }, { connectTimeoutMs: 3_600_000 }));
    const error = (await local.discover()).sourceErrors[0]?.error;
    expect(error).toMatchObject({ code: 'MCP_SERVER_START_FAILED', server: 'faulty' });
    expect(error?.message).toMatch(/it wrote a stdout line of more than 10 MiB \(10485760 bytes\) .*before completing the MCP handshake/);
  });

  it('tolerates a line of garbage before the handshake', async () => {
    const local = setUp(fixtureServer({ FIXTURE_MODE: 'garbage-at-start' }));
    const result = await local.runPlan({}, (ctx) => local.execute('mcp.faulty.echo', { text: 'fine' }, ctx));
    expect(result).toMatchObject({ ok: true, output: 'echo: fine' });
    expect(logger.at('warn').some((entry) => /this is not JSON-RPC/.test(entry.message))).toBe(true);
  });

  it('stops a call whose progress goes on past maxTotalTimeoutMs, and cancels it on the server', async () => {
    const record = join(dir, 'record.txt');
    const local = setUp(fixtureServer({ FIXTURE_RECORD_FILE: record }, { callTimeoutMs: 5_000, maxTotalTimeoutMs: 600 }));
    const progress: number[] = [];
    await local.runPlan({}, async (ctx) => {
      const result = await local.execute('mcp.faulty.progress-forever', {}, ctx, { onProgress: (item) => progress.push(item.progress) });
      expect(result.ok === false && result.error.code).toBe('MCP_CALL_TIMEOUT');
      expect(result.ok === false && result.error.message).toMatch(/maxTotalTimeoutMs \(600 ms\)/);
      expect(progress.length).toBeGreaterThan(0);
      await waitFor(async () => (await readLines(record)).some((line) => line.startsWith('cancelled progress-forever')), 10_000, 'the cancellation record');
    });
  });

  it('kills the grandchildren of a server with it (discovery and plan sessions)', async () => {
    const pidFile = join(dir, 'pids.txt');
    const local = setUp(fixtureServer({ FIXTURE_GRANDCHILD: '1', FIXTURE_PID_FILE: pidFile }, { shutdownGraceMs: 500 }));
    const ctx = local.createPlan();
    expect(await local.execute('mcp.faulty.echo', { text: 'x' }, ctx)).toMatchObject({ ok: true });
    const recorded = (await readLines(pidFile)).map((line) => JSON.parse(line) as { pid: number; grandchild: number });
    expect(recorded).toHaveLength(2);
    const [discovery, plan] = recorded as [{ pid: number; grandchild: number }, { pid: number; grandchild: number }];
    expect(isProcessAlive(plan.pid)).toBe(true);
    expect(isProcessAlive(plan.grandchild)).toBe(true);
    await waitFor(() => !isProcessAlive(discovery.grandchild), 10_000, 'the discovery grandchild to die');
    expect(isProcessAlive(discovery.pid)).toBe(false);
    const report = await local.endPlan(ctx);
    expect(report.failures).toEqual([]);
    expect(isProcessAlive(plan.pid)).toBe(false);
    await waitFor(() => !isProcessAlive(plan.grandchild), 10_000, 'the plan grandchild to die');
  });

  it('guards tools/list pagination against a repeated cursor and too many pages', async () => {
    const looping = setUp(fixtureServer({ FIXTURE_REPEAT_CURSOR: '1' }));
    const loop = (await looping.discover()).sourceErrors[0]?.error;
    expect(loop).toMatchObject({ code: 'MCP_LIST_TOOLS_FAILED', server: 'faulty' });
    expect(loop?.message).toMatch(/returned the cursor "again" twice/);
    await looping.dispose();
    const source = createMcpAdapter({
      servers: { mcpServers: { faulty: fixtureServer({ FIXTURE_PAGE_SIZE: '1' }) } },
      spawn: spawns.spawn,
      logger,
      maxToolPages: 3,
    });
    runtime = new ToolRuntime({ sources: [source], logger });
    const error = await rejectionOf(source.discover());
    expect(error.message).toMatch(/more than 3 pages/);
  });

  it('still offers the tools of the other servers when one fails, and reports it', async () => {
    const source = createMcpAdapter({
      servers: { mcpServers: { good: fixtureServer({}), broken: fixtureServer({ FIXTURE_MODE: 'exit-at-start' }) } },
      spawn: spawns.spawn,
      logger,
    });
    runtime = new ToolRuntime({ sources: [source], logger });
    const { tools, unavailable, sourceErrors } = await runtime.discover();
    expect(sourceErrors).toEqual([]);
    expect(tools.some((tool) => tool.name === 'mcp.good.echo')).toBe(true);
    expect(tools.some((tool) => tool.name.startsWith('mcp.broken.'))).toBe(false);
    const broken = unavailable.find((tool) => tool.name === 'mcp.broken');
    expect(broken?.error).toMatchObject({ code: 'MCP_SERVER_START_FAILED', server: 'broken' });
    expect(logger.at('error').some((entry) => /MCP server 'broken' could not be started/.test(entry.message))).toBe(true);
  });

  it('cannot reach a Streamable HTTP server that is not there', async () => {
    const local = setUp({ url: 'http://127.0.0.1:1/mcp', connectTimeoutMs: 5_000 });
    const { sourceErrors } = await local.discover();
    expect(sourceErrors[0]?.error).toMatchObject({ code: 'MCP_SERVER_START_FAILED', server: 'faulty' });
    expect(sourceErrors[0]?.error.message).toMatch(/http:\/\/127\.0\.0\.1:1\/mcp could not be reached/);
  });

  it('activation fails with the start error when the server breaks between discovery and the plan', async () => {
    const flag = join(dir, 'flag');
    // Exits at start once the flag file exists.
    const script = `if (require('fs').existsSync(${JSON.stringify(flag)})) { console.error('now broken'); process.exit(4); } require(${JSON.stringify(join(__dirname, '__fixtures__', 'fixture-server.js'))});`;
    const local = setUp({ command: process.execPath, args: ['-e', script] });
    expect((await local.listTools()).length).toBeGreaterThan(0);
    await require('node:fs/promises').writeFile(flag, '');
    const ctx = local.createPlan();
    const error = await rejectionOf(local.execute('mcp.faulty.echo', { text: 'x' }, ctx));
    expect(error.code).toBe('TOOL_ACTIVATION_FAILED');
    expect(error.cause).toMatchObject({ code: 'MCP_SERVER_START_FAILED' });
    expect((error.cause as Error).message).toMatch(/now broken/);
    expect((await local.endPlan(ctx)).failures).toEqual([]);
  });
});
