import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolAccessDeniedError, ToolCheckpointRequiredError, ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { createMcpAdapter } from './mcp-adapter';
import type { McpStdioServerConfig } from './mcp-config';
import { McpConfigError } from './mcp-config-error';
import { countingSpawn, fixtureServer, makeTempDir, rejectionOf, removeTempDir, waitFor } from './mcp-fixtures.test-helper';

jest.setTimeout(60_000);

describe('annotations are believed only from servers the configuration trusts', () => {
  let dir: string;
  let written: string;
  let spawns: ReturnType<typeof countingSpawn>;
  const runtimes: ToolRuntime[] = [];

  beforeEach(async () => {
    dir = await makeTempDir();
    written = join(dir, 'written.txt');
    spawns = countingSpawn();
  });

  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.dispose();
    for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(false);
    await removeTempDir(dir);
  });

  function setUp(extra: Partial<McpStdioServerConfig>, name = 'fixture', logger = new RecordingLogger()): ToolRuntime {
    const source = createMcpAdapter({
      servers: { mcpServers: { [name]: fixtureServer({ FIXTURE_WRITE_FILE: written }, { exclude: ['task-only', 'bad-schema'], ...extra }) } },
      spawn: spawns.spawn,
      logger,
    });
    const runtime = new ToolRuntime({ sources: [source], logger });
    runtimes.push(runtime);
    return runtime;
  }

  it('a server that lies with readOnlyHint: true cannot write in a read-only plan unless it is trusted', async () => {
    const runtime = setUp({});
    const lying = await runtime.describe('mcp.fixture.lying-write');
    expect(lying.annotations).toMatchObject({ mcpAnnotations: { readOnlyHint: true }, mcpAnnotationsTrusted: false });
    expect(lying.capability).toEqual({ writes: true, checkpointable: false, idempotent: false, destructive: true, openWorld: true });
    await runtime.runPlan({ policy: { readOnly: true } }, async (ctx) => {
      const error = await rejectionOf(runtime.execute('mcp.fixture.lying-write', { text: 'sneaky' }, ctx));
      expect(ToolAccessDeniedError.isInstance(error)).toBe(true);
    });
    await runtime.runPlan({ policy: { requireCheckpoint: true } }, async (ctx) => {
      const error = await rejectionOf(runtime.execute('mcp.fixture.echo', { text: 'x' }, ctx));
      expect(ToolCheckpointRequiredError.isInstance(error)).toBe(true);
    });
    expect(existsSync(written)).toBe(false);

    // The same server, trusted by the configuration: its claim is believed, and it writes.
    const trusting = setUp({ trustAnnotations: true });
    expect((await trusting.describe('mcp.fixture.lying-write')).capability).toMatchObject({ writes: false, openWorld: false });
    const result = await trusting.runPlan({ policy: { readOnly: true } }, (ctx) => trusting.execute('mcp.fixture.lying-write', { text: 'believed' }, ctx));
    expect(result.ok).toBe(true);
    expect(await readFile(written, 'utf8')).toBe('believed\n');
  });

  it('a tool the server adds later falls under the same rule', async () => {
    const runtime = setUp({});
    const ctx = runtime.createPlan();
    expect((await runtime.execute('mcp.fixture.add-tool', {}, ctx)).ok).toBe(true);
    await waitFor(async () => (await runtime.listTools()).some((tool) => tool.name === 'mcp.fixture.added'), 10_000, 'the added tool');
    expect((await runtime.describe('mcp.fixture.added')).capability).toMatchObject({ writes: true, openWorld: true, checkpointable: false });
    await runtime.endPlan(ctx);
  });

  it('the configuration may still vouch for one tool with "capabilities"', async () => {
    const runtime = setUp({ capabilities: { echo: { writes: false } } });
    const result = await runtime.runPlan({ policy: { readOnly: true } }, (ctx) => runtime.execute('mcp.fixture.echo', { text: 'vouched' }, ctx));
    expect(result).toMatchObject({ ok: true, output: 'echo: vouched' });
  });

  it('a "capabilities" key naming a tool the server does not offer is a configuration error, with the closest name', async () => {
    const runtime = setUp({ capabilities: { ecko: { writes: true } } });
    const { tools, sourceErrors } = await runtime.discover();
    expect(tools).toEqual([]);
    const error = sourceErrors[0]?.error;
    expect(McpConfigError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'MCP_CONFIG_INVALID', server: 'fixture', key: 'capabilities.ecko' });
    expect(error?.message).toMatch(/names 'ecko', which MCP server 'fixture' does not offer \(did you mean 'echo'\?\)/);
  });
});

describe('a warning about an unavailable tool', () => {
  it('is given once per process, not at every discovery', async () => {
    const spawns = countingSpawn();
    const loggers = [new RecordingLogger(), new RecordingLogger()];
    const runtimes = loggers.map(
      (logger) =>
        new ToolRuntime({
          // task-only needs a server that runs tasks, which the fixture does not declare.
          sources: [
            createMcpAdapter({ servers: { mcpServers: { warned: fixtureServer({}, { include: ['echo', 'task-only'] }) } }, spawn: spawns.spawn, logger }),
          ],
          logger,
        }),
    );
    try {
      for (const runtime of runtimes) {
        const { unavailable } = await runtime.discover();
        expect(unavailable.map((item) => item.name)).toEqual(['mcp.warned.task-only']);
        await runtime.discover({ refresh: true });
      }
      const warnings = loggers.flatMap((logger) => logger.at('warn')).filter((entry) => /mcp\.warned\.task-only/.test(entry.message));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.message).toMatch(/can only run as a task .* but the server does not declare that it runs tool calls as tasks/);
    } finally {
      for (const runtime of runtimes) await runtime.dispose();
    }
  });
});
