'use strict';
// What approval costs runtime.execute of a trivial tool (input and output
// schemas), against the same execute with no approval configured:
//  - approval configured but not triggered: a handler, rules for other tools,
//    and plans whose policy asks before tools that write or destroy, while
//    the tool does neither;
//  - every call asked of a handler that approves at once, returning the
//    decision itself (a handler that decides by itself);
//  - the same with a handler that returns a resolved promise (a handler that
//    asks someone: the runtime then races the answer with cancellation);
//  - a second runtime with nothing configured, to show the noise.
// Each comparison runs in a process of its own, with only its two runtimes:
// a service has one configuration, and code that has seen five differently
// configured runtimes in one process is slower for all of them. Within a
// process, many short rounds alternate the two cases and each case is taken
// against the baseline of its own round.
// Targets: not triggered costs the same as nothing configured (ratio ≤ 1.05);
// an auto-approving handler adds at most 0.5 µs.
const { spawnSync } = require('node:child_process');
const { ToolRuntime, silentLogger } = require('../../packages/tool-lifecycle/dist/index.js');
const { InMemoryToolSource } = require('../../packages/tool-lifecycle/dist/testing/index.js');
const { GREET_SCHEMAS, comparePaired, runWhenMain, scaled } = require('./harness');

const { inputSchema, outputSchema } = GREET_SCHEMAS;
const rules = [
  { name: 'no-env-files', decision: 'deny', tools: 'builtin.fs.*', arguments: { '/path': { glob: '*.env' } } },
  { name: 'ask-on-push', decision: 'ask', tools: 'builtin.command.run', arguments: { '/command/1': { equals: 'push' } } },
];
const approveAtOnce = Object.freeze({ decision: 'approve' });
const asksBeforeWrites = { approval: { capabilities: ['writes', 'destructive'] } };
const asksAlways = { approval: { always: true } };

/** The subject of each comparison: how its runtime is configured and which policy its plans have. */
const SUBJECTS = {
  'configured, not triggered': {
    settings: { approvalHandler: { requestApproval: () => approveAtOnce }, options: { rules } },
    policy: asksBeforeWrites,
    asked: false,
  },
  'handler returns the decision': {
    settings: { approvalHandler: { requestApproval: () => approveAtOnce }, options: { rules } },
    policy: asksAlways,
    asked: true,
  },
  'handler returns a promise': {
    settings: { approvalHandler: { requestApproval: () => Promise.resolve(approveAtOnce) }, options: { rules } },
    policy: asksAlways,
    asked: true,
  },
  'nothing configured, another runtime': { settings: {}, policy: undefined, asked: false },
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
  const configured = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger: silentLogger, ...subject.settings });
  await baseline.listTools();
  await configured.listTools();
  const input = { name: 'Ada', count: 3 };
  // The subject does what it says: asked (and approved) or not asked at all.
  const probe = await configured.execute('bench.greet', input, configured.createPlan(subject.policy === undefined ? {} : { policy: subject.policy }));
  if ((probe.trace.approval?.decision === 'approved') !== subject.asked) throw new Error(`${subjectName}: the call was ${subject.asked ? 'not ' : ''}asked`);
  // Plans of 1,000 executions, as in runtime.bench.js: creating and ending them is part of the cost.
  const planned = (runtime, policy) => {
    let ctx = runtime.createPlan(policy === undefined ? {} : { policy });
    return async (index) => {
      if (index % 1_000 === 0) {
        await runtime.endPlan(ctx);
        ctx = runtime.createPlan(policy === undefined ? {} : { policy });
      }
      return runtime.execute('bench.greet', input, ctx);
    };
  };
  const { medians, ratios } = await comparePaired(
    { baseline: { fn: planned(baseline) }, subject: { fn: planned(configured, subject.policy) } },
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
  const row = (name, title, target, pass, note) => {
    const { baselineNs, ratio } = figures[name];
    return { name: title, baseline: 'runtime.execute, no approval configured', baselineNs, subjectNs: baselineNs * ratio, ratio, target, pass, note };
  };
  const noise = figures['nothing configured, another runtime'].ratio;
  const extra = (name) => figures[name].baselineNs * (figures[name].ratio - 1);
  return [
    row(
      'configured, not triggered',
      'runtime.execute, approval configured but not triggered',
      'ratio ≤ 1.05',
      figures['configured, not triggered'].ratio <= 1.05,
      `a second runtime with nothing configured: ${noise.toFixed(3)}×`,
    ),
    row(
      'handler returns the decision',
      'runtime.execute, every call approved by a handler that returns the decision',
      '≤ +500 ns',
      extra('handler returns the decision') <= 500,
      `+${extra('handler returns the decision').toFixed(0)} ns per call`,
    ),
    row(
      'handler returns a promise',
      'runtime.execute, every call approved by a handler that returns a resolved promise',
      'report',
      true,
      `+${extra('handler returns a promise').toFixed(0)} ns per call: the race with cancellation, and the promise's turns`,
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
