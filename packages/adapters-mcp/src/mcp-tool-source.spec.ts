import { getEventListeners } from 'node:events';
import { join } from 'node:path';
import { ToolAccessDeniedError, ToolRuntime, type ToolProgress } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { createMcpAdapter } from './mcp-adapter';
import { McpServerError } from './mcp-server-error';
import { McpToolError } from './mcp-tool-error';
import type { McpToolSource } from './mcp-tool-source';
import { countingSpawn, fixtureServer, makeTempDir, readLines, rejectionOf, removeTempDir, waitFor } from './mcp-fixtures.test-helper';

jest.setTimeout(60_000);

describe('McpToolSource with the fixture server (plan scope)', () => {
  let dir: string;
  let source: McpToolSource;
  let runtime: ToolRuntime;
  let logger: RecordingLogger;
  let spawns: ReturnType<typeof countingSpawn>;
  const savedSecret = process.env['CA_MCP_TEST_SECRET'];

  beforeAll(async () => {
    dir = await makeTempDir();
    process.env['CA_MCP_TEST_SECRET'] = 'do-not-leak';
    process.env['CA_MCP_TEST_PASSED'] = 'passed-through';
    logger = new RecordingLogger();
    spawns = countingSpawn();
    source = createMcpAdapter({
      servers: {
        mcpServers: {
          fixture: fixtureServer(
            { FIXTURE_RECORD_FILE: join(dir, 'record.txt'), FIXTURE_PAGE_SIZE: '4', DECLARED: 'declared-value' },
            {
              inheritEnv: ['CA_MCP_TEST_PASSED'],
              callTimeoutMs: 10_000,
              exclude: ['add-tool', 'touch-list'],
              capabilities: { 'write-note': { checkpointable: true } },
              trustAnnotations: true,
            },
          ),
        },
      },
      spawn: spawns.spawn,
      logger,
    });
    runtime = new ToolRuntime({ sources: [source], logger });
  });

  afterAll(async () => {
    await runtime.dispose();
    if (savedSecret === undefined) delete process.env['CA_MCP_TEST_SECRET'];
    else process.env['CA_MCP_TEST_SECRET'] = savedSecret;
    delete process.env['CA_MCP_TEST_PASSED'];
    for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(false);
    await removeTempDir(dir);
  });

  it('lists every page of tools as mcp.<server>.<tool>, sanitising names, and stops the discovery server', async () => {
    const { tools, unavailable } = await runtime.discover();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['mcp.fixture.echo', 'mcp.fixture.sum', 'mcp.fixture.hang', 'mcp.fixture.get_weather_now', 'mcp.fixture.pids']),
    );
    expect(names).not.toContain('mcp.fixture.add-tool');
    expect(names).not.toContain('mcp.fixture.bad-schema');
    expect(names).not.toContain('mcp.fixture.task-only');
    expect(unavailable.map((tool) => tool.name).sort()).toEqual(['mcp.fixture.bad-schema', 'mcp.fixture.task-only']);
    expect(unavailable.find((tool) => tool.name === 'mcp.fixture.bad-schema')?.reason).toMatch(/schema/i);
    const weather = tools.find((tool) => tool.name === 'mcp.fixture.get_weather_now');
    expect(weather?.annotations).toMatchObject({ mcpServer: 'fixture', mcpToolName: 'get weather/now' });
    expect(spawns.count()).toBe(1);
    await waitFor(() => !isProcessAlive(spawns.pids[0]!), 10_000, 'the discovery server to exit');
  });

  it('maps annotations to capabilities, with the configured overrides', async () => {
    const echo = await runtime.describe('mcp.fixture.echo');
    expect(echo.capability).toEqual({ writes: false, checkpointable: false, idempotent: true, destructive: false, openWorld: false });
    expect(echo.description).toBe('Echoes the text back.');
    expect(echo.version).toBe('1.2.3');
    expect(echo.annotations).toMatchObject({ title: 'Echo', mcpAnnotations: { readOnlyHint: true } });
    const write = await runtime.describe('mcp.fixture.write-note');
    expect(write.capability).toEqual({ writes: true, checkpointable: true, idempotent: false, destructive: true, openWorld: true });
  });

  it('runs many calls of several tools in one plan on one server process, and stops it at endPlan', async () => {
    const before = spawns.count();
    const ctx = runtime.createPlan();
    const signal = ctx.cancellationToken.signal;
    const listenersBefore = getEventListeners(signal, 'abort').length;
    const echo = await runtime.execute('mcp.fixture.echo', { text: 'hello' }, ctx);
    expect(echo).toMatchObject({ ok: true, output: 'echo: hello', content: [{ type: 'text', text: 'echo: hello' }] });
    for (let index = 0; index < 1_000; index++) {
      const result = await runtime.execute('mcp.fixture.sum', { a: index, b: 1 }, ctx);
      if (!result.ok || (result.output as { sum: number }).sum !== index + 1) throw new Error(`call ${index} failed`);
    }
    expect(getEventListeners(signal, 'abort').length).toBe(listenersBefore);
    expect(ctx.traces).toHaveLength(1_001);
    expect(spawns.count()).toBe(before + 1);
    const { output } = (await runtime.execute('mcp.fixture.pids', {}, ctx)) as { output: { pid: number } };
    expect(isProcessAlive(output.pid)).toBe(true);
    expect(source.openPlanSessions('fixture')).toBe(1);
    await runtime.endPlan(ctx);
    expect(source.openPlanSessions('fixture')).toBe(0);
    expect(isProcessAlive(output.pid)).toBe(false);
  });

  it('gives the server only the declared environment plus the safe defaults', async () => {
    const result = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.fixture.env', {}, ctx));
    const env = (result.output as { env: Record<string, string> }).env;
    expect(env['DECLARED']).toBe('declared-value');
    expect(env['CA_MCP_TEST_PASSED']).toBe('passed-through');
    expect(env['PATH']).toBe(process.env['PATH']);
    expect(env['CA_MCP_TEST_SECRET']).toBeUndefined();
    expect(env['SHELL']).toBeUndefined();
    const allowed = new Set([
      'DECLARED',
      'CA_MCP_TEST_PASSED',
      'FIXTURE_RECORD_FILE',
      'FIXTURE_PAGE_SIZE',
      'HOME',
      'LANG',
      'LC_ALL',
      'LC_CTYPE',
      'LOGNAME',
      'PATH',
      'TERM',
      'TMPDIR',
      'TZ',
      'USER',
    ]);
    expect(Object.keys(env).filter((name) => !allowed.has(name))).toEqual([]);
  });

  it('returns structured content as output, validated once by the runtime', async () => {
    await runtime.runPlan({}, async (ctx) => {
      const good = await runtime.execute('mcp.fixture.sum', { a: 2, b: 3 }, ctx);
      expect(good).toMatchObject({ ok: true, output: { sum: 5 }, content: [{ type: 'text', text: '5' }] });
      const warnings = logger.at('warn').length;
      const wrong = await runtime.execute('mcp.fixture.sum', { a: 2, b: 3, wrong: true }, ctx);
      // Not refused by the SDK: the runtime validates it (a warning, since output is not strict).
      expect(wrong).toMatchObject({ ok: true, output: { sum: 'not a number' } });
      expect(logger.at('warn').length).toBe(warnings + 1);
      expect(logger.at('warn').at(-1)?.message).toMatch(/mcp\.fixture\.sum/);
      const invalidInput = await runtime.execute('mcp.fixture.sum', { a: 'x' }, ctx);
      expect(invalidInput.ok).toBe(false);
      expect(invalidInput.ok === false && invalidInput.error.code).toBe('TOOL_SCHEMA_VALIDATION_FAILED');
    });
  });

  it('turns isError and a missing structuredContent into failed results that keep the content', async () => {
    await runtime.runPlan({}, async (ctx) => {
      const failed = await runtime.execute('mcp.fixture.fail', {}, ctx);
      expect(failed.ok).toBe(false);
      if (failed.ok) return;
      expect(McpToolError.isInstance(failed.error)).toBe(true);
      expect(failed.error.code).toBe('MCP_TOOL_ERROR');
      expect(failed.error.message).toMatch(/mcp\.fixture\.fail.*it broke/);
      expect(failed.content).toEqual([{ type: 'text', text: 'it broke' }]);
      expect(failed.trace.success).toBe(false);
      const missing = await runtime.execute('mcp.fixture.no-structured', {}, ctx);
      expect(missing.ok === false && missing.error.code).toBe('MCP_STRUCTURED_CONTENT_MISSING');
    });
  });

  it('refuses a tool without readOnlyHint in a read-only plan, and still runs the read-only ones', async () => {
    const before = spawns.count();
    await runtime.runPlan({ policy: { readOnly: true } }, async (ctx) => {
      const error = await rejectionOf(runtime.execute('mcp.fixture.write-note', {}, ctx));
      expect(ToolAccessDeniedError.isInstance(error)).toBe(true);
      expect(error.message).toMatch(/read-only/);
      expect(ctx.traces.at(-1)).toMatchObject({ toolName: 'mcp.fixture.write-note', success: false, error: { code: 'TOOL_ACCESS_DENIED' } });
      const read = await runtime.execute('mcp.fixture.echo', { text: 'ok' }, ctx);
      expect(read.ok).toBe(true);
    });
    // The refused tool was activated (the runtime activates before enforcing), so one process started in all.
    expect(spawns.count()).toBe(before + 1);
  });

  it('forwards progress, and progress resets the call timeout', async () => {
    const progress: ToolProgress[] = [];
    const tight = createMcpAdapter({
      servers: { mcpServers: { slow: fixtureServer({}, { callTimeoutMs: 1_500 }) } },
      spawn: spawns.spawn,
      logger,
    });
    const local = new ToolRuntime({ sources: [tight], logger });
    try {
      const result = await local.runPlan({}, (ctx) =>
        local.execute('mcp.slow.slow-progress', { steps: 5, intervalMs: 500 }, ctx, { onProgress: (item) => progress.push(item) }),
      );
      expect(result).toMatchObject({ ok: true, output: 'done' });
      // The SDK may drop the last notification when it arrives in the same read as the result.
      expect(progress.length).toBeGreaterThanOrEqual(4);
      expect(progress.slice(0, 4)).toEqual([1, 2, 3, 4].map((step) => ({ progress: step, total: 5, message: `step ${step} of 5` })));
    } finally {
      await local.dispose();
    }
  });

  it('sends a progress token only to a listener by default; resetTimeoutOnProgress: true sends it always, false makes callTimeoutMs a hard limit', async () => {
    const tight = createMcpAdapter({
      servers: {
        mcpServers: {
          listened: fixtureServer({}, { callTimeoutMs: 1_500 }),
          resets: fixtureServer({}, { callTimeoutMs: 1_500, resetTimeoutOnProgress: true }),
          hard: fixtureServer({}, { callTimeoutMs: 1_500, resetTimeoutOnProgress: false }),
        },
      },
      spawn: spawns.spawn,
      logger,
    });
    const local = new ToolRuntime({ sources: [tight], logger });
    const input = { steps: 5, intervalMs: 500 };
    const heard: ToolProgress[] = [];
    const heardHard: ToolProgress[] = [];
    try {
      const [unlistened, listened, resets, hardListened] = await local.runPlan({}, (ctx) =>
        Promise.all([
          local.execute('mcp.listened.slow-progress', input, ctx),
          local.execute('mcp.listened.slow-progress', input, ctx, { onProgress: (item) => heard.push(item) }),
          local.execute('mcp.resets.slow-progress', input, ctx),
          local.execute('mcp.hard.slow-progress', input, ctx, { onProgress: (item) => heardHard.push(item) }),
        ]),
      );
      // Nobody listens and the configuration does not ask: no token, so the server reports no progress and the timeout holds.
      expect(unlistened.ok === false && unlistened.error.code).toBe('MCP_CALL_TIMEOUT');
      expect(unlistened.ok === false && unlistened.error.message).toMatch(/callTimeoutMs \(1500 ms\)/);
      // A listener gets a token, its progress, and a deadline that progress extends.
      expect(listened).toMatchObject({ ok: true, output: 'done' });
      expect(heard.length).toBeGreaterThanOrEqual(2);
      // resetTimeoutOnProgress: true sends the token with nobody listening.
      expect(resets).toMatchObject({ ok: true, output: 'done' });
      // false: a listener still gets progress, but it no longer extends the deadline.
      expect(hardListened.ok === false && hardListened.error.code).toBe('MCP_CALL_TIMEOUT');
      expect(heardHard.length).toBeGreaterThanOrEqual(2);
    } finally {
      await local.dispose();
    }
  });

  it('sends notifications/cancelled when the plan is cancelled during a call', async () => {
    const ctx = runtime.createPlan();
    const record = join(dir, 'record.txt');
    const running = runtime.execute('mcp.fixture.hang', {}, ctx);
    const { output } = (await runtime.execute('mcp.fixture.pids', {}, ctx)) as { output: { pid: number } };
    await waitFor(async () => (await readLines(record)).some((line) => line.startsWith('started hang')), 10_000, 'the call to reach the server');
    ctx.cancellationToken.cancel('user pressed stop');
    await expect(running).rejects.toMatchObject({ code: 'TOOL_CANCELLED', reason: 'user pressed stop' });
    await waitFor(async () => (await readLines(record)).some((line) => line.startsWith('cancelled hang')), 10_000, 'the cancellation record');
    const report = await runtime.endPlan(ctx);
    expect(report.failures).toEqual([]);
    expect(isProcessAlive(output.pid)).toBe(false);
  });

  it('fails execute clearly when the tool was not activated', async () => {
    const tool = await source.get('mcp.fixture.echo');
    const ctx = runtime.createPlan();
    const error = await rejectionOf(tool.execute({ text: 'x' }, ctx));
    expect(McpServerError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'MCP_SESSION_NOT_ACTIVE', server: 'fixture', toolName: 'mcp.fixture.echo', planId: ctx.planId });
    expect(error.message).toMatch(/activate/);
    await runtime.endPlan(ctx);
  });
});
