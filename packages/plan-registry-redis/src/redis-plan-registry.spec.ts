import fs from 'node:fs';
import path from 'node:path';
import {
  PlanRegistryError,
  ToolRuntime,
  createApprovalMessage,
  createCancelMessage,
  type ApprovalContext,
  type PlanControlMessage,
  type PlanRegistration,
} from '@ca/tool-lifecycle';
import { InMemoryToolSource, RecordingLogger, TestTool } from '@ca/tool-lifecycle/testing';
import { createClient } from '@redis/client';
import { connectRedisPlanRegistry, redisCredentialsFromEnvironment, type RedisPlanRegistry, type RedisPlanRegistrySettings } from './index';
import { TLS_FILES, freePort, startRedisServer, tlsFixtures, waitFor, type TestRedisServer } from './redis-server.test-helper';

jest.setTimeout(60_000);

const registration = (planId: string, labels: Record<string, string> = {}): PlanRegistration => ({
  planId,
  policy: { readOnly: true, requireCheckpoint: false },
  startedAt: new Date().toISOString(),
  tools: [],
  stepsDone: 0,
  labels,
});

let server: TestRedisServer;
const opened: RedisPlanRegistry[] = [];

async function open(settings: Partial<RedisPlanRegistrySettings> = {}): Promise<RedisPlanRegistry> {
  const registry = await connectRedisPlanRegistry({ url: server.url, logger: new RecordingLogger(), ...settings });
  opened.push(registry);
  return registry;
}

/** Every key of the server (the tests own it). */
async function keys(url = server.url, options: object = {}): Promise<string[]> {
  const client = createClient({ url, ...options });
  await client.connect();
  try {
    return (await client.sendCommand(['KEYS', '*'])) as string[];
  } finally {
    client.destroy();
  }
}

async function redisCommand(args: string[]): Promise<unknown> {
  const client = createClient({ url: server.url });
  await client.connect();
  try {
    return await client.sendCommand(args);
  } finally {
    client.destroy();
  }
}

async function failure(promise: Promise<unknown>): Promise<PlanRegistryError> {
  try {
    await promise;
  } catch (error) {
    if (PlanRegistryError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a PlanRegistryError');
}

beforeAll(async () => {
  server = await startRedisServer();
});

afterEach(async () => {
  for (const registry of opened.splice(0)) await registry.close();
});

afterAll(async () => {
  await server.stop();
});

describe('RedisPlanRegistry against a real redis-server', () => {
  it('lists the plans of two registries, carries a cancel from one to the other, and leaves nothing behind', async () => {
    const hostA = await open({ host: 'host-a' });
    const hostB = await open({ host: 'host-b' });
    const received: PlanControlMessage[] = [];
    const alpha = await hostA.register(registration('alpha', { file: 'alpha.yaml' }), (message) => received.push(message));
    const beta = await hostB.register(registration('beta'), () => undefined);
    await alpha.heartbeat({ tools: ['builtin.fs.read'], stepsDone: 3 });
    const listed = await hostB.list();
    expect(listed.map((plan) => [plan.planId, plan.host, plan.pid, plan.stepsDone])).toEqual([
      ['alpha', 'host-a', process.pid, 3],
      ['beta', 'host-b', process.pid, 0],
    ]);
    expect(listed[0]).toEqual(
      expect.objectContaining({ tools: ['builtin.fs.read'], labels: { file: 'alpha.yaml' }, policy: { readOnly: true, requireCheckpoint: false } }),
    );
    // The records carry nothing of the registry's inner workings.
    expect(Object.keys(listed[0]!).sort()).toEqual(['heartbeatAt', 'host', 'labels', 'pid', 'planId', 'policy', 'startedAt', 'stepsDone', 'tools']);

    const message = createCancelMessage('alpha', 'stopped from host-b', 'host-b pid 1');
    await expect(hostB.send(message)).resolves.toEqual({ planId: 'alpha', delivery: 'delivered' });
    await waitFor(() => received.length === 1);
    expect(received).toEqual([message]);

    await alpha.end();
    await beta.end();
    await alpha.end(); // idempotent
    expect(await hostA.list()).toEqual([]);
    expect(await keys()).toEqual([]);
  });

  it('refuses a plan id another process holds, naming where it runs', async () => {
    const hostA = await open({ host: 'host-a' });
    const hostB = await open({ host: 'host-b' });
    const entry = await hostA.register(registration('shared'), () => undefined);
    const error = await failure(hostB.register(registration('shared'), () => undefined));
    expect(error.code).toBe('PLAN_REGISTRY_DUPLICATE_PLAN');
    expect(error.message).toMatch(
      new RegExp(
        `A running plan already has id 'shared' in plan registry redis://127\\.0\\.0\\.1:${server.port}: it runs on host host-a, pid ${process.pid}, since `,
      ),
    );
    // Ending the refused registration's would-be entry cannot remove the holder's.
    expect((await hostB.list()).map((plan) => plan.host)).toEqual(['host-a']);
    await entry.end();
  });

  it('says a plan is not found when no running plan has the id, and checks the message first', async () => {
    const registry = await open();
    expect((await failure(registry.send(createCancelMessage('nowhere', 'stop')))).code).toBe('PLAN_REGISTRY_PLAN_NOT_FOUND');
    const invalid = await failure(registry.send({ kind: 'cancel', planId: 'x', reason: 'r'.repeat(5_000), sentAt: new Date().toISOString() }));
    expect(invalid.code).toBe('PLAN_REGISTRY_INVALID_ARGUMENT');
    expect(await keys()).toEqual([]);
  });

  it('skips malformed records and ignores hostile messages on its channel', async () => {
    const logger = new RecordingLogger();
    const registry = await open({ logger });
    const received: PlanControlMessage[] = [];
    const entry = await registry.register(registration('target'), (message) => received.push(message));
    await redisCommand(['SET', 'ca:plans:plan:junk', '{"planId":']);
    await redisCommand(['ZADD', 'ca:plans:index', String(Date.now() + 60_000), 'junk']);
    expect((await registry.list()).map((plan) => plan.planId)).toEqual(['target']);
    expect(logger.at('warn').map((entry) => entry.message)).toEqual([expect.stringContaining('1 malformed plan record(s) were skipped')]);
    const channel = `ca:plans:instance:${registry.instance}`;
    for (const payload of [
      'not json',
      '{"kind":"cancel"}',
      JSON.stringify({ kind: 'cancel', planId: 'target', reason: '\u001b[2Jboom', sentAt: 'now' }),
      'x'.repeat(70_000),
    ]) {
      await redisCommand(['PUBLISH', channel, payload]);
    }
    await redisCommand(['PUBLISH', channel, JSON.stringify(createCancelMessage('target', 'the one real message'))]);
    await waitFor(() => received.length === 1);
    expect(received.map((message) => message.reason)).toEqual(['the one real message']);
    await entry.end();
    await redisCommand(['DEL', 'ca:plans:plan:junk', 'ca:plans:index']);
  });

  it('keeps registries with different key prefixes apart', async () => {
    const teamA = await open({ keyPrefix: 'team-a:' });
    const teamB = await open({ keyPrefix: 'team-b:' });
    const entry = await teamA.register(registration('only-a'), () => undefined);
    expect(await teamB.list()).toEqual([]);
    expect((await failure(teamB.send(createCancelMessage('only-a', 'stop')))).code).toBe('PLAN_REGISTRY_PLAN_NOT_FOUND');
    await entry.end();
  });

  it('is what a ToolRuntime announces its plans in: a cancel sent through Redis stops a running tool', async () => {
    const registry = await open({ host: 'worker-1' });
    const control = await open({ host: 'operator' });
    let seen: string | undefined;
    const tool = new TestTool({
      name: 'test.wait',
      stateless: true,
      execute: (_input, ctx) =>
        new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error((seen = ctx.cancellationToken.reason))))),
    });
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], planRegistry: registry, logger: new RecordingLogger() });
    const running = runtime.runPlan({ planId: 'long-job', registry: { labels: { job: '42' } } }, (ctx) => runtime.execute('test.wait', {}, ctx));
    await waitFor(async () => (await control.list()).some((plan) => plan.planId === 'long-job'));
    expect((await control.list())[0]).toEqual(expect.objectContaining({ host: 'worker-1', labels: { job: '42' } }));
    await control.send(createCancelMessage('long-job', 'cancelled by the operator'));
    await expect(running).rejects.toMatchObject({ code: 'TOOL_CANCELLED', reason: 'cancelled by the operator' });
    expect(seen).toBe('cancelled by the operator');
    expect(await keys()).toEqual([]);
  });

  it('carries approval: a waiting request is listed for every host, and an answer from another registry runs the call', async () => {
    const registry = await open({ host: 'worker-1' });
    const control = await open({ host: 'operator' });
    const tool = new TestTool({ name: 'test.write', capability: { writes: true, openWorld: false } });
    const contexts: ApprovalContext[] = [];
    const runtime = new ToolRuntime({
      sources: [new InMemoryToolSource([tool])],
      planRegistry: registry,
      logger: new RecordingLogger(),
      // The person asked in the plan's own process never answers: the answer comes through Redis.
      approvalHandler: { requestApproval: (_request, context) => (contexts.push(context), new Promise(() => undefined)) },
      options: { registryApprovals: true },
    });
    const running = runtime.runPlan({ planId: 'needs-ok', policy: { approval: { capabilities: ['writes'] } } }, (ctx) =>
      runtime.execute('test.write', {}, ctx),
    );
    await waitFor(async () => (await control.list())[0]?.pendingApprovals?.length === 1);
    const listed = (await control.list())[0]!;
    expect(listed.pendingApprovals).toEqual([{ requestId: '1', toolName: 'test.write', askedAt: expect.any(String) }]);
    expect(listed.policy).toMatchObject({ approval: 'writes' });
    const answer = createApprovalMessage({ planId: 'needs-ok', requestId: '1', decision: 'approve', sentBy: 'ops (operator)' });
    expect(await control.send(answer)).toEqual({ planId: 'needs-ok', delivery: 'delivered' });
    const result = await running;
    expect(result.ok).toBe(true);
    expect(result.trace.approval).toMatchObject({ decision: 'approved', decidedBy: 'ops (operator)', requestId: '1' });
    expect(tool.count('execute')).toBe(1);
    expect(contexts[0]?.signal.aborted).toBe(true);
    expect(await keys()).toEqual([]);
  });

  it('expires the plans of a registry that stops refreshing them, within one TTL', async () => {
    const writer = await open({ ttlMs: 500, heartbeatIntervalMs: 100 });
    const reader = await open();
    await writer.register(registration('orphan'), () => undefined);
    expect((await reader.list()).map((plan) => plan.planId)).toEqual(['orphan']);
    // No heartbeat comes (no runtime drives this entry): after the TTL the record is gone.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await reader.list()).toEqual([]);
    expect(await keys()).toEqual([]);
  });

  it('carries broadcasts between registries of the same prefix only, to the subscribers of the name, until they stop', async () => {
    const one = await open({ keyPrefix: 'cast:' });
    const two = await open({ keyPrefix: 'cast:' });
    const apart = await open({ keyPrefix: 'other:' });
    const heard: string[] = [];
    const stop = await two.subscribeBroadcast('fleet-x', (text) => heard.push(`two ${text}`));
    await one.subscribeBroadcast('fleet-x', (text) => heard.push(`one ${text}`));
    await apart.subscribeBroadcast('fleet-x', (text) => heard.push(`apart ${text}`));
    await two.subscribeBroadcast('fleet-y', (text) => heard.push(`y ${text}`));
    // A handler that throws disturbs nothing else.
    await two.subscribeBroadcast('fleet-x', () => {
      throw new Error('a broken handler');
    });
    await one.publishBroadcast('fleet-x', 'hello');
    await waitFor(() => heard.length >= 2, 30_000, 'the broadcast to reach both registries of the prefix');
    expect(heard.sort()).toEqual(['one hello', 'two hello']);
    await stop();
    await one.publishBroadcast('fleet-x', 'again');
    await waitFor(() => heard.includes('one again'), 30_000, 'the second broadcast');
    expect(heard.filter((text) => text.startsWith('two'))).toEqual(['two hello']);
    await expect(one.publishBroadcast('bad name!', 'x')).rejects.toMatchObject({ code: 'PLAN_REGISTRY_INVALID_ARGUMENT' });
    await expect(one.publishBroadcast('fleet-x', 'x'.repeat(64 * 1024 + 1))).rejects.toMatchObject({ code: 'PLAN_REGISTRY_INVALID_ARGUMENT' });
    await expect(one.subscribeBroadcast('fleet-x', 'no' as never)).rejects.toMatchObject({ code: 'PLAN_REGISTRY_INVALID_ARGUMENT' });
  });

  it('refuses work once closed, and withdraws its plans when it closes', async () => {
    const registry = await open();
    await registry.register(registration('left-open'), () => undefined);
    await registry.close();
    expect(await keys()).toEqual([]);
    expect((await failure(registry.list())).code).toBe('PLAN_REGISTRY_CLOSED');
    expect((await failure(registry.register(registration('late'), () => undefined))).code).toBe('PLAN_REGISTRY_CLOSED');
    await registry.close(); // idempotent
  });
});

describe('connecting', () => {
  it('reports a server that cannot be reached, without the password, within the connect timeout', async () => {
    const port = await freePort();
    const error = await failure(
      connectRedisPlanRegistry({ url: `redis://planner:hunter2-secret@127.0.0.1:${port}/2`, connectTimeoutMs: 300, logger: new RecordingLogger() }),
    );
    expect(error.code).toBe('PLAN_REGISTRY_UNAVAILABLE');
    expect(error.message).toMatch(new RegExp(`^Plan registry redis://127\\.0\\.0\\.1:${port}/2 cannot be reached: .*ECONNREFUSED`));
    expect(error.message).not.toContain('hunter2-secret');
    expect(error.message).not.toContain('planner');
  });

  it.each([
    [{ url: 'http://127.0.0.1:6379' }, 'url must start with redis:// or rediss://'],
    [{ url: 'redis://127.0.0.1:6379/?db=1' }, 'url must not carry a query'],
    [{ url: 'redis://127.0.0.1:6379/zero' }, "the URL's path must be a database number"],
    [{ url: 'redis://h', ttlMs: 1_000, heartbeatIntervalMs: 1_000 }, 'heartbeatIntervalMs (1000) must be less than ttlMs (1000)'],
    [{ url: 'redis://h', tls: { ca: 'x' } }, 'use rediss:// for TLS'],
    [{ url: 'redis://h', keyPrefix: 'has space' }, 'keyPrefix must be a string of 1–100 characters without spaces'],
    [{ url: 'redis://h', ttl: 5 }, "'ttl' is not a setting"],
    [{ url: 'redis://:pass@h', password: 'line\nbreak' }, 'password must be a non-empty string without control characters'],
  ])('refuses the settings %j', async (settings, reason) => {
    const error = await failure(connectRedisPlanRegistry(settings as RedisPlanRegistrySettings));
    expect(error.code).toBe('PLAN_REGISTRY_INVALID_ARGUMENT');
    expect(error.message).toContain(reason);
    expect(error.message).not.toContain('pass@');
  });

  it.each([
    [
      'redis:/planner:s3cret-pw@127.0.0.1:6379',
      'Plan registry redis:/***@127.0.0.1:6379: url names no host: expected redis://host:6379/0 (two slashes after the scheme). Fix the value named above.',
    ],
    [
      'redis://planner:s3c ret@127.0.0.1:6379/0 x',
      "Plan registry redis://127.0.0.1:6379/0%20x: the URL's path must be a database number (/0); got /0%20x. Fix the value named above.",
    ],
    [
      'redis://planner:s3cret-pw@[::1',
      "Plan registry redis: its url 'redis://***@[::1' cannot be read as a URL: expected redis://host:6379/0 (rediss:// for TLS), a space or an @ of the password percent-encoded — or the password in REDIS_PASSWORD. Fix the value named above.",
    ],
  ])('says what is wrong with the malformed URL %j without its credentials', async (url, message) => {
    const error = await failure(connectRedisPlanRegistry({ url, logger: new RecordingLogger() }));
    expect(error.code).toBe('PLAN_REGISTRY_INVALID_ARGUMENT');
    expect(error.message).toBe(message);
    expect(error.message).not.toMatch(/s3c|planner/);
  });

  it('authenticates as an ACL user from the environment, with only the rights the registry needs', async () => {
    const acl = await startRedisServer({
      args: [
        '--user',
        'default',
        'off',
        '--user',
        'planner',
        'on',
        '>s3cret-pass',
        '~ca:plans:*',
        '&ca:plans:*',
        ...'+@connection +evalsha +eval +subscribe +publish +mget +zrange +get +set +del +zadd +zrem +zcard +zremrangebyscore +hset +hgetall +pexpire +time'.split(
          ' ',
        ),
      ],
    });
    try {
      const credentials = redisCredentialsFromEnvironment({ REDIS_USERNAME: 'planner', REDIS_PASSWORD: 's3cret-pass', REDIS_OTHER: 'x' });
      expect(credentials).toEqual({ username: 'planner', password: 's3cret-pass' });
      const registry = await connectRedisPlanRegistry({ url: acl.url, ...credentials, logger: new RecordingLogger() });
      const other = await connectRedisPlanRegistry({ url: acl.url, ...credentials, logger: new RecordingLogger() });
      const received: string[] = [];
      const entry = await registry.register(registration('acl-plan'), (message) => received.push(message.kind === 'cancel' ? message.reason : message.kind));
      await entry.heartbeat({ tools: ['a'], stepsDone: 1 });
      expect((await other.list()).map((plan) => plan.planId)).toEqual(['acl-plan']);
      await other.send(createCancelMessage('acl-plan', 'with least privilege'));
      await waitFor(() => received.length === 1);
      await entry.end();
      await registry.close();
      await other.close();

      const wrong = await failure(connectRedisPlanRegistry({ url: acl.url, username: 'planner', password: 'wrong-pass-123', logger: new RecordingLogger() }));
      expect(wrong.code).toBe('PLAN_REGISTRY_AUTH_FAILED');
      expect(wrong.message).toMatch(/refused the credentials: .*WRONGPASS/);
      // The server's own sentence ends with a period: the message has one, not two.
      expect(wrong.message).toMatch(/user is disabled\. Set the ACL user/);
      expect(wrong.message).not.toMatch(/\.\./);
      expect(wrong.message).toContain("the user given is 'planner'");
      expect(wrong.message).not.toContain('wrong-pass-123');
      const anonymous = await failure(connectRedisPlanRegistry({ url: acl.url, logger: new RecordingLogger() }));
      expect(anonymous.code).toBe('PLAN_REGISTRY_AUTH_FAILED');
    } finally {
      await acl.stop();
    }
  });

  it('speaks TLS to a rediss:// server whose authority it is given, and refuses one it cannot verify', async () => {
    const tls = await startRedisServer({ tls: TLS_FILES });
    try {
      const ca = fs.readFileSync(path.join(tlsFixtures, 'ca.crt'));
      const registry = await connectRedisPlanRegistry({ url: tls.url, tls: { ca }, logger: new RecordingLogger() });
      const entry = await registry.register(registration('over-tls'), () => undefined);
      expect((await registry.list()).map((plan) => plan.planId)).toEqual(['over-tls']);
      await entry.end();
      await registry.close();
      expect(await keys(tls.url, { socket: { tls: true, ca } })).toEqual([]);
      // By address: the certificate names 127.0.0.1 too, and no server name is sent for an address.
      const warnings: string[] = [];
      const onWarning = (warning: Error) => warnings.push(warning.message);
      process.on('warning', onWarning);
      try {
        const byAddress = await connectRedisPlanRegistry({ url: `rediss://127.0.0.1:${tls.port}`, tls: { ca }, logger: new RecordingLogger() });
        expect(await byAddress.list()).toEqual([]);
        await byAddress.close();
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings).toEqual([]);

      const untrusted = await failure(connectRedisPlanRegistry({ url: tls.url, connectTimeoutMs: 1_000, logger: new RecordingLogger() }));
      expect(untrusted.code).toBe('PLAN_REGISTRY_UNAVAILABLE');
      expect(untrusted.message).toMatch(/self-signed|unable to (get|verify)/i);
      // Plain TCP to a TLS port gets no answer it understands.
      const plain = await failure(connectRedisPlanRegistry({ url: `redis://127.0.0.1:${tls.port}`, connectTimeoutMs: 500, logger: new RecordingLogger() }));
      expect(plain.code).toBe('PLAN_REGISTRY_UNAVAILABLE');
    } finally {
      await tls.stop();
    }
  });
});
