'use strict';
// What approval costs runtime.execute of a trivial tool (input and output
// schemas), in one run: the same runtime and tool with no approval
// configured; with approval configured (a handler, rules for other tools,
// and plans whose policy asks before tools that write) but not triggered,
// since the tool does not write; and with every call asked of a handler
// that approves at once. Targets: not triggered costs the same as nothing
// configured (ratio ≤ 1.05); an auto-approving handler adds at most 0.5 µs.
const { ToolRuntime, silentLogger } = require('../../packages/tool-lifecycle/dist/index.js');
const { InMemoryToolSource } = require('../../packages/tool-lifecycle/dist/testing/index.js');
const { compare, runWhenMain } = require('./harness');

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
  const handler = { requestApproval: () => Promise.resolve(approveAtOnce) };
  const plain = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger: silentLogger });
  const configured = new ToolRuntime({
    sources: [new InMemoryToolSource([tool])],
    logger: silentLogger,
    approvalHandler: handler,
    options: {
      rules: [
        { name: 'no-env-files', decision: 'deny', tools: 'builtin.fs.*', arguments: { '/path': { glob: '*.env' } } },
        { name: 'ask-on-push', decision: 'ask', tools: 'builtin.command.run', arguments: { '/command/1': { equals: 'push' } } },
      ],
    },
  });
  const input = { name: 'Ada', count: 3 };
  await plain.listTools();
  await configured.listTools();
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
    'configured, not triggered': planned(configured, asksForWrites),
    'auto-approving handler': planned(configured, asksAlways),
  };
  // Each case checks once that it does what it says.
  const probe = configured.createPlan({ policy: asksAlways });
  const approved = await configured.execute('bench.greet', input, probe);
  if (approved.trace.approval?.decision !== 'approved') throw new Error('the auto-approving case is not asked');
  const quiet = configured.createPlan({ policy: asksForWrites });
  if ((await configured.execute('bench.greet', input, quiet)).trace.approval !== undefined) throw new Error('the not-triggered case is asked');

  const medians = await compare(
    Object.fromEntries(Object.entries(cases).map(([name, fn]) => [name, { async: true, fn }])),
    { rounds: 21, iterations: 20_000, warmup: 50_000 },
  );
  const base = medians['no approval configured'];
  const idle = medians['configured, not triggered'];
  const asked = medians['auto-approving handler'];
  return [
    {
      name: 'runtime.execute, approval configured but not triggered',
      baseline: 'runtime.execute, no approval configured',
      baselineNs: base,
      subjectNs: idle,
      target: 'ratio ≤ 1.05',
      pass: idle / base <= 1.05,
    },
    {
      name: 'runtime.execute, every call approved by a handler that answers at once',
      baseline: 'runtime.execute, no approval configured',
      baselineNs: base,
      subjectNs: asked,
      note: `+${(asked - base).toFixed(0)} ns per call`,
      target: '≤ +500 ns',
      pass: asked - base <= 500,
    },
  ];
}

module.exports = { run };
runWhenMain(module, run);
