'use strict';
// What a durable step costs (@ca/plan-restate): a plan of N tool calls, each a journaled step of a Restate
// workflow, against — in the same run, on the same restate-server and endpoint — a bare Restate workflow whose
// N steps are `ctx.run` of the same function (the aim: ≤ 1.2×), and against N plain `runtime.execute` calls in
// a plan (in-process, in-memory journal). Rounds interleave the cases; per step = per plan / N.
// restate-server looks up its latest release on the internet at every start: the measurement runs in a
// loopback-only network namespace (this file again, with --inner), and prints its rows as JSON.
const { spawn } = require('node:child_process');
const http2 = require('node:http2');
const { performance } = require('node:perf_hooks');
const { median, runWhenMain, scaled } = require('./harness');

const STEPS = scaled(40, 3);
const ROUNDS = scaled(9, 1);
const PLANS_PER_ROUND = scaled(6, 1);

/** The function both sides run: the bench tool's work. */
const greet = (input) => ({ greeting: `Hello, ${input.name} ×${input.count}` });

async function inner() {
  const restate = require('@restatedev/restate-sdk');
  const { ToolRuntime, silentLogger, toolSuccess } = require('../../packages/tool-lifecycle/dist/index.js');
  const { InMemoryToolSource } = require('../../packages/tool-lifecycle/dist/testing/index.js');
  const { DurableApprovalRouter, createPlanWorkflow } = require('../../packages/plan-restate/dist/index.js');
  const { installWithResolvers } = require('../../packages/plan-restate/dist/with-resolvers.js');
  const { startRestateServer } = require('../../packages/plan-restate/dist/testing/index.js');
  installWithResolvers();

  const tool = {
    descriptor: {
      name: 'bench.greet',
      description: 'Greets.',
      source: 'custom',
      capability: { writes: false },
      inputSchema: { type: 'object', properties: { name: { type: 'string' }, count: { type: 'integer' } }, required: ['name', 'count'] },
    },
    execute: async (input) => toolSuccess(greet(input)),
  };
  const approvals = new DurableApprovalRouter();
  const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger: silentLogger, approvalHandler: approvals });
  const workflow = createPlanWorkflow({
    runtime,
    approvals,
    host: 'bench',
    plans: {
      async steps(ctx, input, rt) {
        for (let step = 0; step < input.steps; step++) await rt.execute('bench.greet', { name: 'Ada', count: step }, ctx, { step: `s${step}` });
        return { steps: input.steps };
      },
    },
  });
  const bare = restate.workflow({
    name: 'bare',
    handlers: {
      run: async (ctx, input) => {
        for (let step = 0; step < input.steps; step++) await ctx.run(`s${step}`, async () => greet({ name: 'Ada', count: step }));
        return { steps: input.steps };
      },
    },
  });
  const endpoint = restate.endpoint().bind(bare).bind(workflow.workflow).bind(workflow.status);
  const server = http2.createServer(endpoint.http2Handler());
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const restateServer = await startRestateServer();
  try {
    const registered = await fetch(`${restateServer.adminUrl}/deployments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uri: `http://127.0.0.1:${server.address().port}`, force: true }),
    });
    if (!registered.ok) throw new Error(`registration failed: ${registered.status} ${await registered.text()}`);
    let next = 0;
    const invoke = async (path, body) => {
      const response = await fetch(`${restateServer.ingressUrl}/${path}/k${next++}/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    };
    const cases = {
      bare: () => invoke('bare', { steps: STEPS }),
      durable: () => invoke('plans', { plan: 'steps', input: { steps: STEPS } }),
      plain: () =>
        runtime.runPlan({}, async (ctx) => {
          for (let step = 0; step < STEPS; step++) await runtime.execute('bench.greet', { name: 'Ada', count: step }, ctx, { step: `s${step}` });
        }),
    };
    const samples = { bare: [], durable: [], plain: [] };
    // Warm-up: each case twice.
    for (const name of Object.keys(cases)) for (let index = 0; index < 2; index++) await cases[name]();
    for (let round = 0; round < ROUNDS; round++) {
      const names = round % 2 === 0 ? ['bare', 'durable', 'plain'] : ['plain', 'durable', 'bare'];
      for (const name of names) {
        const started = performance.now();
        for (let plan = 0; plan < PLANS_PER_ROUND; plan++) await cases[name]();
        samples[name].push(((performance.now() - started) * 1e6) / (PLANS_PER_ROUND * STEPS));
      }
    }
    const ratios = samples.durable.map((value, round) => value / samples.bare[round]);
    return { samples, ratio: median(ratios), bare: median(samples.bare), durable: median(samples.durable), plain: median(samples.plain) };
  } finally {
    await restateServer.stop(2_000);
    await new Promise((resolve) => server.close(resolve));
  }
}

async function run() {
  const { loopbackCommand } = require('../../packages/plan-restate/dist/testing/index.js');
  const { command, args } = loopbackCommand(process.execPath, [__filename, '--inner']);
  const result = await new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, RESTATE_LOGGING: 'WARN' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      const last = stdout.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('{')) reject(new Error(`the measurement exited with ${code}: ${stderr.slice(-3_000)}`));
      else resolve(JSON.parse(last));
    });
  });
  const ms = (ns) => `${(ns / 1e6).toFixed(3)} ms`;
  return [
    {
      name: `durable: one step of a plan (${STEPS} steps a plan) vs a bare Restate ctx.run of the same function`,
      baseline: 'bare ctx.run step, same server and endpoint, interleaved',
      baselineNsPerOp: result.bare,
      subjectNsPerOp: result.durable,
      ratio: result.ratio,
      target: '≤ 1.2×',
      pass: result.ratio <= 1.2,
      note: `${ms(result.bare)} vs ${ms(result.durable)} per step; median of per-round ratios`,
    },
    {
      name: 'durable: one step of a plan vs a plain runtime.execute with a step id (in-memory journal)',
      baseline: 'runtime.execute in a plan, no Restate',
      baselineNsPerOp: result.plain,
      subjectNsPerOp: result.durable,
      ratio: result.durable / result.plain,
      target: 'report',
      pass: true,
    },
  ];
}

if (process.argv[2] === '--inner') {
  inner().then(
    (result) => {
      process.stdout.write(`\n${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
} else {
  module.exports = { run };
  runWhenMain(module, run);
}
