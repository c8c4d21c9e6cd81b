import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { createMcpAdapter } from './mcp-adapter';
import type { McpServerConfig } from './mcp-config';
import { parseMcpConfig } from './mcp-config';
import { MemoryToolListCache, toolListKey, type McpCachedToolList, type McpToolListCache } from './mcp-tool-list-cache';
import type { McpToolSource } from './mcp-tool-source';
import { countingSpawn, EVERYTHING_SERVER, FILESYSTEM_SERVER, fixtureServer, makeTempDir, removeTempDir, waitFor } from './mcp-fixtures.test-helper';

jest.setTimeout(120_000);

const NO_CLIENT_FEATURES = { elicitation: false, sampling: false };

describe('tool lists cached per server: discovering and searching start no server', () => {
  let folder: string | undefined;
  const opened: { runtime: ToolRuntime; pids: number[] }[] = [];

  beforeAll(async () => {
    folder = await makeTempDir('ca-mcp-cache-');
  });

  afterEach(async () => {
    for (const { runtime, pids } of opened.splice(0)) {
      await runtime.dispose();
      for (const pid of pids) expect(isProcessAlive(pid)).toBe(false);
    }
  });

  afterAll(() => removeTempDir(folder));

  function open(
    servers: Record<string, McpServerConfig>,
    cache: McpToolListCache,
    extra: { toolListTtlMs?: number } = {},
  ): { runtime: ToolRuntime; source: McpToolSource; spawns: ReturnType<typeof countingSpawn>; logger: RecordingLogger } {
    const spawns = countingSpawn();
    const logger = new RecordingLogger();
    const source = createMcpAdapter({ servers: { mcpServers: servers }, spawn: spawns.spawn, logger, toolListCache: cache, ...extra });
    const runtime = new ToolRuntime({ sources: [source], logger });
    opened.push({ runtime, pids: spawns.pids });
    return { runtime, source, spawns, logger };
  }

  const realServers = (): Record<string, McpServerConfig> => ({
    everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] },
    filesystem: { command: process.execPath, args: [FILESYSTEM_SERVER, folder as string] },
  });

  it('lists each server once, then serves its tools from the cache; a found tool starts only its own server, at its first call', async () => {
    const cache = new MemoryToolListCache();
    const first = open(realServers(), cache);
    const listed = await first.runtime.discover();
    expect(first.spawns.count()).toBe(2);
    expect(cache.size).toBe(2);

    const second = open(realServers(), cache);
    const again = await second.runtime.discover();
    expect(again.tools.map((tool) => tool.name)).toEqual(listed.tools.map((tool) => tool.name));
    // What the server offers besides tools is cached with them: its completions too.
    expect(again.tools.map((tool) => tool.name)).toContain('mcp.everything.completion.complete');
    expect(again.tools.find((tool) => tool.name === 'mcp.everything.get-sum')?.inputSchema).toEqual(
      listed.tools.find((tool) => tool.name === 'mcp.everything.get-sum')?.inputSchema,
    );
    const found = await second.runtime.searchTools('list the entries of a directory', { k: 3 });
    expect(found.map((hit) => hit.name)).toContain('mcp.filesystem.list_directory');
    expect(second.spawns.count()).toBe(0);

    const result = await second.runtime.runPlan({}, (ctx) => second.runtime.execute('mcp.filesystem.list_directory', { path: folder }, ctx));
    expect(result.ok).toBe(true);
    expect(second.spawns.count()).toBe(1);
    expect(second.source.openPlanSessions('everything')).toBe(0);
  });

  it('searches 50 configured servers without starting one, and starts the one whose tool is called', async () => {
    const cache = new MemoryToolListCache();
    const one = open({ everything: realServers()['everything'] as McpServerConfig }, cache);
    await one.runtime.discover();
    const [entry] = [...(await Promise.all([cache.load(keyOf('everything', realServers()['everything'] as McpServerConfig))]))];
    expect(entry).toBeDefined();
    // Fifty servers configured (their own names, the same program): their lists as the first one's, cached earlier.
    const servers: Record<string, McpServerConfig> = {};
    for (let index = 0; index < 50; index++) {
      const name = `server${index}`;
      servers[name] = { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] };
      await cache.save(keyOf(name, servers[name] as McpServerConfig), { ...(entry as McpCachedToolList), server: name });
    }
    const fleet = open(servers, cache);
    const discovered = await fleet.runtime.discover();
    expect(discovered.sourceErrors).toEqual([]);
    expect(discovered.tools.filter((tool) => tool.name.endsWith('.get-sum'))).toHaveLength(50);
    const hits = await fleet.runtime.searchTools('add two numbers', { k: 5 });
    expect(hits[0]?.name).toMatch(/^mcp\.server\d+\.get-sum$/);
    expect(fleet.spawns.count()).toBe(0);
    const sum = await fleet.runtime.runPlan({}, (ctx) => fleet.runtime.execute('mcp.server37.get-sum', { a: 19, b: 23 }, ctx));
    expect(sum.ok).toBe(true);
    expect(fleet.spawns.count()).toBe(1);
  });

  it('lists a server again when its entry is older than the TTL, when its configuration changed, or when the entry is not one', async () => {
    const cache = new MemoryToolListCache();
    const servers = { fixture: fixtureServer() };
    await open(servers, cache).runtime.discover();
    const key = keyOf('fixture', servers.fixture);
    const entry = (await cache.load(key)) as McpCachedToolList;

    await cache.save(key, { ...entry, savedAt: new Date(Date.now() - 2 * 86_400_000).toISOString() });
    const stale = open(servers, cache);
    await stale.runtime.discover();
    expect(stale.spawns.count()).toBe(1);
    expect(Date.now() - Date.parse(((await cache.load(key)) as McpCachedToolList).savedAt)).toBeLessThan(86_400_000);

    const short = open(servers, cache, { toolListTtlMs: 1 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await short.runtime.discover();
    expect(short.spawns.count()).toBe(1);

    const changed = open({ fixture: fixtureServer({ FIXTURE_MODE: 'other' }) }, cache);
    await changed.runtime.discover();
    expect(changed.spawns.count()).toBe(1);

    // An entry that does not say whether the server completes (an earlier form) is not one.
    const { completions: _completions, ...formerOffer } = entry.listing.offer;
    await cache.save(key, { ...entry, listing: { ...entry.listing, offer: formerOffer } } as unknown as McpCachedToolList);
    const former = open(servers, cache);
    await former.runtime.discover();
    expect(former.spawns.count()).toBe(1);

    await cache.save(key, { server: 'fixture', savedAt: new Date().toISOString(), listing: { tools: 'not a list' } } as unknown as McpCachedToolList);
    const corrupt = open(servers, cache);
    const listed = await corrupt.runtime.discover();
    expect(corrupt.spawns.count()).toBe(1);
    expect(listed.tools.some((tool) => tool.name === 'mcp.fixture.echo')).toBe(true);
  });

  it('keeps working when the cache fails: the server is listed, with a warning', async () => {
    const broken: McpToolListCache = {
      load: async () => {
        throw new Error('the cache folder is gone');
      },
      save: async () => {
        throw new Error('read-only file system');
      },
    };
    const { runtime, spawns, logger } = open({ fixture: fixtureServer() }, broken);
    const listed = await runtime.discover();
    expect(listed.tools.some((tool) => tool.name === 'mcp.fixture.echo')).toBe(true);
    expect(spawns.count()).toBe(1);
    const warnings = logger.entries.filter((item) => item.level === 'warn').map((item) => item.message);
    expect(warnings.some((message) => message.includes('could not be read (the server is listed instead): the cache folder is gone'))).toBe(true);
    expect(warnings.some((message) => message.includes('could not be cached: read-only file system'))).toBe(true);
  });

  it('saves the new list on list_changed, and lists a cached server again on the first session opened for a plan', async () => {
    const cache = new MemoryToolListCache();
    const servers = { fixture: fixtureServer() };
    const key = keyOf('fixture', servers.fixture);
    const first = open(servers, cache);
    await first.runtime.discover();
    // A stale entry: a tool the server no longer has.
    const entry = (await cache.load(key)) as McpCachedToolList;
    const stale = { ...entry, listing: { ...entry.listing, tools: [...entry.listing.tools, { name: 'retired', inputSchema: { type: 'object' as const } }] } };
    await cache.save(key, stale);

    const second = open(servers, cache);
    expect((await second.runtime.listTools()).map((tool) => tool.name)).toContain('mcp.fixture.retired');
    await second.runtime.runPlan({}, async (ctx) => {
      expect((await second.runtime.execute('mcp.fixture.add-tool', {}, ctx)).ok).toBe(true);
      await waitFor(
        async () => {
          const names = ((await cache.load(key)) as McpCachedToolList).listing.tools.map((tool) => tool.name);
          return names.includes('added') && !names.includes('retired');
        },
        20_000,
        'the cache to hold the list the server announced',
      );
    });
    expect(second.spawns.count()).toBe(1);
    const names = (await second.runtime.listTools()).map((tool) => tool.name);
    expect(names).toContain('mcp.fixture.added');
    expect(names).not.toContain('mcp.fixture.retired');
  });

  it('keys an entry by what decides the list: not by timeouts or filters, by command, environment and client features', () => {
    const parsed = (entry: McpServerConfig) => parseMcpConfig({ mcpServers: { s: entry } }).servers[0]!;
    const base = parsed({ command: 'node', args: ['a.js'] });
    expect(toolListKey(base, NO_CLIENT_FEATURES)).toMatch(/^[0-9a-f]{64}$/);
    expect(toolListKey(parsed({ command: 'node', args: ['a.js'], callTimeoutMs: 5_000, include: ['x*'] }), NO_CLIENT_FEATURES)).toBe(
      toolListKey(base, NO_CLIENT_FEATURES),
    );
    expect(toolListKey(parsed({ command: 'node', args: ['b.js'] }), NO_CLIENT_FEATURES)).not.toBe(toolListKey(base, NO_CLIENT_FEATURES));
    expect(toolListKey(parsed({ command: 'node', args: ['a.js'], env: { TOKEN: 'x' } }), NO_CLIENT_FEATURES)).not.toBe(toolListKey(base, NO_CLIENT_FEATURES));
    expect(toolListKey(base, { elicitation: true, sampling: false })).not.toBe(toolListKey(base, NO_CLIENT_FEATURES));
  });
});

function keyOf(name: string, config: McpServerConfig): string {
  return toolListKey(parseMcpConfig({ mcpServers: { [name]: config } }).servers[0]!, NO_CLIENT_FEATURES);
}
