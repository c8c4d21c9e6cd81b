import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { createMcpAdapter } from './mcp-adapter';
import type { McpToolSource } from './mcp-tool-source';
import { countingSpawn, fixtureServer } from './mcp-fixtures.test-helper';

jest.setTimeout(60_000);

/** What the fixture's regex-attack tool returns without arguments: RegExp needs about 37 s to refuse it for `^(a+)+$`. */
const ATTACK_TEXT = `${'a'.repeat(30)}!`;
/** Longest the event loop may stall: far below the 37 s one backtracking match takes, far above any scheduling hiccup. */
const MAX_STALL_MS = 5_000;

describe('MCP server schemas are untrusted: their patterns run on the linear-time engine', () => {
  let source: McpToolSource;
  let runtime: ToolRuntime;
  let logger: RecordingLogger;
  let spawns: ReturnType<typeof countingSpawn>;

  beforeAll(() => {
    logger = new RecordingLogger();
    spawns = countingSpawn();
    source = createMcpAdapter({
      servers: {
        mcpServers: { fixture: fixtureServer({ FIXTURE_REGEX_TOOLS: '1' }, { include: ['regex-attack', 'regex-lookahead', 'echo'], callTimeoutMs: 10_000 }) },
      },
      spawn: spawns.spawn,
      logger,
    });
    runtime = new ToolRuntime({ sources: [source], logger });
  });

  afterAll(async () => {
    await runtime.dispose();
    for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(false);
  });

  it('makes a tool whose schema uses lookahead unavailable with the reason, and keeps the server’s other tools', async () => {
    const { tools, unavailable } = await runtime.discover();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['mcp.fixture.echo', 'mcp.fixture.regex-attack']);
    expect(unavailable).toHaveLength(1);
    expect(unavailable[0]).toMatchObject({
      name: 'mcp.fixture.regex-lookahead',
      source: 'mcp',
      error: { code: 'SCHEMA_INVALID', reason: 'unsupported-pattern' },
    });
    expect(unavailable[0]?.reason).toMatch(/Tool 'mcp\.fixture\.regex-lookahead' input: .*#\/properties\/user\/pattern: the pattern .* uses lookahead/);
    await expect(runtime.runPlan({}, (ctx) => runtime.execute('mcp.fixture.regex-lookahead', { user: 'x' }, ctx))).rejects.toMatchObject({
      code: 'TOOL_REGISTRATION_FAILED',
    });
    const echoed = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.fixture.echo', { text: 'still here' }, ctx));
    expect(echoed.ok).toBe(true);
  });

  it('checks the output a server sends against the backtracking pattern of its own outputSchema without stalling the process', async () => {
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    let ticks = 0;
    const heartbeat = setInterval(() => ticks++, 5);
    stalls.enable();
    try {
      const results = await runtime.runPlan({}, async (ctx) => {
        const collected = [];
        for (let call = 0; call < 3; call++) collected.push(await runtime.execute('mcp.fixture.regex-attack', {}, ctx));
        return collected;
      });
      // Output validation is a warning by default: the result comes back, and the mismatch is logged.
      for (const result of results) expect(result).toMatchObject({ ok: true, output: { word: ATTACK_TEXT } });
      const warnings = logger.entries.filter((entry) => entry.level === 'warn' && /regex-attack/.test(entry.message));
      expect(warnings.length).toBeGreaterThanOrEqual(3);
      expect(warnings[0]?.message).toMatch(/pattern/);
    } finally {
      stalls.disable();
      clearInterval(heartbeat);
    }
    expect(ticks).toBeGreaterThan(0);
    expect(stalls.max / 1e6).toBeLessThan(MAX_STALL_MS);
  });

  it('checks a model’s input against the backtracking pattern of the server’s inputSchema before calling the server', async () => {
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    stalls.enable();
    try {
      const result = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.fixture.regex-attack', { text: ATTACK_TEXT }, ctx));
      expect(result.ok).toBe(false);
      expect(result.ok ? undefined : result.error).toMatchObject({
        code: 'TOOL_SCHEMA_VALIDATION_FAILED',
        direction: 'input',
        issues: [expect.objectContaining({ keyword: 'pattern', instancePath: '/text' })],
      });
      const matching = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.fixture.regex-attack', { text: 'aaaa' }, ctx));
      expect(matching).toMatchObject({ ok: true, output: { word: 'aaaa' } });
    } finally {
      stalls.disable();
    }
    expect(stalls.max / 1e6).toBeLessThan(MAX_STALL_MS);
  });
});
