import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createCancelMessage, type RegisteredPlan } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { createClient } from '@redis/client';
import { connectRedisPlanRegistry, type RedisPlanRegistry } from './index';
import { startProxy, startRedisServer, waitFor, type TestRedisServer } from './redis-server.test-helper';

// Two processes play two hosts: each runs its own ToolRuntime with a Redis
// plan registry (the built package, as a service would load it) and one plan
// whose tool waits for the plan's cancellation. The test drives them through
// their stdin and reads what they report on stdout.
jest.setTimeout(120_000);

const hostScript = path.join(__dirname, '__fixtures__', 'plan-host.js');

interface HostEvent {
  readonly event: string;
  readonly [field: string]: unknown;
}

interface Host {
  readonly child: ChildProcess;
  readonly events: HostEvent[];
  next(event: string, timeoutMs?: number): Promise<HostEvent>;
  send(request: object): void;
  exited: Promise<number | null>;
}

const hosts: Host[] = [];

function startHost(env: Record<string, string>): Host {
  const child = spawn(process.execPath, [hostScript], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const events: HostEvent[] = [];
  let buffer = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      events.push(JSON.parse(buffer.slice(0, newline)) as HostEvent);
      buffer = buffer.slice(newline + 1);
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const host: Host = {
    child,
    events,
    exited,
    next: async (event, timeoutMs = 30_000) => {
      await waitFor(() => events.some((entry) => entry.event === event || entry.event === 'failed'), timeoutMs, `event '${event}' (stderr: ${stderr})`);
      const found = events.find((entry) => entry.event === event || entry.event === 'failed')!;
      if (found.event === 'failed') throw new Error(`host failed: ${String(found['message'])}`);
      events.splice(events.indexOf(found), 1);
      return found;
    },
    send: (request) => child.stdin!.write(`${JSON.stringify(request)}\n`),
  };
  hosts.push(host);
  return host;
}

let server: TestRedisServer;
let observer: RedisPlanRegistry;

async function redisKeys(): Promise<string[]> {
  const client = createClient({ url: server.url });
  await client.connect();
  try {
    return ((await client.sendCommand(['KEYS', '*'])) as string[]).sort();
  } finally {
    client.destroy();
  }
}

async function subscribers(channel: string): Promise<number> {
  const client = createClient({ url: server.url });
  await client.connect();
  try {
    const reply = (await client.sendCommand(['PUBSUB', 'NUMSUB', channel])) as [string, number];
    return Number(reply[1]);
  } finally {
    client.destroy();
  }
}

const planIds = (plans: readonly RegisteredPlan[]) => plans.map((plan) => plan.planId).sort();

beforeEach(async () => {
  server = await startRedisServer();
  observer = await connectRedisPlanRegistry({ url: server.url, host: 'observer', reconnectMaxDelayMs: 100, logger: new RecordingLogger() });
});

afterEach(async () => {
  for (const host of hosts.splice(0)) {
    if (host.child.exitCode === null && host.child.signalCode === null) host.child.kill('SIGKILL');
    await host.exited;
  }
  await observer.close();
  await server.stop();
});

describe('two hosts sharing one Redis', () => {
  it('a plan started in process A is listed and cancelled from process B; its tool sees it; nothing is left in Redis', async () => {
    const a = startHost({ REDIS_URL: server.url, HOST_NAME: 'host-a', PLAN_ID: 'alpha', EXIT_WHEN_ENDED: '1' });
    const b = startHost({ REDIS_URL: server.url, HOST_NAME: 'host-b', PLAN_ID: 'beta' });
    const registeredA = await a.next('registered');
    const registeredB = await b.next('registered');

    b.send({ command: 'list' });
    const { plans } = (await b.next('list')) as unknown as { plans: RegisteredPlan[] };
    // Oldest first; the two hosts started together, so sort by id to compare.
    const byId = [...plans].sort((first, second) => first.planId.localeCompare(second.planId));
    expect(byId.map((plan) => [plan.planId, plan.host, plan.pid, plan.labels])).toEqual([
      ['alpha', 'host-a', registeredA['pid'], { role: 'host-a' }],
      ['beta', 'host-b', registeredB['pid'], { role: 'host-b' }],
    ]);

    b.send({ command: 'cancel', planId: 'alpha' });
    const sent = await b.next('sent');
    expect(sent['result']).toEqual({ planId: 'alpha', delivery: 'delivered' });
    const seen = await a.next('cancel-seen');
    expect(seen['reason']).toBe('cancelled from host-b');
    // Wall-clock speed is the benchmark's business (tools/bench/registry.bench.js); the test records it.
    process.stdout.write(`cancel from process B seen by the tool in process A after ${Number(seen['at']) - Number(sent['at'])} ms\n`);
    await a.next('plan-ended');
    await a.next('closed');
    expect(await a.exited).toBe(0);

    // Only B's plan is left, and then nothing at all.
    expect(planIds(await observer.list())).toEqual(['beta']);
    expect(await redisKeys()).toEqual(['ca:plans:index', 'ca:plans:plan:beta']);
    b.send({ command: 'finish' });
    await b.next('closed');
    expect(await b.exited).toBe(0);
    expect(await redisKeys()).toEqual([]);
  });

  it('a process killed with SIGKILL: its plan leaves the list within two TTLs', async () => {
    const ttlMs = 1_000;
    const a = startHost({ REDIS_URL: server.url, HOST_NAME: 'host-a', PLAN_ID: 'doomed', TTL_MS: String(ttlMs), HEARTBEAT_MS: '250' });
    await a.next('registered');
    // Alive, its heartbeats keep it listed past its TTL.
    await new Promise((resolve) => setTimeout(resolve, 2 * ttlMs));
    expect(planIds(await observer.list())).toEqual(['doomed']);
    a.child.kill('SIGKILL');
    await a.exited;
    await new Promise((resolve) => setTimeout(resolve, 2 * ttlMs));
    expect(await observer.list()).toEqual([]);
    await expect(observer.send(createCancelMessage('doomed', 'too late'))).rejects.toMatchObject({ code: 'PLAN_REGISTRY_PLAN_NOT_FOUND' });
    expect(await redisKeys()).toEqual([]);
  });

  it('Redis restarted while a plan runs: the plan runs on, registers again, and a cancel sent after the restart reaches it', async () => {
    const a = startHost({ REDIS_URL: server.url, HOST_NAME: 'host-a', PLAN_ID: 'survivor', EXIT_WHEN_ENDED: '1' });
    await a.next('registered');
    expect(planIds(await observer.list())).toEqual(['survivor']);
    await server.restart();
    // The restarted server starts empty: the plan is listed again once its host has reconnected and written it again.
    await waitFor(
      async () => {
        try {
          return planIds(await observer.list()).includes('survivor');
        } catch {
          return false; // the observer itself is reconnecting
        }
      },
      30_000,
      'the plan registered again',
    );
    expect(a.events.filter((event) => event.event === 'cancel-seen' || event.event === 'plan-ended')).toEqual([]);
    await expect(observer.send(createCancelMessage('survivor', 'after the restart'))).resolves.toEqual({ planId: 'survivor', delivery: 'delivered' });
    expect((await a.next('cancel-seen'))['reason']).toBe('after the restart');
    await a.next('closed');
    expect(await redisKeys()).toEqual([]);
  });

  it('a cancel sent while the plan’s connection is down is queued, and delivered when it reconnects', async () => {
    const proxy = await startProxy(server.port);
    try {
      const a = startHost({ REDIS_URL: `redis://127.0.0.1:${proxy.port}`, HOST_NAME: 'host-a', PLAN_ID: 'partitioned', EXIT_WHEN_ENDED: '1' });
      const { instance } = await a.next('registered');
      const channel = `ca:plans:instance:${String(instance)}`;
      expect(await subscribers(channel)).toBe(1);
      proxy.cut();
      // The server has seen the host's connections go.
      await waitFor(async () => (await subscribers(channel)) === 0, 10_000, 'the subscription dropped');
      await expect(observer.send(createCancelMessage('partitioned', 'sent during the partition'))).resolves.toEqual({
        planId: 'partitioned',
        delivery: 'queued',
      });
      expect(await redisKeys()).toEqual(['ca:plans:index', 'ca:plans:pending:partitioned', 'ca:plans:plan:partitioned']);
      expect(a.events.some((event) => event.event === 'cancel-seen')).toBe(false);
      proxy.restore();
      expect((await a.next('cancel-seen'))['reason']).toBe('sent during the partition');
      await a.next('closed');
      expect(await redisKeys()).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});
