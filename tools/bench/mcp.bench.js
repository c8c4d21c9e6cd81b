'use strict';
// @ca/adapters-mcp: the cost of one call of server-everything's `echo`
// through runtime.execute against the raw SDK client.callTool on the same
// server process and connection, in one run; the SDK's stdio transport
// against this package's; how many server processes 1,000 calls in one plan
// start; how many later plans of a `shared` server start; and the time to
// start a server and connect, against the SDK's connect.
const { spawn } = require('node:child_process');
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ToolRuntime, silentLogger } = require('../../packages/tool-lifecycle/dist/index.js');
const { createMcpAdapter } = require('../../packages/adapters-mcp/dist/index.js');
const { getEventListeners, setMaxListeners } = require('node:events');
const { compare, comparePaired, runWhenMain, scaled } = require('./harness');

const everything = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
const server = { command: process.execPath, args: [everything, 'stdio'] };

function countingSpawn() {
  const counter = {
    count: 0,
    spawn: (command, args, options) => {
      counter.count++;
      return spawn(command, [...args], options);
    },
  };
  return counter;
}

async function perCall() {
  // Every case on one connection to one server process: the runtime's shared
  // session, and that session's own SDK Client called directly. A second
  // source (another process) runs with resetTimeoutOnProgress: true (a
  // progress token on every call), paired with bare calls on its own client. Short interleaved rounds, compared per
  // round (see comparePaired): the server's scheduling noise is larger than
  // the differences measured.
  const input = { message: 'bench' };
  const open = async (extensions) => {
    const source = createMcpAdapter({ servers: { mcpServers: { everything: { ...server, scope: 'shared', ...extensions } } }, logger: silentLogger });
    const runtime = new ToolRuntime({ sources: [source], logger: silentLogger });
    const state = { source, runtime, ctx: runtime.createPlan() };
    const check = await runtime.execute('mcp.everything.echo', input, state.ctx);
    if (!check.ok || check.output !== 'Echo: bench') throw new Error(`unexpected result ${JSON.stringify(check)}`);
    const client = source.sessionFor('everything', state.ctx.planId).client;
    const tool = await source.get('mcp.everything.echo');
    state.client = client;
    state.bare = { fn: () => client.callTool({ name: 'echo', arguments: input }) };
    state.adapter = { fn: () => tool.execute(input, state.ctx) };
    state.execute = {
      fn: () => runtime.execute('mcp.everything.echo', input, state.ctx),
      // A fresh plan every 20 rounds: traces do not pile up without bound (the shared session makes it free).
      setup: async (round) => {
        if (round % 20 !== 0) return;
        await runtime.endPlan(state.ctx);
        state.ctx = runtime.createPlan();
        await runtime.activate('mcp.everything.echo', state.ctx);
      },
    };
    return state;
  };
  const main = await open({});
  const tokened = await open({ resetTimeoutOnProgress: true });
  // What the adapter asks of the SDK for a call nobody listens to, done as
  // cheaply as the SDK allows: one AbortController whose listeners (the SDK
  // never removes its own) are stripped after each round.
  const controller = new AbortController();
  setMaxListeners(0, controller.signal); // up to one listener per call of a round, stripped after it
  const sameOptions = {
    signal: controller.signal,
    timeout: 60_000,
    maxTotalTimeout: 600_000,
    resetTimeoutOnProgress: true,
  };
  // The SDK alone, asked for a progress token (what a call carries when its caller listens for progress).
  const progressOnly = { onprogress: () => undefined };
  const stripListeners = () => {
    for (const listener of getEventListeners(controller.signal, 'abort')) controller.signal.removeEventListener('abort', listener);
  };
  const options = { rounds: 200, iterations: 50, warmup: 2_000 };
  try {
    const bare = await comparePaired(
      {
        'client.callTool': main.bare,
        'client.callTool, progress token only': {
          fn: () => main.client.callTool({ name: 'echo', arguments: input }, undefined, progressOnly),
        },
        'runtime.execute': main.execute,
      },
      { ...options, baseline: 'client.callTool' },
    );
    const same = await comparePaired(
      {
        'client.callTool, same options': {
          fn: () => main.client.callTool({ name: 'echo', arguments: input }, undefined, sameOptions),
          teardown: stripListeners,
        },
        'McpTool.execute': main.adapter,
        'runtime.execute': main.execute,
      },
      { ...options, baseline: 'client.callTool, same options' },
    );
    const withToken = await comparePaired({ 'client.callTool': tokened.bare, 'runtime.execute': tokened.execute }, { ...options, baseline: 'client.callTool' });
    return { bare, same, withToken };
  } finally {
    for (const state of [main, tokened]) {
      await state.runtime.endPlan(state.ctx);
      await state.runtime.dispose();
    }
  }
}

async function transports() {
  // The SDK's StdioClientTransport against this package's (process group,
  // stderr tail): two server processes, so the figure carries their noise.
  const sdk = new Client({ name: 'bench', version: '0.0.0' });
  await sdk.connect(new StdioClientTransport({ ...server, stderr: 'pipe' }));
  const source = createMcpAdapter({ servers: { mcpServers: { everything: server } }, logger: silentLogger });
  const runtime = new ToolRuntime({ sources: [source], logger: silentLogger });
  const ctx = runtime.createPlan();
  const input = { message: 'bench' };
  try {
    await runtime.execute('mcp.everything.echo', input, ctx);
    const ours = source.sessionFor('everything', ctx.planId).client;
    return await compare(
      {
        sdk: { async: true, fn: () => sdk.callTool({ name: 'echo', arguments: input }) },
        ours: { async: true, fn: () => ours.callTool({ name: 'echo', arguments: input }) },
      },
      { rounds: 15, iterations: 300, warmup: 1_000 },
    );
  } finally {
    await runtime.endPlan(ctx);
    await runtime.dispose();
    await sdk.close();
  }
}

const PLAN_CALLS = scaled(1_000, 5);
const SHARED_PLANS = scaled(50, 2);
const SHARED_PLAN_CALLS = scaled(20, 2);

async function connectTime() {
  // Starting server-everything and completing the handshake: the SDK's
  // Client.connect over its StdioClientTransport against a plan's activation
  // through the runtime (the adapter's transport in its own process group, the
  // client capabilities of the client side: roots). Alternated, one of each per
  // round; each session is closed outside the timed part.
  const source = createMcpAdapter({ servers: { mcpServers: { everything: server } }, logger: silentLogger, shutdown: 'prompt' });
  const runtime = new ToolRuntime({ sources: [source], logger: silentLogger });
  await runtime.listTools();
  const sdk = [];
  const ours = [];
  try {
    for (let round = 0; round < scaled(12, 3); round++) {
      const client = new Client({ name: 'bench', version: '0.0.0' });
      let started = process.hrtime.bigint();
      await client.connect(new StdioClientTransport({ ...server, stderr: 'pipe' }));
      if (round > 1) sdk.push(Number(process.hrtime.bigint() - started));
      await client.close();
      const ctx = runtime.createPlan();
      started = process.hrtime.bigint();
      await runtime.activate('mcp.everything.echo', ctx);
      if (round > 1) ours.push(Number(process.hrtime.bigint() - started));
      await runtime.endPlan(ctx);
    }
  } finally {
    await runtime.dispose();
  }
  const middle = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return { sdk: middle(sdk), ours: middle(ours) };
}

async function spawnsPerPlan() {
  const counter = countingSpawn();
  const source = createMcpAdapter({ servers: { mcpServers: { everything: server } }, spawn: counter.spawn, logger: silentLogger });
  const runtime = new ToolRuntime({ sources: [source], logger: silentLogger });
  try {
    await runtime.listTools();
    const before = counter.count;
    await runtime.runPlan({}, async (ctx) => {
      for (let index = 0; index < PLAN_CALLS; index++) {
        const result = await runtime.execute('mcp.everything.echo', { message: String(index) }, ctx);
        if (!result.ok) throw result.error;
      }
    });
    return counter.count - before;
  } finally {
    await runtime.dispose();
  }
}

async function sharedSpawns() {
  const counter = countingSpawn();
  const source = createMcpAdapter({ servers: { mcpServers: { everything: { ...server, scope: 'shared' } } }, spawn: counter.spawn, logger: silentLogger });
  const runtime = new ToolRuntime({ sources: [source], logger: silentLogger });
  try {
    await runtime.runPlan({}, (ctx) => runtime.execute('mcp.everything.echo', { message: 'first' }, ctx));
    const first = counter.count;
    for (let plan = 0; plan < SHARED_PLANS; plan++) {
      await runtime.runPlan({}, async (ctx) => {
        for (let index = 0; index < SHARED_PLAN_CALLS; index++) {
          const result = await runtime.execute('mcp.everything.echo', { message: String(index) }, ctx);
          if (!result.ok) throw result.error;
        }
      });
    }
    return { first, later: counter.count - first };
  } finally {
    await runtime.dispose();
  }
}

async function run() {
  const { bare, same, withToken } = await perCall();
  const transport = await transports();
  const connect = await connectTime();
  const planSpawns = await spawnsPerPlan();
  const shared = await sharedSpawns();
  const bareRatio = bare.ratios['runtime.execute'];
  return [
    {
      name: 'MCP echo call: runtime.execute vs bare SDK callTool',
      baseline: 'client.callTool(params), same session and process (server-everything, stdio)',
      baselineNs: bare.medians['client.callTool'],
      subjectNs: bare.medians['runtime.execute'],
      ratio: bareRatio,
      target: '≤ 1.10×',
      note: 'median of per-round ratios; no progress token: nobody listens for progress',
      pass: bareRatio <= 1.1,
    },
    {
      name: 'MCP echo call: SDK callTool with a progress token vs bare SDK callTool (no runtime)',
      baseline: 'client.callTool(params), same session and process',
      baselineNs: bare.medians['client.callTool'],
      subjectNs: bare.medians['client.callTool, progress token only'],
      ratio: bare.ratios['client.callTool, progress token only'],
      target: 'report',
      note: 'what the token alone costs (the server parses _meta): what a call whose caller listens pays',
      pass: true,
    },
    {
      name: 'MCP echo call: runtime.execute vs callTool with the same request options',
      baseline: 'client.callTool with signal, timeout, maxTotalTimeout and resetTimeoutOnProgress',
      baselineNs: same.medians['client.callTool, same options'],
      subjectNs: same.medians['runtime.execute'],
      ratio: same.ratios['runtime.execute'],
      target: 'report',
      note: 'the runtime and adapter alone: same bytes on the wire',
      pass: true,
    },
    {
      name: 'MCP echo call: McpTool.execute (adapter, no runtime) vs callTool with the same options',
      baseline: 'client.callTool with the same options',
      baselineNs: same.medians['client.callTool, same options'],
      subjectNs: same.medians['McpTool.execute'],
      ratio: same.ratios['McpTool.execute'],
      target: 'report',
      pass: true,
    },
    {
      name: 'MCP echo call, resetTimeoutOnProgress: true: runtime.execute vs bare SDK callTool',
      baseline: 'client.callTool(params), same session and process',
      baselineNs: withToken.medians['client.callTool'],
      subjectNs: withToken.medians['runtime.execute'],
      ratio: withToken.ratios['runtime.execute'],
      target: 'report',
      note: 'a progress token on every call, listened to or not',
      pass: true,
    },
    {
      name: 'MCP stdio transport: SDK StdioClientTransport vs process-group transport',
      baseline: 'SDK transport (another server process)',
      baselineNs: transport.sdk,
      subjectNs: transport.ours,
      target: 'report',
      note: 'two server processes: includes their scheduling noise',
      pass: true,
    },
    {
      name: `MCP servers spawned by ${PLAN_CALLS.toLocaleString('en-US')} calls in one plan (scope plan)`,
      baseline: 'after discovery',
      baselineValue: `${PLAN_CALLS.toLocaleString('en-US')} calls`,
      subjectValue: `${planSpawns} spawn(s)`,
      target: '1 spawn',
      pass: planSpawns === 1,
    },
    {
      name: `MCP servers spawned by ${SHARED_PLANS} later plans (scope shared)`,
      baseline: 'first plan',
      baselineValue: `${shared.first} spawn(s)`,
      subjectValue: `${shared.later} spawn(s)`,
      target: '0 spawns',
      pass: shared.first === 1 && shared.later === 0,
    },
    {
      name: 'MCP connect (start server-everything + initialize): runtime.activate vs SDK Client.connect',
      baseline: 'Client.connect(new StdioClientTransport(...)), alternated with the runtime in 10 rounds',
      baselineNs: connect.sdk,
      subjectNs: connect.ours,
      target: 'report',
      note: 'medians; both start a server process, whose start-up dominates',
      pass: true,
    },
  ];
}

module.exports = { run };
runWhenMain(module, run);
