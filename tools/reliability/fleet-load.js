'use strict';
// Fleet load: N replicas of `agents mcp serve --http` (the built CLI) fronting server-everything,
// behind a round-robin HTTP proxy without affinity (each request goes to the next live replica),
// and K concurrent MCP client sessions — a mix of 2025-era SDK clients (@modelcontextprotocol/sdk)
// and, when the v2 client package (@modelcontextprotocol/client) can be loaded, v2 clients, which
// try MCP 2026-07-28 first — each making M calls of server-everything's `echo`. Prints a JSON
// report: sessions connected and failed, calls ok and failed (errors grouped by message), p50/p99
// per call, memory per idle session (the replicas' process groups, RSS before and after the
// sessions connected), CPU per call (the replicas' process groups), and with --kill the replica
// SIGKILLed halfway through the calls and the errors seen after it.
//
//   npx nx run @ca/cli:build
//   node tools/reliability/fleet-load.js [--replicas 3] [--sessions 200] [--calls 20] [--kill] [--no-fleet]
//     [--v2 0.5] [--pool-size 1] [--scope shared|plan] [--connect-concurrency 50] [--timeout-ms 60000]
//     [--cpu-prof DIR]   (replicas write a V8 CPU profile there when they stop)
//
//   Replicas run as a fleet (--fleet, one shared session key, a real redis-server started here as
//   their plan registry) unless --no-fleet, which shows what the proxy does to plain gateways.
// Every replica runs in its own process group (with the upstream servers it starts); all of them,
// the proxy and the clients are stopped at the end, also on an error or Ctrl-C.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { startRedisServer } = require('@ca/plan-registry-redis/testing');

const root = path.resolve(__dirname, '..', '..');
const CLI = path.join(root, 'packages', 'cli', 'dist', 'bin.js');
const EVERYTHING = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
const TICKS_PER_SECOND = 100; // USER_HZ on Linux
const PAGE_BYTES = 4096;

function parseArgs(argv) {
  const options = {
    replicas: 3,
    sessions: 200,
    calls: 20,
    kill: false,
    fleet: true,
    v2: 0.5,
    poolSize: undefined,
    scope: undefined,
    connectConcurrency: 50,
    timeoutMs: 60_000,
    cpuProf: undefined,
  };
  const names = {
    '--replicas': 'replicas',
    '--sessions': 'sessions',
    '--calls': 'calls',
    '--v2': 'v2',
    '--pool-size': 'poolSize',
    '--scope': 'scope',
    '--connect-concurrency': 'connectConcurrency',
    '--timeout-ms': 'timeoutMs',
    '--cpu-prof': 'cpuProf',
  };
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
    if (arg === '--kill') {
      options.kill = true;
      continue;
    }
    if (arg === '--no-fleet') {
      // Replicas as separate gateways (no --fleet, no shared registry): what a
      // round-robin proxy does to sessions without the fleet mode.
      options.fleet = false;
      continue;
    }
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(
        fs
          .readFileSync(__filename, 'utf8')
          .split('\n')
          .filter((line) => line.startsWith('//'))
          .map((line) => line.slice(3))
          .join('\n') + '\n',
      );
      process.exit(0);
    }
    const [flag, inline] = arg.split('=', 2);
    const key = names[flag];
    if (key === undefined) throw new Error(`fleet-load: unknown option ${arg} (try --help)`);
    const value = inline ?? argv[++index];
    if (value === undefined) throw new Error(`fleet-load: ${flag} needs a value`);
    options[key] = key === 'scope' || key === 'cpuProf' ? value : Number(value);
  }
  for (const key of ['replicas', 'sessions', 'calls', 'connectConcurrency', 'timeoutMs']) {
    if (!Number.isInteger(options[key]) || options[key] < 1) throw new Error(`fleet-load: --${key} must be a positive whole number`);
  }
  if (!(options.v2 >= 0 && options.v2 <= 1)) throw new Error('fleet-load: --v2 is the share of v2 clients, from 0 to 1');
  if (options.scope !== undefined && options.scope !== 'shared' && options.scope !== 'plan') throw new Error('fleet-load: --scope is shared or plan');
  if (options.poolSize !== undefined && !(Number.isInteger(options.poolSize) && options.poolSize >= 1))
    throw new Error('fleet-load: --pool-size must be a positive whole number');
  return options;
}

const percentile = (sorted, p) => (sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);
const round = (value, digits = 2) => (value === null || value === undefined || Number.isNaN(value) ? null : Number(value.toFixed(digits)));

/**
 * A replica and every process under it (the upstream servers it starts run
 * in process groups of their own), from /proc.
 */
function treeOf(rootPid) {
  const stats = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat !== undefined) stats.push(stat);
  }
  const children = new Map();
  for (const stat of stats) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat]);
  const tree = [];
  const queue = stats.filter((stat) => stat.pid === rootPid);
  while (queue.length > 0) {
    const next = queue.shift();
    tree.push(next);
    queue.push(...(children.get(next.pid) ?? []));
  }
  return tree;
}

/** Signals a replica's process group and the group of every process under it (a host dying, or the end of the run). */
function signalTree(replica, signal) {
  const groups = new Set([replica.child.pid, ...replica.known]);
  for (const member of treeOf(replica.child.pid)) groups.add(member.pgid);
  for (const group of groups) {
    try {
      process.kill(-group, signal);
    } catch {
      // gone already
    }
  }
}

function readStat(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command may hold spaces and parentheses: fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return {
      pid,
      ppid: Number(fields[1]),
      pgid: Number(fields[2]),
      ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]), // utime stime cutime cstime
      rssBytes: Number(fields[21]) * PAGE_BYTES,
    };
  } catch {
    return undefined;
  }
}

function sample(replicas) {
  let rssBytes = 0;
  let ticks = 0;
  let processes = 0;
  for (const replica of replicas) {
    if (!replica.alive) continue;
    for (const member of treeOf(replica.child.pid)) {
      replica.known.add(member.pgid);
      rssBytes += member.rssBytes;
      ticks += member.ticks;
      processes++;
    }
  }
  return { rssBytes, ticks, processes };
}

function startReplica(index, configPath, stateDir, cpuProf, fleetKey) {
  const profile = cpuProf === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', path.resolve(cpuProf)];
  const fleet = fleetKey === undefined ? [] : ['--fleet', '--replica-id', `r${index}`];
  const child = spawn(process.execPath, [...profile, CLI, '-c', configPath, 'mcp', 'serve', '--http', '127.0.0.1:0', ...fleet], {
    detached: true, // its own process group: the upstream servers it starts are in it too
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, AGENTS_STATE_DIR: stateDir, ...(fleetKey === undefined ? {} : { AGENTS_FLEET_KEY: fleetKey }) },
  });
  // known: the process groups seen under it, so that they can be ended after it is gone.
  const replica = { index, child, url: undefined, alive: true, stderr: '', known: new Set() };
  child.stderr.on('data', (chunk) => {
    replica.stderr = (replica.stderr + chunk).slice(-4_000);
  });
  child.once('exit', () => {
    replica.alive = false;
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`replica ${index} did not print its URL within 60 s; stderr: ${replica.stderr}`)), 60_000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /Serving MCP at (http:\/\/\S+)/.exec(out);
      if (match && replica.url === undefined) {
        clearTimeout(timer);
        replica.url = new URL(match[1]);
        resolve(replica);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`replica ${index} exited (${signal ?? code}) before serving; stderr: ${replica.stderr}`));
    });
  });
}

/** A reverse proxy that sends each request to the next live replica: no affinity at all. */
function startProxy(replicas) {
  let next = 0;
  const agents = new Map(replicas.map((replica) => [replica, new http.Agent({ keepAlive: true, maxSockets: 256 })]));
  const stats = { requests: 0, refused: 0 };
  const server = http.createServer((request, response) => {
    const live = replicas.filter((replica) => replica.alive);
    if (live.length === 0) {
      stats.refused++;
      response.writeHead(502).end('no replica');
      return;
    }
    const target = live[next++ % live.length];
    stats.requests++;
    const upstream = http.request(
      {
        host: target.url.hostname,
        port: target.url.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: target.url.host },
        agent: agents.get(target),
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', (error) => {
      stats.refused++;
      if (!response.headersSent) response.writeHead(502).end(`replica ${target.index}: ${error.message}`);
      else response.destroy(error);
    });
    response.on('close', () => upstream.destroy());
    request.pipe(upstream);
  });
  // Idle client connections stay open as behind a load balancer (60 s and more).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return new Promise((resolve) =>
    // A backlog for a thousand clients connecting at once (Node's default of 511 drops
    // SYNs: retries seconds later, and resets of connections the client thought open).
    server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () =>
      resolve({
        url: new URL(`http://127.0.0.1:${server.address().port}/mcp`),
        stats,
        close: () =>
          new Promise((done) => {
            for (const agent of agents.values()) agent.destroy();
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      }),
    ),
  );
}

function loadClients() {
  const v1 = {
    era: '2025 (sdk 1.x)',
    Client: require('@modelcontextprotocol/sdk/client/index.js').Client,
    Transport: require('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport,
  };
  let v2;
  try {
    const module = require('@modelcontextprotocol/client');
    // Client 2.4 initializes with 2025-11-25 unless asked to try 2026-07-28 first ('auto').
    v2 = {
      era: '2026-07-28 first (client 2.x)',
      Client: module.Client,
      Transport: module.StreamableHTTPClientTransport,
      clientOptions: { versionNegotiation: { mode: 'auto' } },
    };
  } catch {
    v2 = undefined;
  }
  return { v1, v2 };
}

async function inBatches(items, size, work) {
  const results = new Array(items.length);
  let index = 0;
  const workers = Array.from({ length: Math.min(size, items.length) }, async () => {
    while (index < items.length) {
      const mine = index++;
      results[mine] = await work(items[mine], mine);
    }
  });
  await Promise.all(workers);
  return results;
}

function messageOf(error) {
  let text = error instanceof Error ? error.message : String(error);
  // fetch's "fetch failed" says why only in its cause (a connect timeout, a reset, …).
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error) text += ` (${cause.code ?? cause.name}: ${cause.message})`;
  // Group alike errors: strip ids and numbers that differ per session.
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f-]{27,}/gi, '<id>')
    .replace(/\d{3,}/g, '<n>')
    .slice(0, 200);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(CLI)) throw new Error(`fleet-load: ${CLI} is missing; build the CLI first (npx nx run @ca/cli:build)`);
  const { v1, v2 } = loadClients();
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-fleet-load-'));
  const entry = { command: process.execPath, args: [EVERYTHING, 'stdio'] };
  if (options.scope !== undefined) entry.scope = options.scope;
  if (options.poolSize !== undefined) entry.poolSize = options.poolSize;
  const configPath = path.join(folder, 'agents.config.json');
  // A fleet: every replica shares the session key and a real redis-server as
  // its plan registry (started here, stopped at the end).
  const redis = options.fleet ? await startRedisServer() : undefined;
  const fleetKey = options.fleet ? require('node:crypto').randomBytes(32).toString('hex') : undefined;
  fs.writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: { everything: entry },
      serve: {
        maxCallsPerSession: 1_000_000,
        http: { maxSessions: options.sessions + 16, maxSessionsPerClient: options.sessions + 16, sessionIdleTimeoutMs: 600_000 },
      },
      ...(redis === undefined ? {} : { registry: { url: redis.url, keyPrefix: 'fleet-load:' } }),
    }),
  );
  const replicas = [];
  let proxy;
  const sessions = [];
  const stop = async () => {
    await Promise.all(sessions.map((session) => session.client.close().catch(() => undefined)));
    await proxy?.close();
    for (const replica of replicas) signalTree(replica, 'SIGTERM');
    const deadline = Date.now() + 10_000;
    while (replicas.some((replica) => treeOf(replica.child.pid).length > 0) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    for (const replica of replicas) signalTree(replica, 'SIGKILL');
    await redis?.stop();
    fs.rmSync(folder, { recursive: true, force: true });
  };
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write('fleet-load: interrupted, stopping every process\n');
    void stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    for (let index = 0; index < options.replicas; index++) {
      const stateDir = path.join(folder, `state-${index}`);
      replicas.push(await startReplica(index, configPath, stateDir, options.cpuProf, fleetKey));
    }
    proxy = await startProxy(replicas);
    // Warm up: one session through each replica's address directly, so that discovery and the first upstream start are done.
    for (const replica of replicas) {
      const client = new v1.Client({ name: 'fleet-load-warmup', version: '0.0.0' });
      await client.connect(new v1.Transport(replica.url));
      await client.callTool({ name: 'mcp.everything.echo', arguments: { message: 'warm-up' } });
      await client.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = sample(replicas);

    // Connect K sessions through the proxy.
    const v2Count = v2 === undefined ? 0 : Math.round(options.sessions * options.v2);
    // The v2 share spread evenly over the sessions.
    const kinds = Array.from({ length: options.sessions }, (_unused, index) =>
      Math.floor(((index + 1) * v2Count) / options.sessions) > Math.floor((index * v2Count) / options.sessions) ? v2 : v1,
    );
    const connectErrors = new Map();
    const connectStarted = Date.now();
    const connected = await inBatches(kinds, options.connectConcurrency, async (kind, index) => {
      const client = new kind.Client({ name: `fleet-load-${index}`, version: '0.0.0' }, kind.clientOptions);
      const transport = new kind.Transport(proxy.url);
      try {
        await client.connect(transport, { timeout: options.timeoutMs });
        const session = { index, kind, client, transport, protocolVersion: client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? undefined };
        sessions.push(session);
        return session;
      } catch (error) {
        const key = `${kind.era}: ${messageOf(error)}`;
        connectErrors.set(key, (connectErrors.get(key) ?? 0) + 1);
        await client.close().catch(() => undefined);
        return undefined;
      }
    });
    const connectMs = Date.now() - connectStarted;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const idle = sample(replicas);
    const live = connected.filter((session) => session !== undefined);

    // M calls per session, every session at once.
    const total = live.length * options.calls;
    const latencies = [];
    const callErrors = new Map();
    const afterKillErrors = new Map();
    let done = 0;
    let killed;
    const killAt = Math.floor(total / 2);
    const callsStarted = Date.now();
    const cpuBefore = sample(replicas);
    const harnessBefore = process.cpuUsage();
    const victimBefore = new Map(replicas.map((replica) => [replica, sample([replica]).ticks]));
    await Promise.all(
      live.map(async (session) => {
        for (let call = 0; call < options.calls; call++) {
          const started = process.hrtime.bigint();
          try {
            const result = await session.client.callTool({ name: 'mcp.everything.echo', arguments: { message: `s${session.index} c${call}` } }, undefined, {
              timeout: options.timeoutMs,
            });
            const text = result.content?.[0]?.text;
            if (result.isError || text !== `Echo: s${session.index} c${call}`) throw new Error(`unexpected result: ${JSON.stringify(result).slice(0, 200)}`);
            latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
          } catch (error) {
            const key = `${session.kind.era}: ${messageOf(error)}`;
            callErrors.set(key, (callErrors.get(key) ?? 0) + 1);
            if (killed !== undefined) afterKillErrors.set(key, (afterKillErrors.get(key) ?? 0) + 1);
          }
          done++;
          if (options.kill && killed === undefined && done >= killAt) {
            const victim = replicas.find((replica) => replica.alive);
            if (victim !== undefined) {
              // The replica and the upstream servers it started, as when its host dies.
              killed = { replica: victim.index, atCall: done, cpuTicks: sample([victim]).ticks - (victimBefore.get(victim) ?? 0) };
              signalTree(victim, 'SIGKILL');
              victim.alive = false;
            }
          }
        }
      }),
    );
    const callsMs = Date.now() - callsStarted;
    const cpuAfter = sample(replicas);
    const harness = process.cpuUsage(harnessBefore);
    const sorted = latencies.sort((a, b) => a - b);
    const failedCalls = [...callErrors.values()].reduce((sum, count) => sum + count, 0);
    // CPU of the replicas alive at the end, plus what the killed one used until it was killed.
    const killedBefore = killed === undefined ? 0 : (victimBefore.get(replicas[killed.replica]) ?? 0);
    const cpuTicks = cpuAfter.ticks - (cpuBefore.ticks - killedBefore) + (killed === undefined ? 0 : killed.cpuTicks);
    const versions = {};
    for (const session of live) {
      const key = `${session.kind.era} → ${session.protocolVersion ?? 'unknown'}`;
      versions[key] = (versions[key] ?? 0) + 1;
    }
    const report = {
      options: { ...options, v2Available: v2 !== undefined },
      replicas: options.replicas,
      sessions: {
        requested: options.sessions,
        connected: live.length,
        failed: options.sessions - live.length,
        errors: Object.fromEntries(connectErrors),
        connectMs,
        negotiated: versions,
      },
      calls: {
        requested: options.sessions * options.calls,
        made: total,
        ok: latencies.length,
        failed: failedCalls,
        errors: Object.fromEntries(callErrors),
        wallMs: callsMs,
        perSecond: round(latencies.length / (callsMs / 1000), 0),
        p50Ms: round(percentile(sorted, 50)),
        p99Ms: round(percentile(sorted, 99)),
        maxMs: round(sorted[sorted.length - 1] ?? null),
      },
      memory: {
        replicaGroupsBeforeMB: round(before.rssBytes / 1e6, 1),
        processesBefore: before.processes,
        replicaGroupsIdleMB: round(idle.rssBytes / 1e6, 1),
        processesIdle: idle.processes,
        perIdleSessionMB: live.length === 0 ? null : round((idle.rssBytes - before.rssBytes) / live.length / 1e6, 3),
      },
      cpu: {
        cpuSeconds: round(cpuTicks / TICKS_PER_SECOND, 2),
        perCallMs: latencies.length === 0 ? null : round(((cpuTicks / TICKS_PER_SECOND) * 1000) / latencies.length, 3),
        note: 'user+system time of the replicas and their upstream servers during the calls (the proxy and the clients not included)',
        harnessCpuSeconds: round((harness.user + harness.system) / 1e6, 2),
        harnessNote: 'this process (the proxy and every client) in the same time: when it nears the wall time, the clients, not the replicas, bound the rate',
      },
      proxy: proxy.stats,
      ...(options.kill
        ? { kill: killed === undefined ? { replica: null } : { ...killed, cpuTicks: undefined, errorsAfter: Object.fromEntries(afterKillErrors) } }
        : {}),
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await stop();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
