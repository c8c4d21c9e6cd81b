import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startRedisServer, type TestRedisServer } from '@ca/plan-registry-redis/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { fixtures, removeTemporaryFolders, temporaryFolder } from './cli.test-helper';
import { bin, killLeft, startReplicas, startRoundRobinProxy, waitFor, type Replica } from './fleet.test-helper';

// Three `agents mcp serve --http --fleet` processes behind a plain round-robin
// proxy (no affinity), a real redis-server as their plan registry, real SDK
// clients, server-everything upstream; one replica is SIGKILLed while calls
// are in flight.
jest.setTimeout(300_000);

function parentOf(pid: number): number | undefined {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after the last ')'.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

let redis: TestRedisServer | undefined;
const replicas: Replica[] = [];
afterEach(async () => {
  killLeft(replicas);
  await redis?.stop();
  removeTemporaryFolders();
});

describe('agents mcp serve --http --fleet', () => {
  it('serves 30 sessions through 3 replicas without affinity; a replica SIGKILLed mid-call costs each client at most one retry; no plan or upstream process is left', async () => {
    redis = await startRedisServer();
    const workspace = temporaryFolder();
    const starts = path.join(workspace, 'server-starts');
    const config = path.join(workspace, 'fleet.config.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          everything: {
            command: 'node',
            args: ['../counted-server.js'],
            cwd: path.join(fixtures, 'with-mcp'),
            env: { SERVER_STARTS: starts },
            scope: 'shared',
          },
        },
        // Messages to a plan wait at most pendingTtlMs for a process that lost Redis for a while
        // (10 minutes by default); here as short as the records, so that the registry empties in the test.
        registry: { url: redis.url, keyPrefix: 'fleet:', ttlMs: 2_000, heartbeatIntervalMs: 200, pendingTtlMs: 2_000 },
      }),
    );
    const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', AGENTS_FLEET_KEY: randomBytes(32).toString('hex') };
    await startReplicas(['r0', 'r1', 'r2'], { config, cwd: workspace, env }, replicas);
    for (const replica of replicas) expect(replica.output()).toMatch(/fleet replica r\d/);
    const proxy = await startRoundRobinProxy(replicas.map((replica) => (replica.url as URL).origin));
    const endpoint = new URL('/mcp', proxy.url);
    const clients: { client: Client; transport: StreamableHTTPClientTransport }[] = [];
    let retried = 0;
    let failedTwice = 0;
    const call = async (client: Client, message: string): Promise<string> => {
      const once = async () =>
        ((await client.callTool({ name: 'mcp.everything.echo', arguments: { message } }, undefined, { timeout: 60_000 })).content as { text: string }[])[0]
          ?.text ?? '';
      try {
        return await once();
      } catch {
        // The documented retry of a 2025-era client: a request in flight on a replica that died fails once.
        retried++;
        try {
          return await once();
        } catch (error) {
          failedTwice++;
          throw error;
        }
      }
    };
    try {
      for (let index = 0; index < 30; index++) {
        const transport = new StreamableHTTPClientTransport(endpoint);
        const client = new Client({ name: `fleet-${index}`, version: '1.0.0' });
        await client.connect(transport);
        clients.push({ client, transport });
      }
      for (const [index, { client }] of clients.entries()) expect(await call(client, `first ${index}`)).toBe(`Echo: first ${index}`);
      // Every replica serves, and each started one shared upstream server.
      expect(proxy.counts.every((count) => count > 0)).toBe(true);
      const victim = replicas[1] as Replica;
      await waitFor(() => fs.existsSync(starts) && fs.readFileSync(starts, 'utf8').trim().split('\n').length >= 3, 'each replica to start its upstream server');
      const upstream = fs
        .readFileSync(starts, 'utf8')
        .trim()
        .split('\n')
        .map(Number)
        .filter((pid) => parentOf(pid) === victim.child.pid);
      expect(upstream.length).toBeGreaterThanOrEqual(1);

      // Calls in flight on every replica; one replica is killed among them.
      const inFlight = clients.map(({ client }, index) => call(client, `second ${index}`));
      await new Promise((resolve) => setTimeout(resolve, 20));
      victim.child.kill('SIGKILL');
      const answers = await Promise.all(inFlight);
      answers.forEach((answer, index) => expect(answer).toBe(`Echo: second ${index}`));
      // After the death: every next request succeeds at once.
      const retriedBefore = retried;
      for (const [index, { client }] of clients.entries()) expect(await call(client, `third ${index}`)).toBe(`Echo: third ${index}`);
      expect(retried).toBe(retriedBefore);
      expect(failedTwice).toBe(0);
      expect(retried).toBeLessThanOrEqual(clients.length);
      // The dead replica's upstream server does not outlive it.
      await waitFor(() => upstream.every((pid) => !isProcessAlive(pid)), "the killed replica's upstream server to exit");

      for (const { transport, client } of clients) {
        await transport.terminateSession();
        await client.close();
      }
      clients.length = 0;
      for (const replica of [replicas[0], replicas[2]] as Replica[]) replica.child.kill('SIGTERM');
      expect(await (replicas[0] as Replica).exit).toBe(0);
      expect(await (replicas[2] as Replica).exit).toBe(0);
      // No plan is left: the live replicas ended theirs, the dead one's expire with their last heartbeat
      // (with the messages the DELETEs sent them); the index drops expired plans when it is next read.
      let left: string[] = [];
      await waitFor(
        async () => (left = (await (redis as TestRedisServer).keys()).filter((key) => key.startsWith('fleet:') && key !== 'fleet:index')).length === 0,
        () => `the registry to be empty (left: ${left.join(', ')})`,
        30_000,
      );
      expect(JSON.parse(spawnSync(process.execPath, [bin, '-c', config, 'plan', 'list', '--json'], { cwd: workspace, env, encoding: 'utf8' }).stdout)).toEqual(
        [],
      );
      // No upstream server of any replica is left.
      const all = fs.readFileSync(starts, 'utf8').trim().split('\n').map(Number);
      await waitFor(() => all.every((pid) => !isProcessAlive(pid)), 'every upstream server to exit');
    } finally {
      for (const { client } of clients) await client.close().catch(() => undefined);
      await proxy.close();
    }
  });

  it("passes a session's resource update from the replica that subscribed upstream to the replica that holds the client's event stream, through Redis", async () => {
    redis = await startRedisServer();
    const workspace = temporaryFolder();
    const config = path.join(workspace, 'fleet.config.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { everything: { command: 'node', args: ['../counted-server.js'], cwd: path.join(fixtures, 'with-mcp'), scope: 'shared' } },
        registry: { url: redis.url, keyPrefix: 'relay:', ttlMs: 2_000, heartbeatIntervalMs: 200, pendingTtlMs: 2_000 },
      }),
    );
    const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', AGENTS_FLEET_KEY: randomBytes(32).toString('hex') };
    await startReplicas(['r0', 'r1'], { config, cwd: workspace, env }, replicas);
    const [holder, worker] = replicas as [Replica, Replica];
    // The client's event stream (GET) goes to r0, every POST to r1: r1 subscribes upstream and hears the updates.
    const answeredBy: string[] = [];
    const routed = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const target = new URL(input instanceof Request ? input.url : String(input));
      const method = (init?.method ?? 'GET').toUpperCase();
      target.host = ((method === 'GET' ? holder.url : worker.url) as URL).host;
      const response = await fetch(target, init);
      answeredBy.push(`${method} ${response.headers.get('x-agents-replica')}`);
      return response;
    };
    const transport = new StreamableHTTPClientTransport(worker.url as URL, { fetch: routed });
    const client = new Client({ name: 'relay', version: '1.0.0' });
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updates.push(notification.params.uri);
    });
    const resource = 'demo://resource/dynamic/text/1';
    try {
      await client.connect(transport);
      await waitFor(() => answeredBy.includes('GET r0'), "the client's event stream on r0");
      await client.subscribeResource({ uri: resource });
      // server-everything sends updates of subscribed resources every 5 s once told to.
      await client.callTool({ name: 'mcp.everything.toggle-subscriber-updates', arguments: {} });
      await waitFor(
        () => updates.length > 0,
        () => 'a resource update on r0 stream ' + replicas.map((r) => r.output()).join('\n----\n'),
        20_000,
      );
      expect(updates.every((uri) => uri === resource)).toBe(true);
      expect(answeredBy.filter((entry) => entry.startsWith('POST')).every((entry) => entry === 'POST r1')).toBe(true);
      await client.callTool({ name: 'mcp.everything.toggle-subscriber-updates', arguments: {} });
      await transport.terminateSession();
    } finally {
      await client.close().catch(() => undefined);
    }
    for (const replica of replicas) replica.child.kill('SIGTERM');
    for (const replica of replicas) expect(await replica.exit).toBe(0);
  });

  it('an approval a person gives for the rest of the plan on one replica holds in the session’s plan on another; a forged one on the channel is ignored', async () => {
    redis = await startRedisServer();
    const workspace = temporaryFolder();
    const config = path.join(workspace, 'fleet.config.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { everything: { command: 'node', args: ['../counted-server.js'], cwd: path.join(fixtures, 'with-mcp'), scope: 'shared' } },
        registry: { url: redis.url, keyPrefix: 'approve:', ttlMs: 2_000, heartbeatIntervalMs: 200, pendingTtlMs: 2_000 },
        serve: { profiles: { careful: { policy: { approval: { tools: ['mcp.everything.echo'] } }, tools: ['mcp.everything.*'] } } },
      }),
    );
    const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', AGENTS_FLEET_KEY: randomBytes(32).toString('hex') };
    await startReplicas(['r0', 'r1'], { config, cwd: workspace, env, before: ['--verbose'], after: ['--profile', 'careful'] }, replicas);
    const [r0, r1] = replicas as [Replica, Replica];
    // Every request to one replica at a time, as the test chooses.
    let target = r1;
    const routed = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      url.host = (target.url as URL).host;
      return fetch(url, init);
    };
    const transport = new StreamableHTTPClientTransport(r1.url as URL, { fetch: routed });
    const client = new Client({ name: 'careful', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const questions: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      questions.push((request.params as { message: string }).message);
      return { action: 'accept', content: { answer: 'tool' } };
    });
    const echo = async (message: string): Promise<string> =>
      ((await client.callTool({ name: 'mcp.everything.echo', arguments: { message } })).content as { text: string }[])[0]?.text ?? '';
    try {
      // A forged approval on the fleet's channel (no signature with the fleet key) is ignored by every replica.
      const channel = `approve:broadcast:mcp-fleet-${createHash('sha256').update(Buffer.from(env.AGENTS_FLEET_KEY, 'hex')).digest('hex').slice(0, 16)}`;
      await client.connect(transport);
      expect(await echo('on r1')).toBe('Echo: on r1');
      expect(questions).toHaveLength(1);
      await waitFor(
        () => /an approval of 'mcp\.everything\.echo' for the rest of session \S+ \(tool\), given on another replica, holds here too/.test(r0.output()),
        'r0 to hear of the approval',
      );
      target = r0;
      expect(await echo('on r0')).toBe('Echo: on r0');
      expect(questions).toHaveLength(1);
      expect(r0.output()).toMatch(/serving session \S+, opened on another replica/);
      // The session's own id, as r0 names it: a forged approval for this very session.
      const sid = (/for the rest of session (\S+) \(tool\)/.exec(r0.output()) as RegExpExecArray)[1];
      const forged = {
        v: 1,
        kind: 'approval',
        from: 'x',
        sid,
        approval: { toolName: 'mcp.everything.get-sum', fingerprint: 'f', scope: 'tool', decidedBy: 'mallory' },
        mac: 'AAAA',
      };
      const published = spawnSync('redis-cli', ['-p', String((redis as TestRedisServer).port), 'PUBLISH', channel, JSON.stringify(forged)], {
        encoding: 'utf8',
      });
      expect(published.stdout.trim()).toBe('2');
      await waitFor(() => /ignored an approval on the fleet channel whose signature does not hold/.test(r0.output()), 'r0 to ignore the forged approval');
      await transport.terminateSession();
    } finally {
      await client.close().catch(() => undefined);
    }
    for (const replica of replicas) replica.child.kill('SIGTERM');
    for (const replica of replicas) expect(await replica.exit).toBe(0);
  });
});
