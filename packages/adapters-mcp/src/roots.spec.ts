import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { resourceFromPath } from '@ca/tool-context';
import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { createMcpAdapter } from './mcp-adapter';
import type { McpAdapterSettings } from './mcp-adapter-settings';
import { countingSpawn, EVERYTHING_SERVER, FILESYSTEM_SERVER, makeTempDir, removeTempDir, waitFor } from './mcp-fixtures.test-helper';

/** A stdio proxy that writes the server's first roots/list request and its next answer in one chunk. */
const ONE_CHUNK_PROXY = join(__dirname, '__fixtures__', 'one-chunk-proxy.js');

jest.setTimeout(60_000);

describe('the plan’s bound resources are the server’s roots', () => {
  let dir: string;
  let first: string;
  let second: string;
  let spawns: ReturnType<typeof countingSpawn>;
  let runtime: ToolRuntime | undefined;

  beforeEach(async () => {
    dir = await realpath(await makeTempDir('ca-mcp-roots-'));
    first = join(dir, 'first');
    second = join(dir, 'second');
    await mkdir(first);
    await mkdir(second);
    await writeFile(join(first, 'mine.txt'), 'first plan data\n');
    await writeFile(join(second, 'secret.txt'), 'not for the first plan\n');
    spawns = countingSpawn();
  });

  afterEach(async () => {
    await runtime?.dispose();
    runtime = undefined;
    for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(false);
    await removeTempDir(dir);
  });

  // server-filesystem started without directories: it may touch nothing but the roots its client gives it.
  function filesystem(settings: Partial<McpAdapterSettings> = {}): ToolRuntime {
    const source = createMcpAdapter({
      servers: { mcpServers: { files: { command: process.execPath, args: [FILESYSTEM_SERVER] } } },
      spawn: spawns.spawn,
      logger: new RecordingLogger(),
      ...settings,
    });
    runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    return runtime;
  }

  const readText = (local: ToolRuntime, ctx: Parameters<ToolRuntime['execute']>[2], path: string) => local.execute('mcp.files.read_text_file', { path }, ctx);

  /**
   * The server applies new roots asynchronously (the adapter waits for it to
   * fetch them, then briefly); on a loaded machine the test waits until they
   * show, so that what it checks is the confinement, not the timing.
   */
  async function allowedDirectories(local: ToolRuntime, ctx: Parameters<ToolRuntime['execute']>[2], expected: string): Promise<string> {
    let text = '';
    await waitFor(
      async () => {
        const result = await local.execute('mcp.files.list_allowed_directories', {}, ctx);
        text = JSON.stringify(result.output);
        return text.includes(expected);
      },
      10_000,
      `the roots to include ${expected}`,
    );
    return text;
  }

  it('server-filesystem is confined to each plan’s resources', async () => {
    const local = filesystem();
    await local.discover();
    await local.runPlan({ resources: [resourceFromPath({ id: 'first', path: first, access: 'write' })] }, async (ctx) => {
      const allowed = await allowedDirectories(local, ctx, first);
      expect(allowed).not.toContain(second);
      expect(await readText(local, ctx, join(first, 'mine.txt'))).toMatchObject({ ok: true, output: { content: 'first plan data\n' } });
      const outside = await readText(local, ctx, join(second, 'secret.txt'));
      expect(outside.ok).toBe(false);
      expect(outside.ok === false && outside.error.message).toMatch(/Access denied/);
    });
    await local.runPlan({ resources: [resourceFromPath({ id: 'second', path: second, access: 'read' })] }, async (ctx) => {
      expect(await allowedDirectories(local, ctx, second)).not.toContain(first);
      expect(await readText(local, ctx, join(second, 'secret.txt'))).toMatchObject({ ok: true, output: { content: 'not for the first plan\n' } });
      expect((await readText(local, ctx, join(first, 'mine.txt'))).ok).toBe(false);
    });
  });

  it('a plan that takes over the discovery session sends roots/list_changed, and the server follows', async () => {
    const local = filesystem({ discoverySessionReuseMs: 60_000 });
    await local.discover();
    await local.runPlan({ resources: [resourceFromPath({ id: 'first', path: first, access: 'read' })] }, async (ctx) => {
      expect(await allowedDirectories(local, ctx, first)).not.toContain(second);
      expect(await readText(local, ctx, join(first, 'mine.txt'))).toMatchObject({ ok: true });
      expect((await readText(local, ctx, join(second, 'secret.txt'))).ok).toBe(false);
    });
    // One process: the discovery session became the plan's.
    expect(spawns.count()).toBe(1);
  });

  it('the server asks for its roots in the same read as its tools/list answer: a plan that takes over still waits for its own roots', async () => {
    // The proxy writes the server's first roots/list and its tools/list answer in one chunk, as a busy machine delivers them.
    const source = createMcpAdapter({
      servers: { mcpServers: { files: { command: process.execPath, args: [ONE_CHUNK_PROXY, FILESYSTEM_SERVER] } } },
      spawn: spawns.spawn,
      logger: new RecordingLogger(),
      discoverySessionReuseMs: 60_000,
    });
    runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    const local = runtime;
    await local.discover();
    // The plan's first call, at once: it must reach the server after the plan's roots, not before.
    const result = await local.runPlan({ resources: [resourceFromPath({ id: 'first', path: first, access: 'read' })] }, (ctx) =>
      readText(local, ctx, join(first, 'mine.txt')),
    );
    expect(result).toMatchObject({ ok: true, output: { content: 'first plan data\n' } });
  });

  it('server-everything lists the roots it was given: the plan’s file resources, named by id', async () => {
    const source = createMcpAdapter({
      servers: { mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] } } },
      spawn: spawns.spawn,
      logger: new RecordingLogger(),
    });
    runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    const local = runtime;
    const result = await local.runPlan(
      {
        resources: [
          resourceFromPath({ id: 'workspace', path: first, access: 'write' }),
          { id: 'api', kind: 'http', uri: 'https://api.example.com/', access: 'read' },
        ],
      },
      (ctx) => local.execute('mcp.everything.get-roots-list', {}, ctx),
    );
    expect(result.ok).toBe(true);
    expect(result.output).toMatch(/Current MCP Roots \(1 total\)/);
    expect(result.output).toMatch(new RegExp(`1\\. workspace\\n\\s+URI: file://${first}`));
  });

  it('"roots": false leaves the capability out', async () => {
    const source = createMcpAdapter({
      servers: { mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], roots: false } } },
      spawn: spawns.spawn,
      logger: new RecordingLogger(),
    });
    runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    expect((await runtime.listTools()).map((tool) => tool.name)).not.toContain('mcp.everything.get-roots-list');
  });
});
