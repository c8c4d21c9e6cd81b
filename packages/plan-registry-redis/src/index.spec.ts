import { PLAN_REGISTRY, TOOL_RUNTIME, registerToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { container } from 'tsyringe';
import * as publicApi from './index';
import * as testing from './testing/index';
import { redactSecrets } from './redis-plan-registry-settings';
import { startRedisServer } from './redis-server.test-helper';

describe('@ca/plan-registry-redis public API', () => {
  it('exports exactly the documented names', () => {
    expect(Object.keys(publicApi).sort()).toEqual([
      'RedisPlanRegistry',
      'RedisResultStore',
      'connectRedisPlanRegistry',
      'describeRedisUrl',
      'redisCredentialsFromEnvironment',
      'registerRedisPlanRegistry',
    ]);
  });

  it('exports a redis-server for tests from the testing subpath only', () => {
    expect(Object.keys(testing).sort()).toEqual(['freePort', 'startRedisServer']);
  });

  it("starts, lists the keys of, restarts and stops a redis-server of the test's own", async () => {
    const server = await startRedisServer();
    try {
      expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
      const registry = await publicApi.connectRedisPlanRegistry({ url: server.url, logger: new RecordingLogger() });
      await registry.register({ planId: 'kept', policy: {}, startedAt: new Date().toISOString(), tools: [], stepsDone: 0, labels: {} }, () => undefined);
      expect((await server.keys()).length).toBeGreaterThan(0);
      await registry.close();
      await server.restart();
      expect(await server.keys()).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it('registers a connected registry under PLAN_REGISTRY, where the runtime finds it', async () => {
    const server = await startRedisServer();
    const services = container.createChildContainer();
    try {
      const registry = await publicApi.registerRedisPlanRegistry(services, { url: server.url, logger: new RecordingLogger() });
      expect(services.resolve(PLAN_REGISTRY)).toBe(registry);
      registerToolRuntime(services);
      const runtime = services.resolve(TOOL_RUNTIME);
      await runtime.runPlan({ planId: 'through-di' }, async () => expect((await registry.list()).map((plan) => plan.planId)).toEqual(['through-di']));
      expect(await registry.list()).toEqual([]);
      await registry.close();
    } finally {
      await server.stop();
    }
  });

  it('refuses something that is not a container', async () => {
    await expect(publicApi.registerRedisPlanRegistry({} as never, { url: 'redis://127.0.0.1:1' })).rejects.toMatchObject({
      code: 'PLAN_REGISTRY_INVALID_ARGUMENT',
    });
  });

  it('describes a URL without its credentials, and redacts secrets from messages', () => {
    expect(publicApi.describeRedisUrl('rediss://ops:pa55word@cache.internal:6380/3')).toBe('rediss://cache.internal:6380/3');
    expect(redactSecrets('AUTH failed for redis://ops:pa55word@h:1 with pa55word', ['pa55word'])).toBe('AUTH failed for redis://***@h:1 with ***');
  });
});
