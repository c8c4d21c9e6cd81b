'use strict';
// runtime.execute of a trivial tool with input and output schemas, against a
// direct call of the tool and against ajv-validate + call, in one run; and
// the heap left behind by 100,000 sequential plans.
const Ajv2020 = require('ajv/dist/2020').default;
const { ToolRuntime, silentLogger } = require('../../packages/tool-lifecycle/dist/index.js');
const { InMemoryToolSource } = require('../../packages/tool-lifecycle/dist/testing/index.js');
const { GREET_SCHEMAS, compare, heapAfterGc, runWhenMain, scaled } = require('./harness');

const { inputSchema, outputSchema } = GREET_SCHEMAS;

async function run() {
  const execute = async (input) => ({ ok: true, output: { greeting: `hi ${input.name}` } });
  // A plain ToolInstance: what an adapter hands the runtime, with nothing recorded.
  const tool = {
    descriptor: { name: 'bench.greet', description: 'Greets.', source: 'custom', capability: { writes: false }, inputSchema, outputSchema },
    execute: (input) => execute(input),
  };
  const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger: silentLogger });
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const validateInput = ajv.compile(inputSchema);
  const validateOutput = ajv.compile(outputSchema);
  const input = { name: 'Ada', count: 3 };
  await runtime.listTools();
  // Plans of 1,000 executions: creating and ending the plans is part of the
  // measured cost. A second case keeps every trace of a round in one plan of
  // 20,000 executions, where retaining the traces (the context records every
  // execution) adds garbage-collection work.
  let ctx = runtime.createPlan();
  let longPlan = runtime.createPlan();
  const freshLongPlan = async () => {
    await runtime.endPlan(longPlan);
    longPlan = runtime.createPlan();
  };
  const medians = await compare(
    {
      direct: { async: true, fn: () => execute(input) },
      'ajv + call': {
        async: true,
        fn: async () => {
          if (!validateInput(input)) throw new Error('invalid');
          const result = await execute(input);
          if (!validateOutput(result.output)) throw new Error('invalid');
          return result;
        },
      },
      'runtime.execute': {
        async: true,
        fn: async (index) => {
          if (index % 1_000 === 0) {
            await runtime.endPlan(ctx);
            ctx = runtime.createPlan();
          }
          return runtime.execute('bench.greet', input, ctx);
        },
      },
      'runtime.execute, one long plan': { async: true, fn: () => runtime.execute('bench.greet', input, longPlan), setup: freshLongPlan },
    },
    { rounds: 15, iterations: 20_000, warmup: 50_000 },
  );
  await runtime.endPlan(ctx);
  await runtime.endPlan(longPlan);

  // Memory: 100,000 sequential plans, each one execution, then GC.
  const sequentialPlans = scaled(100_000, 50);
  for (let index = 0; index < scaled(2_000, 20); index++) {
    const plan = runtime.createPlan();
    await runtime.execute('bench.greet', input, plan);
    await runtime.endPlan(plan);
  }
  const before = heapAfterGc();
  for (let index = 0; index < sequentialPlans; index++) {
    const plan = runtime.createPlan();
    await runtime.execute('bench.greet', input, plan);
    await runtime.endPlan(plan);
  }
  const after = heapAfterGc();
  const growthMb = (after - before) / 1024 / 1024;

  return [
    {
      name: 'runtime.execute (input+output schemas), plans of 1,000 executions',
      baseline: 'direct call',
      baselineNs: medians.direct,
      subjectNs: medians['runtime.execute'],
      note: `ajv + call ${medians['ajv + call'].toFixed(0)} ns`,
      target: 'median ≤ 1,500 ns/execute',
      pass: medians['runtime.execute'] <= 1_500,
    },
    {
      name: 'runtime.execute, one plan holding 20,000 traces',
      baseline: 'plans of 1,000 executions',
      baselineNs: medians['runtime.execute'],
      subjectNs: medians['runtime.execute, one long plan'],
      target: 'report',
      pass: true,
    },
    {
      name: 'runtime.execute vs ajv + call',
      baseline: 'ajv validate + call',
      baselineNs: medians['ajv + call'],
      subjectNs: medians['runtime.execute'],
      target: 'report',
      pass: true,
    },
    {
      name: `heap growth after ${sequentialPlans.toLocaleString('en-US')} sequential plans`,
      baseline: 'heap after warm-up',
      baselineValue: `${(before / 1024 / 1024).toFixed(1)} MB`,
      subjectValue: `+${growthMb.toFixed(2)} MB`,
      target: '< 5 MB',
      pass: growthMb < 5,
    },
  ];
}

module.exports = { run };
runWhenMain(module, run);
