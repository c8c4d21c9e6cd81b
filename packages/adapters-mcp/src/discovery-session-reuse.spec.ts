import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { createMcpAdapter } from './mcp-adapter';
import type { McpToolSource } from './mcp-tool-source';
import { countingSpawn, fixtureServer, waitFor } from './mcp-fixtures.test-helper';

jest.setTimeout(60_000);

describe('discoverySessionReuseMs: the discovery session is handed to the first plan', () => {
  let spawns: ReturnType<typeof countingSpawn>;
  let source: McpToolSource;
  let runtime: ToolRuntime;
  const started: { runtime: ToolRuntime; pids: number[] }[] = [];

  function setUp(discoverySessionReuseMs?: number): void {
    spawns = countingSpawn();
    const logger = new RecordingLogger();
    source = createMcpAdapter({
      servers: { mcpServers: { fixture: fixtureServer() } },
      spawn: spawns.spawn,
      logger,
      ...(discoverySessionReuseMs === undefined ? {} : { discoverySessionReuseMs }),
    });
    runtime = new ToolRuntime({ sources: [source], logger });
    started.push({ runtime, pids: spawns.pids });
  }

  afterEach(async () => {
    for (const { runtime: each, pids } of started.splice(0)) {
      await each.dispose();
      for (const pid of pids) expect(isProcessAlive(pid)).toBe(false);
    }
  });

  it('runs the first plan on the discovery process, and the next plan on a process of its own', async () => {
    setUp(60_000);
    await runtime.discover();
    expect(spawns.count()).toBe(1);
    const discoveryPid = spawns.pids[0] as number;
    expect(isProcessAlive(discoveryPid)).toBe(true);
    const first = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.fixture.pids', {}, ctx));
    expect(first).toMatchObject({ ok: true, output: { pid: discoveryPid } });
    expect(spawns.count()).toBe(1);
    // The plan owned the session: it ended with the plan.
    expect(isProcessAlive(discoveryPid)).toBe(false);
    const second = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.fixture.pids', {}, ctx));
    expect(spawns.count()).toBe(2);
    expect(second).toMatchObject({ ok: true, output: { pid: spawns.pids[1] } });
    expect(isProcessAlive(spawns.pids[1] as number)).toBe(false);
  });

  it('hands the session to one plan only; a concurrent plan opens its own', async () => {
    setUp(60_000);
    await runtime.discover();
    const first = runtime.createPlan();
    const second = runtime.createPlan();
    const [a, b] = await Promise.all([runtime.execute('mcp.fixture.pids', {}, first), runtime.execute('mcp.fixture.pids', {}, second)]);
    const pids = [a, b].map((result) => (result.ok ? (result.output as { pid: number }).pid : -1));
    expect(new Set(pids).size).toBe(2);
    expect(pids).toContain(spawns.pids[0]);
    expect(spawns.count()).toBe(2);
    await runtime.endPlan(first);
    await runtime.endPlan(second);
  });

  it('closes a session no plan takes when the time is up, and on dispose', async () => {
    setUp(200);
    await runtime.discover();
    const pid = spawns.pids[0] as number;
    await waitFor(() => !isProcessAlive(pid), 10_000, 'the unclaimed discovery server to exit');
    await runtime.discover({ refresh: true });
    // The catalog is cached per server: a refresh of the runtime lists from the cache.
    expect(spawns.count()).toBe(1);

    setUp(60_000);
    await runtime.discover();
    const kept = spawns.pids[0] as number;
    expect(isProcessAlive(kept)).toBe(true);
    await runtime.dispose();
    expect(isProcessAlive(kept)).toBe(false);
  });

  it('is off by default: the discovery server is stopped, and the plan starts its own', async () => {
    setUp();
    await runtime.discover();
    await waitFor(() => !isProcessAlive(spawns.pids[0] as number), 10_000, 'the discovery server to exit');
    const result = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.fixture.pids', {}, ctx));
    expect(spawns.count()).toBe(2);
    expect(result).toMatchObject({ ok: true, output: { pid: spawns.pids[1] } });
  });

  it('refuses a value that is not a whole number of milliseconds', () => {
    for (const value of [-1, 1.5, Number.NaN, 2 ** 31]) {
      expect(() => createMcpAdapter({ servers: { mcpServers: {} }, discoverySessionReuseMs: value })).toThrow(/discoverySessionReuseMs must be a whole number/);
    }
  });
});
