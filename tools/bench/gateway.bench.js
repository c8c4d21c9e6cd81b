'use strict';
// @ca/mcp-server through `agents mcp serve` (the built CLI, over stdio): the
// cost of one call of server-everything's `echo` made by an MCP client
// through the gateway (client → gateway → server-everything, two stdio hops,
// the call through runtime.execute in the session's plan) against the same
// call through a bare SDK proxy (fixtures/sdk-proxy.js: an SDK server whose
// handler forwards to an SDK client of server-everything, also two stdio
// hops) and made to server-everything directly, in the same paired rounds;
// a built-in tool (builtin.fs.read of a small file) served by the gateway
// against an `echo` served by a bare SDK server; and the memory an idle
// client session costs the gateway over HTTP (its process and the upstream
// servers under it), with server-everything shared by the sessions (the
// default of `agents mcp serve`) and with one per session (scope plan).
// Every process of the call rows is started once, before the rounds.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { comparePaired, runWhenMain, scaled } = require('./harness');

const root = path.resolve(__dirname, '..', '..');
const cli = path.join(root, 'packages', 'cli', 'dist', 'bin.js');
const everything = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
const bareEcho = path.join(__dirname, 'fixtures', 'echo-server.js');
const sdkProxy = path.join(__dirname, 'fixtures', 'sdk-proxy.js');
const IDLE_SESSIONS = scaled(100, 3);
const IDLE_SESSIONS_PLAN_SCOPE = scaled(10, 2);

async function connect(args, env = {}) {
  const client = new Client({ name: 'bench', version: '0.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stderr: 'ignore',
    }),
  );
  return client;
}

async function expectText(promise, expected) {
  const result = await promise;
  const text = result.content?.[0]?.text;
  if (result.isError || text !== expected) throw new Error(`unexpected result ${JSON.stringify(result).slice(0, 500)}`);
}

/** RSS of a process and every process under it (the upstream servers of a gateway), from /proc. */
function treeRss(rootPid) {
  const stats = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      stats.push({ pid: Number(entry), ppid: Number(fields[1]), rss: Number(fields[21]) * 4096 });
    } catch {
      // ended meanwhile
    }
  }
  let total = 0;
  let processes = 0;
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.shift();
    for (const stat of stats) {
      if (stat.pid === pid) {
        total += stat.rss;
        processes++;
      }
      if (stat.ppid === pid) queue.push(stat.pid);
    }
  }
  return { bytes: total, processes };
}

/**
 * Starts `agents mcp serve --http` on a free port with `config`, opens
 * `count` client sessions that each call echo once (so that the upstream is
 * in use) and then stay idle, and returns the RSS of the gateway's process
 * tree before and after, per session.
 */
async function idleSessions(folder, name, entry, count) {
  const config = path.join(folder, `${name}.config.json`);
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { everything: entry }, serve: { http: { maxSessions: count + 8 } } }));
  const child = spawn(process.execPath, [cli, '-c', config, 'mcp', 'serve', '--http', '127.0.0.1:0'], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', AGENTS_STATE_DIR: path.join(folder, `state-${name}`) },
  });
  const clients = [];
  try {
    const url = await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
        const match = /Serving MCP at (http:\/\/\S+)/.exec(out);
        if (match) resolve(new URL(match[1]));
      });
      child.once('exit', (code) => reject(new Error(`agents mcp serve --http exited (${code}) before serving`)));
    });
    const open = async () => {
      const client = new Client({ name: 'bench-idle', version: '0.0.0' });
      await client.connect(new StreamableHTTPClientTransport(url));
      clients.push(client);
      await expectText(client.callTool({ name: 'mcp.everything.echo', arguments: { message: 'idle' } }), 'Echo: idle');
    };
    // One session first: the gateway and the pool (or the first upstream) as every later session finds them.
    await open();
    await new Promise((resolve) => setTimeout(resolve, 300));
    global.gc?.();
    const before = treeRss(child.pid);
    for (let index = 1; index < count; index++) await open();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = treeRss(child.pid);
    return { before, after, perSession: (after.bytes - before.bytes) / (count - 1) };
  } finally {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    child.kill('SIGTERM');
    await new Promise((resolve) => {
      if (child.exitCode !== null) resolve();
      else child.once('exit', resolve);
    });
  }
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(2)} MB`;

async function run() {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-bench-gateway-'));
  fs.writeFileSync(path.join(folder, 'note.txt'), 'a small file');
  fs.writeFileSync(
    path.join(folder, 'agents.config.json'),
    JSON.stringify({
      resources: [{ id: 'work', path: folder, access: 'read' }],
      builtin: { tools: ['builtin.fs.read'] },
      mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } },
    }),
  );
  const clients = [];
  try {
    const direct = await connect([everything, 'stdio']);
    clients.push(direct);
    const gateway = await connect([cli, '-c', path.join(folder, 'agents.config.json'), 'mcp', 'serve'], { AGENTS_STATE_DIR: path.join(folder, 'state') });
    clients.push(gateway);
    const proxy = await connect([sdkProxy, process.execPath, everything, 'stdio']);
    clients.push(proxy);
    const bare = await connect([bareEcho]);
    clients.push(bare);
    const input = { message: 'bench' };
    await expectText(direct.callTool({ name: 'echo', arguments: input }), 'Echo: bench');
    await expectText(gateway.callTool({ name: 'mcp.everything.echo', arguments: input }), 'Echo: bench');
    await expectText(proxy.callTool({ name: 'echo', arguments: input }), 'Echo: bench');
    await expectText(bare.callTool({ name: 'echo', arguments: input }), 'Echo: bench');
    const read = { resource: 'work', path: 'note.txt' };
    const check = await gateway.callTool({ name: 'builtin.fs.read', arguments: read });
    if (check.isError || check.structuredContent?.content !== 'a small file') throw new Error(`unexpected result ${JSON.stringify(check).slice(0, 500)}`);

    const options = { rounds: 200, iterations: 20, warmup: 500 };
    const hop = await comparePaired(
      {
        'server-everything directly': { fn: () => direct.callTool({ name: 'echo', arguments: input }) },
        'through a bare SDK proxy': { fn: () => proxy.callTool({ name: 'echo', arguments: input }) },
        'through the gateway': { fn: () => gateway.callTool({ name: 'mcp.everything.echo', arguments: input }) },
      },
      { ...options, baseline: 'through a bare SDK proxy' },
    );
    const builtin = await comparePaired(
      {
        'bare SDK echo': { fn: () => bare.callTool({ name: 'echo', arguments: input }) },
        'builtin.fs.read served': { fn: () => gateway.callTool({ name: 'builtin.fs.read', arguments: read }) },
      },
      { ...options, baseline: 'bare SDK echo' },
    );
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    const entry = { command: process.execPath, args: [everything, 'stdio'] };
    const shared = await idleSessions(folder, 'shared', entry, IDLE_SESSIONS);
    const perPlan = await idleSessions(folder, 'plan', { ...entry, scope: 'plan' }, IDLE_SESSIONS_PLAN_SCOPE);
    const gatewayVsProxy = hop.ratios['through the gateway'];
    return [
      {
        name: 'MCP call through agents mcp serve (stdio client → gateway → stdio server-everything) vs a bare SDK proxy of the same server',
        baseline: 'the same echo call through fixtures/sdk-proxy.js (SDK server → SDK client → server-everything, stdio)',
        baselineNs: hop.medians['through a bare SDK proxy'],
        subjectNs: hop.medians['through the gateway'],
        ratio: gatewayVsProxy,
        target: 'aim ≤ 1.25×',
        pass: gatewayVsProxy <= 1.25,
        note: 'two stdio hops each; the gateway runs each call through runtime.execute in the session plan (policy, schema, hooks, trace)',
      },
      {
        name: 'MCP call through agents mcp serve vs server-everything directly',
        baseline: 'the same echo call, client → server-everything over stdio',
        baselineNs: hop.medians['server-everything directly'],
        subjectNs: hop.medians['through the gateway'],
        ratio: hop.ratioTo('through the gateway', 'server-everything directly'),
        target: 'report',
        note: 'same rounds as the row above',
      },
      {
        name: 'MCP call through a bare SDK proxy vs server-everything directly',
        baseline: 'the same echo call, client → server-everything over stdio',
        baselineNs: hop.medians['server-everything directly'],
        subjectNs: hop.medians['through a bare SDK proxy'],
        ratio: hop.ratioTo('through a bare SDK proxy', 'server-everything directly'),
        target: 'report',
        note: 'what a second process on the path costs by itself (same rounds)',
      },
      {
        name: 'A built-in tool served over stdio by agents mcp serve (builtin.fs.read, 12 bytes) vs an echo of a bare SDK server',
        baseline: 'echo on the SDK low-level Server over stdio, no validation',
        baselineNs: builtin.medians['bare SDK echo'],
        subjectNs: builtin.medians['builtin.fs.read served'],
        ratio: builtin.ratios['builtin.fs.read served'],
        target: 'report',
      },
      {
        name: `Memory per idle client session of agents mcp serve --http (${IDLE_SESSIONS} sessions, one echo each, upstream shared: the default)`,
        baseline: `the gateway and its pool after the first session (RSS of ${shared.before.processes} processes)`,
        baselineValue: mb(shared.before.bytes),
        subjectValue: `${mb(shared.perSession)} per session (${mb(shared.after.bytes)} in ${shared.after.processes} processes)`,
        target: '≤ 1 MB per session beyond the pool',
        pass: shared.perSession <= 1e6,
      },
      {
        name: `Memory per idle client session of agents mcp serve --http (${IDLE_SESSIONS_PLAN_SCOPE} sessions, "scope": "plan": an upstream per session)`,
        baseline: `the gateway and the first session's upstream (RSS of ${perPlan.before.processes} processes)`,
        baselineValue: mb(perPlan.before.bytes),
        subjectValue: `${mb(perPlan.perSession)} per session (${mb(perPlan.after.bytes)} in ${perPlan.after.processes} processes)`,
        target: 'report',
        note: 'the opt-in isolation for servers that keep state per client',
      },
    ];
  } finally {
    for (const client of clients) await client.close().catch(() => undefined);
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

module.exports = { run };
runWhenMain(module, run);
