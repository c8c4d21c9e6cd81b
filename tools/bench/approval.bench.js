'use strict';
// What approval costs runtime.execute of a trivial tool (input and output
// schemas), in one run: the same tool in a runtime with no approval
// configured (twice: two runtimes, to show the noise between identical
// cases); with approval configured (a handler, rules for other tools, and
// plans whose policy asks before tools that write) but not triggered, since
// the tool does not write; and with every call asked of a handler that
// approves at once, returning the decision itself or a resolved promise.
// Targets: not triggered costs the same as nothing configured (ratio ≤ 1.05);
// an auto-approving handler adds at most 0.5 µs.
const { ToolRuntime, silentLogger } = require('../../packages/tool-lifecycle/dist/index.js');
const { InMemoryToolSource } = require('../../packages/tool-lifecycle/dist/testing/index.js');
const { comparePaired, runWhenMain } = require('./harness');

const inputSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, count: { type: 'integer' } },
  required: ['name', 'count'],
  additionalProperties: false,
};
const outputSchema = { type: 'object', properties: { greeting: { type: 'string' } }, required: ['greeting'] };

async function run() {
  const execute = async (input) => ({ ok: true, output: { greeting: `hi ${input.name}` } });
  const tool = {
    descriptor: { name: 'bench.greet', description: 'Greets.', source: 'custom', capability: { writes: false, openWorld: false }, inputSchema, outputSchema },
    execute: (input) => execute(input),
  };
  const approveAtOnce = { decision: 'approve' };
  const rules = [
    { name: 'no-env-files', decision: 'deny', tools: 'builtin.fs.*', arguments: { '/path': { glob: '*.env' } } },
    { name: 'ask-on-push', decision: 'ask', tools: 'builtin.command.run', arguments: { '/command/1': { equals: 'push' } } },
  ];
  const runtimeWith = (settings) => new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger: silentLogger, ...settings });
  const plain = runtimeWith({});
  const plainAgain = runtimeWith({});
  // A handler that decides by itself returns the decision; one that asks someone returns a promise.
  const configured = runtimeWith({ approvalHandler: { requestApproval: () => approveAtOnce }, options: { rules } });
  const promised = runtimeWith({ approvalHandler: { requestApproval: () => Promise.resolve(approveAtOnce) }, options: { rules } });
  const input = { name: 'Ada', count: 3 };
  for (const runtime of [plain, plainAgain, configured, promised]) await runtime.listTools();
  const asksForWrites = { approval: { capabilities: ['writes', 'destructive'] } };
  const asksAlways = { approval: { always: true } };
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
  const cases = {
    'no approval configured': planned(plain),
    'no approval configured, another runtime': planned(plainAgain),
    'configured, not triggered': planned(configured, asksForWrites),
    'handler answers with the decision': planned(configured, asksAlways),
    'handler answers with a promise': planned(promised, asksAlways),
  };
  // Each case checks once that it does what it says.
  for (const runtime of [configured, promised]) {
    const approved = await runtime.execute('bench.greet', input, runtime.createPlan({ policy: asksAlways }));
    if (approved.trace.approval?.decision !== 'approved') throw new Error('an auto-approving case is not asked');
  }
  if ((await configured.execute('bench.greet', input, configured.createPlan({ policy: asksForWrites }))).trace.approval !== undefined) {
    throw new Error('the not-triggered case is asked');
  }

  // Many short interleaved rounds, each case against the baseline of its own round: the
  // drift of a shared machine is larger than the differences measured.
  const { medians, ratios } = await comparePaired(
    Object.fromEntries(Object.entries(cases).map(([name, fn]) => [name, { fn }])),
    { baseline: 'no approval configured', rounds: 300, iterations: 1_000, warmup: 50_000 },
  );
  const base = medians['no approval configured'];
  const noise = ratios['no approval configured, another runtime'];
  const idle = base * ratios['configured, not triggered'];
  const decided = base * ratios['handler answers with the decision'];
  const promisedNs = base * ratios['handler answers with a promise'];
  return [
    {
      name: 'runtime.execute, approval configured but not triggered',
      baseline: 'runtime.execute, no approval configured',
      baselineNs: base,
      subjectNs: idle,
      note: `a second runtime with nothing configured: ${noise.toFixed(3)}×`,
      ratio: idle / base,
      target: 'ratio ≤ 1.05',
      pass: idle / base <= 1.05,
    },
    {
      name: 'runtime.execute, every call approved by a handler that returns the decision',
      baseline: 'runtime.execute, no approval configured',
      baselineNs: base,
      subjectNs: decided,
      note: `+${(decided - base).toFixed(0)} ns per call`,
      target: '≤ +500 ns',
      pass: decided - base <= 500,
    },
    {
      name: 'runtime.execute, every call approved by a handler that returns a resolved promise',
      baseline: 'runtime.execute, no approval configured',
      baselineNs: base,
      subjectNs: promisedNs,
      note: `+${(promisedNs - base).toFixed(0)} ns per call: the race with cancellation and two more microtask turns`,
      target: 'report',
      pass: true,
    },
  ];
}

module.exports = { run };
runWhenMain(module, run);
