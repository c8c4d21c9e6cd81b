'use strict';
// The execute row of runtime.bench.js, paired across two builds of the
// repository in one process: this tree against another checkout of it (the
// tree before a change), alternating short rounds, so that the machine's
// drift and load hit both alike. Prints, by wall clock and by CPU time, the
// median ns/execute of each tree and the median of the per-round ratios
// (this tree / the other); rounds of one plan of 1,000 executions.
//
//   git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npx nx run-many -t build -p @ca/tool-lifecycle)
//   node --expose-gc tools/bench/compare-trees.js /tmp/before [rounds] [step]
//
// With `step`, each execute carries a step id of its own (`execute(…, { step })`),
// so every call goes through the plan's call journal (in memory, by default).
//
// Not a *.bench.js: `npm run bench` does not run it, since it needs the
// other tree built.
const path = require('node:path');
const { GREET_SCHEMAS, median, timeAsync } = require('./harness');

const { inputSchema, outputSchema } = GREET_SCHEMAS;
const PLAN_SIZE = 1_000;

/** The runtime of one tree with the trivial tool of runtime.bench.js, and a function that runs one execute in plans of 1,000. */
async function subjectOf(root, withStep) {
  const { ToolRuntime, silentLogger } = require(path.join(root, 'packages/tool-lifecycle/dist/index.js'));
  const { InMemoryToolSource } = require(path.join(root, 'packages/tool-lifecycle/dist/testing/index.js'));
  const execute = async (input) => ({ ok: true, output: { greeting: `hi ${input.name}` } });
  const tool = {
    descriptor: { name: 'bench.greet', description: 'Greets.', source: 'custom', capability: { writes: false }, inputSchema, outputSchema },
    execute: (input) => execute(input),
  };
  const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger: silentLogger });
  await runtime.listTools();
  const input = { name: 'Ada', count: 3 };
  let ctx = runtime.createPlan();
  return async (index) => {
    if (index % PLAN_SIZE === 0) {
      await runtime.endPlan(ctx);
      ctx = runtime.createPlan();
    }
    return withStep ? runtime.execute('bench.greet', input, ctx, { step: `s${index}` }) : runtime.execute('bench.greet', input, ctx);
  };
}

async function main() {
  const other = process.argv[2];
  if (other === undefined) throw new Error('usage: node --expose-gc tools/bench/compare-trees.js <other tree> [rounds]');
  const rounds = Number(process.argv[3] ?? 201);
  const withStep = process.argv[4] === 'step';
  const here = path.resolve(__dirname, '..', '..');
  const subjects = { 'this tree': await subjectOf(here, withStep), 'other tree': await subjectOf(path.resolve(other), withStep) };
  const names = Object.keys(subjects);
  for (const name of names) await timeAsync(subjects[name], 50_000);
  // Wall-clock and CPU time (this process's, all threads) per round: on a
  // shared machine the wall clock also counts the time another process held
  // the core, which the CPU time does not.
  const wall = { 'this tree': [], 'other tree': [] };
  const cpu = { 'this tree': [], 'other tree': [] };
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      global.gc?.();
      const before = process.cpuUsage();
      wall[name].push(await timeAsync(subjects[name], PLAN_SIZE));
      const used = process.cpuUsage(before);
      cpu[name].push(((used.user + used.system) * 1_000) / PLAN_SIZE);
    }
  }
  const ratioOf = (samples) => median(samples['this tree'].map((value, round) => value / samples['other tree'][round]));
  console.log(
    JSON.stringify({
      thisTree: here,
      otherTree: path.resolve(other),
      rounds,
      step: withStep,
      wall: { thisTreeNs: Math.round(median(wall['this tree'])), otherTreeNs: Math.round(median(wall['other tree'])), ratio: Number(ratioOf(wall).toFixed(3)) },
      cpu: { thisTreeNs: Math.round(median(cpu['this tree'])), otherTreeNs: Math.round(median(cpu['other tree'])), ratio: Number(ratioOf(cpu).toFixed(3)) },
    }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
