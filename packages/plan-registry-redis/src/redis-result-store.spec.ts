import { ToolRuntime, ToolSet, toolSuccess, type ResultHandle, type ToolInstance } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { createClient } from '@redis/client';
import { connectRedisPlanRegistry, type RedisPlanRegistry } from './redis-plan-registry';
import { startRedisServer, type TestRedisServer } from './redis-server.test-helper';

jest.setTimeout(60_000);

const LOG = Array.from({ length: 3_000 }, (_, index) => `${index + 1} GET /api/items 200 token=ghp_${'a'.repeat(36)}`).join('\n');
const dump: ToolInstance = {
  descriptor: {
    name: 'logs.dump',
    description: 'Dumps the access log.',
    source: 'custom',
    capability: { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false },
  },
  execute: async () => toolSuccess(LOG),
};

describe('the result store on Redis', () => {
  let server: TestRedisServer;
  const registries: RedisPlanRegistry[] = [];

  beforeAll(async () => {
    server = await startRedisServer();
  });

  afterAll(async () => {
    for (const registry of registries.splice(0)) await registry.close();
    await server.stop();
  });

  async function keys(): Promise<string[]> {
    const client = createClient({ url: server.url });
    await client.connect();
    try {
      return (await client.keys('ca:plans:result*')).sort();
    } finally {
      client.destroy();
    }
  }

  async function ttls(names: readonly string[]): Promise<number[]> {
    const client = createClient({ url: server.url });
    await client.connect();
    try {
      return await Promise.all(names.map((name) => client.pTTL(name)));
    } finally {
      client.destroy();
    }
  }

  async function runtime(): Promise<ToolRuntime> {
    const registry = await connectRedisPlanRegistry({ url: server.url, logger: new RecordingLogger() });
    registries.push(registry);
    return new ToolRuntime({
      logger: new RecordingLogger(),
      resultStore: registry.resultStore({ ttlMs: 600_000 }),
      sources: [new ToolSet({ id: 'logs', kind: 'custom', tools: [dump], schemaTrust: 'trusted' })],
      options: { outputBudget: { bytes: 4_096 } },
    });
  }

  it('keeps a plan’s results with a TTL, reads them from another process of the fleet, and deletes them when the plan ends', async () => {
    const first = await runtime();
    const second = await runtime();
    const ctx = first.createPlan({ planId: 'fleet-plan' });
    const { handle } = (await first.execute('logs.dump', {}, ctx)).handle as ResultHandle;
    // Read once where it was made (the read waits for the store to finish) …
    const here = await first.execute('results.read', { handle, lines: { from: 2, to: 2 } }, ctx);
    expect(here.output).toMatchObject({ text: `2 GET /api/items 200 token=***\n` });
    // … and by another process running a step of the same plan.
    const elsewhere = second.createPlan({ planId: 'fleet-plan' });
    const there = await second.execute('results.grep', { handle, pattern: '^2999 ' }, elsewhere);
    expect(there.output).toMatchObject({ matches: [{ line: 2999, text: '2999 GET /api/items 200 token=***' }] });
    const other = second.createPlan({ planId: 'another-plan' });
    const refused = await second.execute('results.read', { handle }, other);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error.code).toBe('TOOL_RESULT_NOT_FOUND');

    const stored = await keys();
    expect(stored.filter((key) => key.endsWith(':data') || key.endsWith(':meta'))).toHaveLength(2);
    expect(stored.some((key) => key.endsWith(':part'))).toBe(false);
    for (const ttl of await ttls(stored)) expect(ttl).toBeGreaterThan(0);

    await first.endPlan(ctx);
    expect(await keys()).toEqual([]);
    await second.endPlan(elsewhere);
    await second.endPlan(other);
  });

  it('refuses a name that is not a handle before any key is built from it', async () => {
    const registry = await connectRedisPlanRegistry({ url: server.url, logger: new RecordingLogger() });
    registries.push(registry);
    const store = registry.resultStore();
    expect(await store.get('p', '*')).toBeUndefined();
    await expect(store.read('p', 'res-x:*', 0, 10)).rejects.toThrow('is not a result handle');
    await expect(store.create({ planId: 'p', handle: '../x', toolName: 't', executionId: 'e', format: 'text', createdAt: '' })).rejects.toThrow(
      'is not a result handle',
    );
    expect(() => registry.resultStore({ ttlMs: 10 })).toThrow(TypeError);
  });
});
