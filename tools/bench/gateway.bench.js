'use strict';
// @ca/mcp-server through `agents mcp serve` (the built CLI, over stdio): the
// cost of one call of server-everything's `echo` made by an MCP client
// through the gateway (client → gateway → server-everything, two stdio hops,
// the call through runtime.execute in the session's plan) against the same
// call made to server-everything directly; and a built-in tool
// (builtin.fs.read of a small file) served by the gateway against an `echo`
// served by a bare SDK server. Paired rounds (see comparePaired): every
// process is started once, before the rounds.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { comparePaired, runWhenMain } = require('./harness');

const root = path.resolve(__dirname, '..', '..');
const cli = path.join(root, 'packages', 'cli', 'dist', 'bin.js');
const everything = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
const bareEcho = path.join(__dirname, 'fixtures', 'echo-server.js');

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
    const bare = await connect([bareEcho]);
    clients.push(bare);
    const input = { message: 'bench' };
    await expectText(direct.callTool({ name: 'echo', arguments: input }), 'Echo: bench');
    await expectText(gateway.callTool({ name: 'mcp.everything.echo', arguments: input }), 'Echo: bench');
    await expectText(bare.callTool({ name: 'echo', arguments: input }), 'Echo: bench');
    const read = { resource: 'work', path: 'note.txt' };
    const check = await gateway.callTool({ name: 'builtin.fs.read', arguments: read });
    if (check.isError || check.structuredContent?.content !== 'a small file') throw new Error(`unexpected result ${JSON.stringify(check).slice(0, 500)}`);

    const options = { rounds: 200, iterations: 20, warmup: 500 };
    const through = await comparePaired(
      {
        'server-everything directly': { fn: () => direct.callTool({ name: 'echo', arguments: input }) },
        'through the gateway': { fn: () => gateway.callTool({ name: 'mcp.everything.echo', arguments: input }) },
      },
      { ...options, baseline: 'server-everything directly' },
    );
    const builtin = await comparePaired(
      {
        'bare SDK echo': { fn: () => bare.callTool({ name: 'echo', arguments: input }) },
        'builtin.fs.read served': { fn: () => gateway.callTool({ name: 'builtin.fs.read', arguments: read }) },
      },
      { ...options, baseline: 'bare SDK echo' },
    );
    return [
      {
        name: 'MCP call through agents mcp serve (stdio client → gateway → stdio server-everything) vs server-everything directly',
        baseline: 'the same echo call, client → server-everything over stdio',
        baselineNs: through.medians['server-everything directly'],
        subjectNs: through.medians['through the gateway'],
        ratio: through.ratios['through the gateway'],
        target: 'aim ≤ 1.25×',
        note: 'two stdio hops against one; the gateway runs each call through runtime.execute in the session plan (policy, schema, trace)',
      },
      {
        name: 'A built-in tool served over stdio by agents mcp serve (builtin.fs.read, 12 bytes) vs an echo of a bare SDK server',
        baseline: 'echo on the SDK low-level Server over stdio, no validation',
        baselineNs: builtin.medians['bare SDK echo'],
        subjectNs: builtin.medians['builtin.fs.read served'],
        ratio: builtin.ratios['builtin.fs.read served'],
        target: 'report',
      },
    ];
  } finally {
    for (const client of clients) await client.close().catch(() => undefined);
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

module.exports = { run };
runWhenMain(module, run);
