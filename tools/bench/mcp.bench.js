'use strict';
// @ca/adapters-mcp: the cost of one call of server-everything's `echo`
// through runtime.execute against the raw SDK client.callTool on the same
// server process and connection, in one run; the SDK's stdio transport
// against this package's; how many server processes 1,000 calls in one plan
// start; and how many later plans of a `shared` server start.
const { spawn } = require('node:child_process');
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ToolRuntime, silentLogger } = require('../../packages/tool-lifecycle/dist/index.js');
const { createMcpAdapter } = require('../../packages/adapters-mcp/dist/index.js');
const { compare, runWhenMain } = require('./harness');

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
  // Both cases on one connection to one server process: the runtime's shared
  // session, and that session's own SDK Client called directly. Each round of
  // the runtime case runs in a fresh plan (the shared session makes that free).
  const source = createMcpAdapter({ servers: { mcpServers: { everything: { ...server, scope: 'shared' } } }, logger: silentLogger });
  const runtime = new ToolRuntime({ sources: [source], logger: silentLogger });
  let ctx = runtime.createPlan();
  const input = { message: 'bench' };
  try {
    const check = await runtime.execute('mcp.everything.echo', input, ctx);
    if (!check.ok || check.output !== 'Echo: bench') throw new Error(`unexpected result ${JSON.stringify(check)}`);
    const client = source.sessionFor('everything', ctx.planId).client;
    const fresh = async () => {
      await runtime.endPlan(ctx);
      ctx = runtime.createPlan();
    };
    return await compare(
      {
        'client.callTool': { async: true, fn: () => client.callTool({ name: 'echo', arguments: input }) },
        'runtime.execute': { async: true, fn: () => runtime.execute('mcp.everything.echo', input, ctx), setup: fresh },
      },
      { rounds: 31, iterations: 300, warmup: 1_000 },
    );
  } finally {
    await runtime.endPlan(ctx);
    await runtime.dispose();
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

async function spawnsPerPlan() {
  const counter = countingSpawn();
  const source = createMcpAdapter({ servers: { mcpServers: { everything: server } }, spawn: counter.spawn, logger: silentLogger });
  const runtime = new ToolRuntime({ sources: [source], logger: silentLogger });
  try {
    await runtime.listTools();
    const before = counter.count;
    await runtime.runPlan({}, async (ctx) => {
      for (let index = 0; index < 1_000; index++) {
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
    for (let plan = 0; plan < 50; plan++) {
      await runtime.runPlan({}, async (ctx) => {
        for (let index = 0; index < 20; index++) {
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
  const medians = await perCall();
  const transport = await transports();
  const planSpawns = await spawnsPerPlan();
  const shared = await sharedSpawns();
  const ratio = medians['runtime.execute'] / medians['client.callTool'];
  return [
    {
      name: 'MCP echo call: runtime.execute vs raw SDK callTool',
      baseline: 'client.callTool, same session and process (server-everything, stdio)',
      baselineNs: medians['client.callTool'],
      subjectNs: medians['runtime.execute'],
      ratio,
      target: '≤ 1.05×',
      pass: ratio <= 1.05,
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
      name: 'MCP servers spawned by 1,000 calls in one plan (scope plan)',
      baseline: 'after discovery',
      baselineValue: '1,000 calls',
      subjectValue: `${planSpawns} spawn(s)`,
      target: '1 spawn',
      pass: planSpawns === 1,
    },
    {
      name: 'MCP servers spawned by 50 later plans (scope shared)',
      baseline: 'first plan',
      baselineValue: `${shared.first} spawn(s)`,
      subjectValue: `${shared.later} spawn(s)`,
      target: '0 spawns',
      pass: shared.first === 1 && shared.later === 0,
    },
  ];
}

module.exports = { run };
runWhenMain(module, run);
