import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { createMcpAdapter } from './mcp-adapter';
import type { McpToolSource } from './mcp-tool-source';
import { countingSpawn, fixtureServer, rejectionOf, waitFor } from './mcp-fixtures.test-helper';

jest.setTimeout(60_000);

describe('shared scope and list_changed', () => {
  let spawns: ReturnType<typeof countingSpawn>;
  let logger: RecordingLogger;
  let source: McpToolSource;
  let runtime: ToolRuntime;

  beforeEach(() => {
    spawns = countingSpawn();
    logger = new RecordingLogger();
    source = createMcpAdapter({
      servers: { mcpServers: { shared: fixtureServer({}, { scope: 'shared' }) } },
      spawn: spawns.spawn,
      logger,
    });
    runtime = new ToolRuntime({ sources: [source], logger });
  });

  afterEach(async () => {
    await runtime.dispose();
    for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(false);
  });

  it('discovers through the shared session and lets later plans lease it without spawning', async () => {
    await runtime.listTools();
    expect(spawns.count()).toBe(1);
    const server = spawns.pids[0]!;
    for (let plan = 0; plan < 3; plan++) {
      await runtime.runPlan({}, async (ctx) => {
        expect(await runtime.execute('mcp.shared.echo', { text: `plan ${plan}` }, ctx)).toMatchObject({ output: `echo: plan ${plan}` });
        expect(await runtime.execute('mcp.shared.sum', { a: plan, b: 1 }, ctx)).toMatchObject({ output: { sum: plan + 1 } });
        // One lease per (plan, tool) activation.
        expect(source.sharedLeases('shared')).toBe(2);
      });
      expect(source.sharedLeases('shared')).toBe(0);
      expect(isProcessAlive(server)).toBe(true);
    }
    expect(spawns.count()).toBe(1);
    await runtime.dispose();
    expect(isProcessAlive(server)).toBe(false);
  });

  it('counts concurrent plans as separate leases', async () => {
    const first = runtime.createPlan();
    const second = runtime.createPlan();
    await Promise.all([runtime.execute('mcp.shared.echo', { text: 'a' }, first), runtime.execute('mcp.shared.echo', { text: 'b' }, second)]);
    expect(source.sharedLeases('shared')).toBe(2);
    await runtime.endPlan(first);
    expect(source.sharedLeases('shared')).toBe(1);
    await runtime.endPlan(second);
    expect(source.sharedLeases('shared')).toBe(0);
    expect(spawns.count()).toBe(1);
  });

  it('opens a new shared session for the next plan when the server died', async () => {
    const failed = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.shared.die', {}, ctx));
    expect(failed.ok === false && failed.error.code).toBe('MCP_SERVER_EXITED');
    const result = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.shared.echo', { text: 'back' }, ctx));
    expect(result).toMatchObject({ ok: true, output: 'echo: back' });
    expect(spawns.count()).toBe(2);
    expect(logger.at('warn').some((entry) => /had ended; opening a new one/.test(entry.message))).toBe(true);
  });

  it('refreshes on tools/list_changed only when the list really changed', async () => {
    const snapshots: string[][] = [];
    let changes = 0;
    source.onToolsChanged(() => {
      changes++;
    });
    await runtime.runPlan({}, async (ctx) => {
      await runtime.execute('mcp.shared.touch-list', {}, ctx);
      await runtime.execute('mcp.shared.add-tool', {}, ctx);
      await waitFor(() => changes > 0, 10_000, 'a tools-changed notification');
      snapshots.push((await runtime.listTools()).map((tool) => tool.name));
      expect(await runtime.execute('mcp.shared.added', {}, ctx)).toMatchObject({ ok: true, output: 'I was added' });
    });
    // touch-list came first and changed nothing: the first notification already saw the new tool.
    expect(changes).toBe(1);
    expect(snapshots[0]).toContain('mcp.shared.added');
    expect(spawns.count()).toBe(1);
  });

  it('refuses to open sessions once disposed', async () => {
    await runtime.listTools();
    await source.dispose();
    const ctx = runtime.createPlan();
    const error = await rejectionOf(runtime.execute('mcp.shared.echo', { text: 'x' }, ctx));
    expect(error.code).toBe('TOOL_ACTIVATION_FAILED');
    expect(error.cause).toMatchObject({ code: 'MCP_SOURCE_DISPOSED', server: 'shared' });
    await runtime.endPlan(ctx);
  });
});
