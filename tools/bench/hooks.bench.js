'use strict';
// What hooks cost runtime.execute of a trivial tool (input and output
// schemas), against the same execute of a runtime with no hook configured:
//  - hooks configured, none for this tool (`tools: 'other.*'`): the step is
//    decided once per tool, so the call costs what it costs without hooks;
//  - one synchronous before-hook that lets the call go on (its decision and
//    time are traced);
//  - one synchronous after-hook that lets the output through;
//  - one before-hook that returns a resolved promise (the race with its
//    deadline and the plan's cancellation);
//  - a second runtime with nothing configured, to show the noise.
// Each comparison runs in a process of its own, paired round by round with
// its own baseline (as approval.bench.js does, and for the same reasons).
// Targets: hooks for other tools cost the same (ratio ≤ 1.05); one
// synchronous hook adds at most 0.3 µs.
const { spawnSync } = require('node:child_process');
const { ToolRuntime, silentLogger } = require('../../packages/tool-lifecycle/dist/index.js');
const { InMemoryToolSource } = require('../../packages/tool-lifecycle/dist/testing/index.js');
const { GREET_SCHEMAS, comparePaired, runWhenMain, scaled } = require('./harness');

const { inputSchema, outputSchema } = GREET_SCHEMAS;

/** The hooks of each comparison's subject, and how many of them run around the call. */
const SUBJECTS = {
  'hooks for other tools': { hooks: [{ name: 'other', tools: 'other.*', before: () => undefined, after: () => undefined }], ran: 0 },
  'one synchronous before-hook': { hooks: [{ name: 'audit', before: () => undefined }], ran: 1 },
  'one synchronous after-hook': { hooks: [{ name: 'audit', after: () => undefined }], ran: 1 },
  'one before-hook returning a promise': { hooks: [{ name: 'audit', before: () => Promise.resolve(undefined) }], ran: 1 },
  'nothing configured, another runtime': { hooks: undefined, ran: 0 },
};

/** One comparison, in this process: the baseline and one subject, paired round by round. */
async function comparison(subjectName) {
  const subject = SUBJECTS[subjectName];
  const execute = async (input) => ({ ok: true, output: { greeting: `hi ${input.name}` } });
  const tool = {
    descriptor: { name: 'bench.greet', description: 'Greets.', source: 'custom', capability: { writes: false, openWorld: false }, inputSchema, outputSchema },
    execute: (input) => execute(input),
  };
  const baseline = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger: silentLogger });
  const configured = new ToolRuntime({
    sources: [new InMemoryToolSource([tool])],
    logger: silentLogger,
    ...(subject.hooks === undefined ? {} : { hooks: subject.hooks }),
  });
  await baseline.listTools();
  await configured.listTools();
  const input = { name: 'Ada', count: 3 };
  // The subject does what it says: its hooks ran around the call, or none did.
  const probe = await configured.execute('bench.greet', input, configured.createPlan());
  if ((probe.trace.hooks?.length ?? 0) !== subject.ran) throw new Error(`${subjectName}: ${probe.trace.hooks?.length ?? 0} hooks ran, not ${subject.ran}`);
  // Plans of 1,000 executions, as in runtime.bench.js: creating and ending them is part of the cost.
  const planned = (runtime) => {
    let ctx = runtime.createPlan();
    return async (index) => {
      if (index % 1_000 === 0) {
        await runtime.endPlan(ctx);
        ctx = runtime.createPlan();
      }
      return runtime.execute('bench.greet', input, ctx);
    };
  };
  const { medians, ratios } = await comparePaired(
    { baseline: { fn: planned(baseline) }, subject: { fn: planned(configured) } },
    { baseline: 'baseline', rounds: scaled(300, 3), iterations: scaled(1_000, 20), warmup: scaled(50_000, 100) },
  );
  return { baselineNs: medians.baseline, ratio: ratios.subject };
}

/** Runs each comparison in a child process and collects its figures. */
async function run() {
  const figures = {};
  for (const name of Object.keys(SUBJECTS)) {
    const child = spawnSync(process.execPath, ['--expose-gc', __filename, '--comparison', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (child.status !== 0) throw new Error(`the comparison '${name}' failed (exit ${child.status})`);
    figures[name] = JSON.parse(child.stdout.trim().split('\n').pop());
  }
  const noise = figures['nothing configured, another runtime'].ratio;
  const extra = (name) => figures[name].baselineNs * (figures[name].ratio - 1);
  const row = (name, title, target, pass, note) => {
    const { baselineNs, ratio } = figures[name];
    return { name: title, baseline: 'runtime.execute, no hook configured', baselineNs, subjectNs: baselineNs * ratio, ratio, target, pass, note };
  };
  return [
    row(
      'hooks for other tools',
      'runtime.execute, hooks configured for other tools only',
      'ratio ≤ 1.05',
      figures['hooks for other tools'].ratio <= 1.05,
      `a second runtime with nothing configured: ${noise.toFixed(3)}×`,
    ),
    row(
      'one synchronous before-hook',
      'runtime.execute, one synchronous before-hook (continue, traced)',
      '≤ +300 ns',
      extra('one synchronous before-hook') <= 300,
      `+${extra('one synchronous before-hook').toFixed(0)} ns per call`,
    ),
    row(
      'one synchronous after-hook',
      'runtime.execute, one synchronous after-hook (continue, traced)',
      '≤ +300 ns',
      extra('one synchronous after-hook') <= 300,
      `+${extra('one synchronous after-hook').toFixed(0)} ns per call`,
    ),
    row(
      'one before-hook returning a promise',
      'runtime.execute, one before-hook that returns a resolved promise',
      'report',
      true,
      `+${extra('one before-hook returning a promise').toFixed(0)} ns per call: the race with the hook's deadline and the plan's cancellation`,
    ),
  ];
}

module.exports = { run };

const flag = process.argv.indexOf('--comparison');
if (require.main === module && flag >= 0) {
  comparison(process.argv[flag + 1]).then(
    (figures) => process.stdout.write(`${JSON.stringify(figures)}\n`),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
} else {
  runWhenMain(module, run);
}
