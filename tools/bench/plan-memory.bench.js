'use strict';
// Memory per live plan: the heap (after GC) held by 2,000 live plans, each
// with N tools activated by one execution, against the heap before those
// plans existed — measured in the same run — and the heap after they ended.
// The tools hold nothing themselves, so the figure is the runtime's own cost
// per plan: the context, one trace per execution, the lifecycle cache entries.
const { ToolRuntime, silentLogger } = require('../../packages/tool-lifecycle/dist/index.js');
const { InMemoryToolSource } = require('../../packages/tool-lifecycle/dist/testing/index.js');
const { heapAfterGc, median, runWhenMain, scaled } = require('./harness');

const LIVE_PLANS = scaled(2_000, 20);
const TOOL_COUNTS = [0, 1, 10, 50];
const ROUNDS = scaled(3, 1);

function tool(index) {
  return {
    descriptor: {
      name: `bench.memory.${index}`,
      description: 'Holds nothing.',
      source: 'custom',
      capability: { writes: false },
      inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
    },
    async activate() {
      return undefined;
    },
    async execute(input) {
      return { ok: true, output: input };
    },
    async deactivate() {
      return undefined;
    },
  };
}

/** Heap per plan with `toolCount` activated tools, and what is left after the plans end. */
async function measure(runtime, toolCount) {
  const before = heapAfterGc();
  const plans = [];
  for (let index = 0; index < LIVE_PLANS; index++) {
    const ctx = runtime.createPlan();
    for (let tool = 0; tool < toolCount; tool++) await runtime.execute(`bench.memory.${tool}`, { n: tool }, ctx);
    plans.push(ctx);
  }
  const live = heapAfterGc();
  for (const ctx of plans) await runtime.endPlan(ctx);
  plans.length = 0;
  const ended = heapAfterGc();
  return { before, perPlan: (live - before) / LIVE_PLANS, leftAfterEnd: ended - before };
}

async function run() {
  const maxTools = Math.max(...TOOL_COUNTS);
  const runtime = new ToolRuntime({
    sources: [new InMemoryToolSource(Array.from({ length: maxTools }, (_, index) => tool(index)))],
    logger: silentLogger,
  });
  await runtime.listTools();
  // Warm-up: JIT, and the runtime's bounded memory of ended plan ids (10,000) filled.
  for (let index = 0; index < scaled(10_000, 20); index++) {
    const ctx = runtime.createPlan();
    await runtime.execute(`bench.memory.${index % maxTools}`, { n: index }, ctx);
    await runtime.endPlan(ctx);
  }
  for (const toolCount of TOOL_COUNTS) await measure(runtime, toolCount);

  const results = new Map();
  for (const toolCount of TOOL_COUNTS) {
    const samples = [];
    for (let round = 0; round < ROUNDS; round++) samples.push(await measure(runtime, toolCount));
    results.set(toolCount, {
      before: median(samples.map((sample) => sample.before)),
      perPlan: median(samples.map((sample) => sample.perPlan)),
      leftAfterEnd: median(samples.map((sample) => sample.leftAfterEnd)),
    });
  }
  const kb = (bytes) => `${(bytes / 1024).toFixed(2)} KB`;
  const base = results.get(0).perPlan;
  const rows = [];
  for (const toolCount of TOOL_COUNTS) {
    const result = results.get(toolCount);
    const perTool = toolCount === 0 ? undefined : (result.perPlan - base) / toolCount;
    rows.push({
      name: `memory per live plan, ${toolCount} activated tool${toolCount === 1 ? '' : 's'} (${LIVE_PLANS.toLocaleString('en-US')} plans)`,
      baseline: 'heap after GC before the plans',
      baselineValue: `${(result.before / 1024 / 1024).toFixed(2)} MB`,
      subjectValue: `${kb(result.perPlan)} / plan`,
      note: `${perTool === undefined ? 'plan context only' : `${kb(perTool)} per activated tool (incl. its trace)`}; left after endPlan ${kb(result.leftAfterEnd)}`,
      target: '< 4 KB + 2 KB per tool; < 256 KB left after endPlan',
      pass: result.perPlan < 4096 + 2048 * toolCount && result.leftAfterEnd < 256 * 1024,
    });
  }
  return rows;
}

module.exports = { run };
runWhenMain(module, run);
