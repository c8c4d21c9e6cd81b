'use strict';
// Activation reuse: what `runtime.execute` costs when the tool is already
// active in the plan, against a first execute in a new plan (which runs the
// activate step, and deactivate at endPlan), and what the activate/deactivate
// steps add to a plan against the same plan with a tool that has none — all
// measured in the same run. Then activations are counted: once per (plan,
// tool), also when the first executes of a plan arrive concurrently.
const { ToolRuntime, silentLogger } = require('../../packages/tool-lifecycle/dist/index.js');
const { InMemoryToolSource } = require('../../packages/tool-lifecycle/dist/testing/index.js');
const { compare, runWhenMain, scaled } = require('./harness');

const capability = { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false };
const inputSchema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };

function buildRuntime() {
  const counts = { activations: 0, deactivations: 0 };
  const sessions = new Map();
  // A tool that opens something per plan (here: an entry in a map) and releases it.
  const session = {
    descriptor: { name: 'bench.session', description: 'Keeps a session per plan.', source: 'custom', capability, inputSchema },
    async activate(ctx) {
      // A real activation waits for something (a file, a process, a server).
      await new Promise((resolve) => setImmediate(resolve));
      counts.activations++;
      sessions.set(ctx.planId, { opened: counts.activations });
    },
    async execute(input, ctx) {
      if (!sessions.has(ctx.planId)) throw new Error('no session');
      return { ok: true, output: input };
    },
    async deactivate(ctx) {
      counts.deactivations++;
      sessions.delete(ctx.planId);
    },
  };
  const stateless = {
    descriptor: { name: 'bench.stateless', description: 'No activate step.', source: 'custom', capability, inputSchema },
    async execute(input) {
      return { ok: true, output: input };
    },
  };
  const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([session, stateless])], logger: silentLogger });
  return { runtime, counts, sessions };
}

/** Ends plans and counts activations for a scenario. */
async function countActivations(runtime, counts, { plans, executionsPerPlan, concurrent }) {
  const before = { ...counts };
  for (let index = 0; index < plans; index++) {
    const ctx = runtime.createPlan();
    if (concurrent) {
      await Promise.all(Array.from({ length: executionsPerPlan }, (_, step) => runtime.execute('bench.session', { n: step }, ctx)));
    } else {
      for (let step = 0; step < executionsPerPlan; step++) await runtime.execute('bench.session', { n: step }, ctx);
    }
    await runtime.endPlan(ctx);
  }
  return { activations: counts.activations - before.activations, deactivations: counts.deactivations - before.deactivations };
}

async function run() {
  const { runtime, counts, sessions } = buildRuntime();
  const input = { n: 1 };
  await runtime.listTools();

  // The warm case keeps one plan per round, so its traces do not pile up.
  let warm = runtime.createPlan();
  const freshWarmPlan = async () => {
    await runtime.endPlan(warm);
    warm = runtime.createPlan();
    await runtime.execute('bench.session', input, warm);
  };
  const medians = await compare(
    {
      'execute, already active': { async: true, setup: freshWarmPlan, fn: () => runtime.execute('bench.session', input, warm) },
      'new plan, stateless tool': {
        async: true,
        fn: async () => {
          const ctx = runtime.createPlan();
          await runtime.execute('bench.stateless', input, ctx);
          await runtime.endPlan(ctx);
        },
      },
      'new plan, activate step': {
        async: true,
        fn: async () => {
          const ctx = runtime.createPlan();
          await runtime.execute('bench.session', input, ctx);
          await runtime.endPlan(ctx);
        },
      },
    },
    { rounds: 11, iterations: 4_000, warmup: 8_000 },
  );
  await runtime.endPlan(warm);

  const executions = scaled(10_000, 20);
  const plans = scaled(1_000, 5);
  const onePlan = await countActivations(runtime, counts, { plans: 1, executionsPerPlan: executions, concurrent: false });
  const sequential = await countActivations(runtime, counts, { plans, executionsPerPlan: 10, concurrent: false });
  const concurrent = await countActivations(runtime, counts, { plans, executionsPerPlan: 10, concurrent: true });
  const number = (value) => value.toLocaleString('en-US');
  const counted = (result) => `${result.activations.toLocaleString('en-US')} activations, ${result.deactivations.toLocaleString('en-US')} deactivations`;
  const expected = (plans) => `${plans.toLocaleString('en-US')} of each`;
  const matches = (result, plans) => result.activations === plans && result.deactivations === plans;

  return [
    {
      name: 'first execute in a new plan (createPlan + activate + execute + endPlan with deactivate)',
      baseline: 'execute, tool already active in the plan',
      baselineNs: medians['execute, already active'],
      subjectNs: medians['new plan, activate step'],
      note: 'the activation awaits one setImmediate, as real ones wait for I/O',
      target: 'report',
      pass: true,
    },
    {
      name: 'what the activate/deactivate steps add to a plan',
      baseline: 'createPlan + execute + endPlan, tool without activate step',
      baselineNs: medians['new plan, stateless tool'],
      subjectNs: medians['new plan, activate step'],
      target: 3,
      pass: medians['new plan, activate step'] <= 3 * medians['new plan, stateless tool'],
    },
    {
      name: `activations counted: ${number(executions)} executes in one plan`,
      baseline: 'expected',
      baselineValue: expected(1),
      subjectValue: counted(onePlan),
      target: 'equal',
      pass: matches(onePlan, 1),
    },
    {
      name: `activations counted: ${number(plans)} plans × 10 sequential executes`,
      baseline: 'expected',
      baselineValue: expected(plans),
      subjectValue: counted(sequential),
      target: 'equal',
      pass: matches(sequential, plans),
    },
    {
      name: `activations counted: ${number(plans)} plans × 10 concurrent first executes (single flight)`,
      baseline: 'expected',
      baselineValue: expected(plans),
      subjectValue: counted(concurrent),
      note: `sessions left open: ${sessions.size}`,
      target: 'equal, none left open',
      pass: matches(concurrent, plans) && sessions.size === 0,
    },
  ];
}

module.exports = { run };
runWhenMain(module, run);
