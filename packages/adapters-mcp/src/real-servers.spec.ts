import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { container } from 'tsyringe';
import { registerToolRuntime, TOOL_RUNTIME, TOOL_SOURCE, ToolAccessDeniedError, ToolRuntime, type ToolProgress } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { createMcpAdapter, registerMcpAdapter } from './mcp-adapter';
import type { McpToolSource } from './mcp-tool-source';
import {
  countingSpawn,
  EVERYTHING_SERVER,
  FILESYSTEM_SERVER,
  makeTempDir,
  rejectionOf,
  removeTempDir,
  startEverythingHttp,
  waitFor,
  type HttpServer,
} from './mcp-fixtures.test-helper';

jest.setTimeout(90_000);

describe('@modelcontextprotocol/server-everything over stdio, through DI', () => {
  const spawns = countingSpawn();
  let runtime: ToolRuntime;
  let source: McpToolSource;

  beforeAll(() => {
    const child = container.createChildContainer();
    child.register('unrelated', { useValue: 1 });
    source = registerMcpAdapter(child, {
      servers: { mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], trustAnnotations: true } } },
      spawn: spawns.spawn,
      logger: new RecordingLogger(),
    });
    registerToolRuntime(child);
    expect(child.resolveAll(TOOL_SOURCE)).toEqual([source]);
    runtime = child.resolve(TOOL_RUNTIME);
  });

  afterAll(async () => {
    await runtime.dispose();
    for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(false);
  });

  it('lists its tools with their capabilities, the task-only one included', async () => {
    const { tools, unavailable } = await runtime.discover();
    const echo = tools.find((tool) => tool.name === 'mcp.everything.echo');
    expect(echo).toMatchObject({ source: 'mcp', capability: { writes: false, idempotent: true, openWorld: false } });
    const gzip = tools.find((tool) => tool.name === 'mcp.everything.gzip-file-as-resource');
    expect(gzip?.capability).toMatchObject({ writes: true, destructive: false, openWorld: true, checkpointable: false });
    expect(tools.map((tool) => tool.name)).toContain('mcp.everything.simulate-research-query');
    expect(unavailable).toEqual([]);
  });

  it('echoes, returns structured content and reports progress in one plan on one process', async () => {
    const before = spawns.count();
    const progress: ToolProgress[] = [];
    await runtime.runPlan({}, async (ctx) => {
      expect(await runtime.execute('mcp.everything.echo', { message: 'hi' }, ctx)).toMatchObject({ ok: true, output: 'Echo: hi' });
      const weather = await runtime.execute('mcp.everything.get-structured-content', { location: 'Chicago' }, ctx);
      expect(weather.ok).toBe(true);
      expect(weather.output).toEqual(expect.objectContaining({ temperature: expect.any(Number), conditions: expect.any(String) }));
      const long = await runtime.execute('mcp.everything.trigger-long-running-operation', { duration: 0.3, steps: 3 }, ctx, {
        onProgress: (item) => progress.push(item),
      });
      expect(long.ok).toBe(true);
      const image = await runtime.execute('mcp.everything.get-tiny-image', {}, ctx);
      expect(image.content?.some((block) => block.type === 'image')).toBe(true);
      expect(ctx.traces.map((trace) => trace.success)).toEqual([true, true, true, true]);
    });
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]).toMatchObject({ progress: 1, total: 3 });
    expect(spawns.count()).toBe(before + 1);
    expect(isProcessAlive(spawns.pids.at(-1)!)).toBe(false);
  });
});

describe('@modelcontextprotocol/server-everything over Streamable HTTP', () => {
  let server: HttpServer;
  let runtime: ToolRuntime;
  const methods: string[] = [];

  beforeAll(async () => {
    server = await startEverythingHttp();
    const source = createMcpAdapter({
      servers: { mcpServers: { web: { url: server.url, headers: { 'X-Test': 'yes' } } } },
      fetch: (url, init) => {
        methods.push(init?.method ?? 'GET');
        return fetch(url, init);
      },
      logger: new RecordingLogger(),
    });
    runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
  });

  afterAll(async () => {
    await runtime?.dispose();
    await server?.stop();
    if (server !== undefined) expect(isProcessAlive(server.pid)).toBe(false);
  });

  it('discovers and calls tools, and terminates each session when its plan ends', async () => {
    const tools = await runtime.listTools();
    expect(tools.map((tool) => tool.name)).toContain('mcp.web.echo');
    // The discovery session was terminated.
    expect(methods.filter((method) => method === 'DELETE')).toHaveLength(1);
    const result = await runtime.runPlan({}, async (ctx) => {
      const sum = await runtime.execute('mcp.web.get-sum', { a: 2, b: 40 }, ctx);
      expect(sum.ok).toBe(true);
      return runtime.execute('mcp.web.echo', { message: 'over http' }, ctx);
    });
    expect(result).toMatchObject({ ok: true, output: 'Echo: over http' });
    expect(methods.filter((method) => method === 'DELETE')).toHaveLength(2);
    await waitFor(() => (server.output().match(/Received session termination request/g) ?? []).length === 2, 10_000, 'two terminations');
  });
});

describe('@modelcontextprotocol/server-filesystem on a temporary directory', () => {
  let dir: string;
  let runtime: ToolRuntime;

  beforeAll(async () => {
    dir = await makeTempDir('ca-mcp-fs-');
    await writeFile(join(dir, 'notes.txt'), 'first line\nsecond line\n');
    const source = createMcpAdapter({
      servers: { mcpServers: { files: { command: process.execPath, args: [FILESYSTEM_SERVER, dir], trustAnnotations: true } } },
      logger: new RecordingLogger(),
    });
    runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
  });

  afterAll(async () => {
    await runtime?.dispose();
    await removeTempDir(dir);
  });

  it('lists and reads files in a read-only plan and refuses its write tools there', async () => {
    await runtime.runPlan({ policy: { readOnly: true } }, async (ctx) => {
      const listing = await runtime.execute('mcp.files.list_directory', { path: dir }, ctx);
      expect(listing.ok).toBe(true);
      expect(listing.output).toEqual({ content: expect.stringContaining('[FILE] notes.txt') });
      const read = await runtime.execute('mcp.files.read_text_file', { path: join(dir, 'notes.txt') }, ctx);
      expect(read.output).toEqual({ content: 'first line\nsecond line\n' });
      const error = await rejectionOf(runtime.execute('mcp.files.write_file', { path: join(dir, 'new.txt'), content: 'x' }, ctx));
      expect(ToolAccessDeniedError.isInstance(error)).toBe(true);
    });
    expect(existsSync(join(dir, 'new.txt'))).toBe(false);
    const writeTool = await runtime.describe('mcp.files.write_file');
    expect(writeTool.capability).toMatchObject({ writes: true, destructive: true, idempotent: true, checkpointable: false });
  });

  it('writes in a writable plan, and reports a path outside the directory as a failed result', async () => {
    await runtime.runPlan({}, async (ctx) => {
      const written = await runtime.execute('mcp.files.write_file', { path: join(dir, 'new.txt'), content: 'hello' }, ctx);
      expect(written.ok).toBe(true);
      const outside = await runtime.execute('mcp.files.read_text_file', { path: '/etc/hostname' }, ctx);
      expect(outside.ok).toBe(false);
      expect(outside.ok === false && outside.error.code).toBe('MCP_TOOL_ERROR');
      expect(outside.ok === false && outside.error.message).toMatch(/Access denied|outside allowed/i);
    });
    expect(await readFile(join(dir, 'new.txt'), 'utf8')).toBe('hello');
  });
});
