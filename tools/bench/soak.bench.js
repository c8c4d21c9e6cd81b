'use strict';
// Soak: 1,000,000 executions over 10,000 plans in one process, across three
// sources (in-memory, defineTool, fromFunction), with failures, invalid
// inputs, per-call deadlines, plan timeouts and cancellations mixed in. Each
// row compares the state after the soak with the state before it, measured
// in the same run: heap after GC (within 10%), active handles and timers (no
// growth), listeners on plan signals and on the process (none left, no
// growth), per-plan state in the runtime and the tools (none left).
// tools/reliability/src/soak.spec.ts runs the same at a tenth of the size in CI.
const { ToolRuntime, ToolLifecycleCache, ToolExecutionError, silentLogger } = require('../../packages/tool-lifecycle/dist/index.js');
const { ToolCancelledError } = require('../../packages/tool-context/dist/index.js');
const { InMemoryToolSource } = require('../../packages/tool-lifecycle/dist/testing/index.js');
const { createCustomAdapter, defineTool } = require('../../packages/adapters-custom/dist/index.js');
const { createWrappedAdapter, fromFunction } = require('../../packages/adapters-wrapped/dist/index.js');
const { getEventListeners } = require('node:events');
const { performance } = require('node:perf_hooks');
const { heapAfterGc, runWhenMain, scaled } = require('./harness');

const PLANS = Number(process.env.SOAK_PLANS ?? scaled(10_000, 20));
const EXECUTIONS_PER_PLAN = 100;
const CONCURRENT_PLANS = 10;
const BATCH = 10;
const TOOL_NAMES = ['soak.session', 'soak.listening', 'soak.custom', 'soak.function'];
const integerInput = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };

function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function buildRuntime() {
  const sessions = new Map();
  const handles = new Map();
  const stateful = {
    descriptor: {
      name: 'soak.session',
      description: 'Keeps a session per plan.',
      source: 'custom',
      capability: { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false },
      inputSchema: integerInput,
    },
    async activate(ctx) {
      sessions.set(ctx.planId, { opened: Date.now() });
    },
    async execute(input, ctx) {
      if (!sessions.has(ctx.planId)) throw new Error('no session');
      return { ok: true, output: { n: input.n } };
    },
    async deactivate(ctx) {
      sessions.delete(ctx.planId);
    },
  };
  const listening = {
    descriptor: { name: 'soak.listening', description: 'Listens to its signal.', source: 'custom', capability: { writes: false } },
    async execute(input, ctx) {
      const onAbort = () => undefined;
      ctx.cancellationToken.signal.addEventListener('abort', onAbort);
      try {
        await Promise.resolve();
        return { ok: true, output: input.n };
      } finally {
        ctx.cancellationToken.signal.removeEventListener('abort', onAbort);
      }
    },
  };
  const custom = defineTool({
    name: 'soak.custom',
    description: 'A defineTool tool that fails now and then.',
    inputSchema: integerInput,
    capability: { writes: false },
    activate: (ctx) => {
      handles.set(ctx.planId, 1);
    },
    deactivate: (ctx) => {
      handles.delete(ctx.planId);
    },
    execute: ({ n }) => {
      if (n % 17 === 0) throw new Error(`custom failure at ${n}`);
      if (n % 13 === 0) return { ok: false, error: Object.assign(new Error('expected failure'), { code: 'SOAK_EXPECTED' }) };
      return { doubled: n * 2 };
    },
  });
  const foreign = fromFunction(async ({ n }) => ({ squared: n * n }), {
    name: 'soak.function',
    description: 'A plain function.',
    inputSchema: integerInput,
    capability: { writes: false },
  });
  const cache = new ToolLifecycleCache(silentLogger);
  const runtime = new ToolRuntime({
    sources: [new InMemoryToolSource([stateful, listening]), createCustomAdapter({ tools: [custom] }), createWrappedAdapter({ tools: [foreign] })],
    logger: silentLogger,
    cache,
  });
  return { runtime, cache, perPlanState: [sessions, handles] };
}

async function runPlans(runtime, plans, next, outcomes, sampledSignals, executionsPerPlan = EXECUTIONS_PER_PLAN) {
  const runPlan = async (index) => {
    const ctx = runtime.createPlan(index % 5 === 0 ? { timeoutMs: 60_000 } : {});
    const cancelAt = next() < 0.05 ? Math.floor(next() * executionsPerPlan) : -1;
    for (let start = 0; start < executionsPerPlan; start += BATCH) {
      const batch = [];
      for (let offset = 0; offset < BATCH && start + offset < executionsPerPlan; offset++) {
        const step = start + offset;
        if (step === cancelAt) ctx.cancellationToken.cancel('soak cancellation');
        const tool = TOOL_NAMES[Math.floor(next() * TOOL_NAMES.length)];
        const input = next() < 0.03 ? { n: 'not a number' } : { n: step };
        const options = next() < 0.1 ? { timeoutMs: 60_000 } : undefined;
        batch.push(
          runtime.execute(tool, input, ctx, options).then(
            (result) => {
              if (result.ok) outcomes.ok++;
              else outcomes.failedResult++;
            },
            (error) => {
              if (ToolCancelledError.isInstance(error)) outcomes.cancelled++;
              else if (ToolExecutionError.isInstance(error)) outcomes.thrown++;
              else outcomes.other++;
            },
          ),
        );
      }
      await Promise.all(batch);
    }
    const report = await runtime.endPlan(ctx);
    if (report.failures.length > 0 || report.abandonedExecutions > 0 || ctx.traces.length !== executionsPerPlan) outcomes.other++;
    if (index % 100 === 0) sampledSignals.push(ctx.cancellationToken.signal);
  };
  for (let wave = 0; wave < plans; wave += CONCURRENT_PLANS) {
    const running = [];
    for (let offset = 0; offset < CONCURRENT_PLANS && wave + offset < plans; offset++) running.push(runPlan(wave + offset));
    await Promise.all(running);
  }
}

function activeResources() {
  const counts = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

function processListeners() {
  const counts = {};
  for (const name of process.eventNames()) counts[String(name)] = process.listenerCount(name);
  return counts;
}

async function settleEventLoop() {
  for (let index = 0; index < 3; index++) await new Promise((resolve) => setImmediate(resolve));
}

const summarise = (counts) =>
  Object.entries(counts)
    .map(([type, count]) => `${type} ${count}`)
    .join(', ') || 'none';
const total = (counts) => Object.values(counts).reduce((sum, count) => sum + count, 0);
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;

async function run() {
  const { runtime, cache, perPlanState } = buildRuntime();
  const next = random(20_260_301);
  const ignored = { ok: 0, failedResult: 0, thrown: 0, cancelled: 0, other: 0 };
  // Warm-up: fill the runtime's bounded memory of ended plan ids (10,000) with
  // one-execution plans, then JIT and caches with full plans.
  await runPlans(runtime, scaled(10_000, 20), next, ignored, [], 1);
  await runPlans(runtime, scaled(200, 2), next, ignored, []);
  await settleEventLoop();

  const resourcesBefore = activeResources();
  const listenersBefore = processListeners();
  const heapBefore = heapAfterGc();

  const outcomes = { ok: 0, failedResult: 0, thrown: 0, cancelled: 0, other: 0 };
  const sampledSignals = [];
  const started = performance.now();
  await runPlans(runtime, PLANS, next, outcomes, sampledSignals);
  const elapsedMs = performance.now() - started;
  await settleEventLoop();

  const heapAfter = heapAfterGc();
  const resourcesAfter = activeResources();
  const listenersAfter = processListeners();
  const signalListeners = sampledSignals.reduce((sum, signal) => sum + getEventListeners(signal, 'abort').length, 0);
  const executions = PLANS * EXECUTIONS_PER_PLAN;
  const growth = (heapAfter - heapBefore) / heapBefore;
  const timersBefore = resourcesBefore.Timeout ?? 0;
  const timersAfter = resourcesAfter.Timeout ?? 0;
  const handlesBefore = { ...resourcesBefore };
  const handlesAfter = { ...resourcesAfter };
  delete handlesBefore.Timeout;
  delete handlesAfter.Timeout;
  const noHandleGrowth = Object.entries(handlesAfter).every(([type, count]) => count <= (handlesBefore[type] ?? 0));
  const perPlanLeft = cache.planCount + perPlanState.reduce((sum, state) => sum + state.size, 0);
  const label = `${executions.toLocaleString('en-US')} executions / ${PLANS.toLocaleString('en-US')} plans`;
  const counted = outcomes.ok + outcomes.failedResult + outcomes.thrown + outcomes.cancelled;

  return [
    {
      name: `soak ${label}: outcomes`,
      baseline: 'executions started',
      baselineValue: executions.toLocaleString('en-US'),
      subjectValue: `ok ${outcomes.ok}, failed ${outcomes.failedResult}, threw ${outcomes.thrown}, cancelled ${outcomes.cancelled}, other ${outcomes.other}`,
      note: `${Math.round(executions / (elapsedMs / 1000)).toLocaleString('en-US')} executions/s, ${(elapsedMs / 1000).toFixed(1)} s`,
      target: 'all accounted for, none other',
      pass: counted === executions && outcomes.other === 0,
    },
    {
      name: `soak ${label}: heap after GC`,
      baseline: 'heap after GC before the soak',
      baselineValue: mb(heapBefore),
      subjectValue: `${mb(heapAfter)} (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(2)}%)`,
      target: 'within 10%',
      pass: growth <= 0.1,
    },
    {
      name: `soak ${label}: active handles (not timers)`,
      baseline: 'before the soak',
      baselineValue: `${total(handlesBefore)} (${summarise(handlesBefore)})`,
      subjectValue: `${total(handlesAfter)} (${summarise(handlesAfter)})`,
      target: 'no growth',
      pass: noHandleGrowth,
    },
    {
      name: `soak ${label}: active timers`,
      baseline: 'before the soak',
      baselineValue: String(timersBefore),
      subjectValue: String(timersAfter),
      note: `${Math.ceil(PLANS / 5).toLocaleString('en-US')} plan timeouts and ~${Math.round(executions / 10).toLocaleString('en-US')} per-call deadlines were set during the soak`,
      target: 'no growth',
      pass: timersAfter <= timersBefore,
    },
    {
      name: `soak ${label}: listeners`,
      baseline: 'process listeners before',
      baselineValue: `process ${total(listenersBefore)}`,
      subjectValue: `process ${total(listenersAfter)}; abort listeners on ${sampledSignals.length} sampled plan signals: ${signalListeners}`,
      target: 'no growth, 0 on plan signals',
      pass: total(listenersAfter) <= total(listenersBefore) && signalListeners === 0,
    },
    {
      name: `soak ${label}: per-plan state left`,
      baseline: 'expected',
      baselineValue: '0',
      subjectValue: `${perPlanLeft} (runtime cache ${cache.planCount}, tool sessions ${perPlanState[0].size}, tool handles ${perPlanState[1].size})`,
      target: '0',
      pass: perPlanLeft === 0,
    },
  ];
}

module.exports = { run };
runWhenMain(module, run);
