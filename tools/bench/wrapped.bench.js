'use strict';
// Overhead of @ca/adapters-wrapped: runtime.execute of a tool wrapped with
// wrapTool and one pass-through middleware, against runtime.execute of the
// same bare tool, in one runtime and one run. Also the direct call of the
// wrapper against the direct call of the tool. Target: report only.
const { ToolRuntime, silentLogger } = require('../../packages/tool-lifecycle/dist/index.js');
const { InMemoryToolSource } = require('../../packages/tool-lifecycle/dist/testing/index.js');
const { createWrappedAdapter, wrapTool } = require('../../packages/adapters-wrapped/dist/index.js');
const { compare, runWhenMain } = require('./harness');

const inputSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, count: { type: 'integer' } },
  required: ['name', 'count'],
  additionalProperties: false,
};

async function run() {
  const execute = async (input) => ({ ok: true, output: { greeting: `hi ${input.name}` } });
  // A plain ToolInstance (not TestTool, which records every call) so neither side allocates more than it must.
  const bare = {
    descriptor: Object.freeze({
      name: 'bench.greet',
      description: 'Greets.',
      source: 'custom',
      capability: { writes: false, checkpointable: false, idempotent: true, destructive: false, openWorld: false },
      inputSchema,
    }),
    execute,
  };
  const passThrough = (next, input, ctx, options) => next(input, ctx, options);
  const wrapped = wrapTool(bare, { name: 'bench.greet-wrapped', wrapExecute: passThrough });
  const runtime = new ToolRuntime({
    sources: [new InMemoryToolSource([bare]), createWrappedAdapter({ tools: [wrapped] })],
    logger: silentLogger,
  });
  const input = { name: 'Ada', count: 3 };
  await runtime.listTools();
  let ctx = runtime.createPlan();
  const fresh = async () => {
    await runtime.endPlan(ctx);
    ctx = runtime.createPlan();
  };
  const direct = runtime.createPlan();
  const medians = await compare(
    {
      'bare tool': { async: true, fn: () => runtime.execute('bench.greet', input, ctx), setup: fresh },
      'wrapped tool': { async: true, fn: () => runtime.execute('bench.greet-wrapped', input, ctx), setup: fresh },
      'bare direct': { async: true, fn: () => bare.execute(input, direct) },
      'wrapped direct': { async: true, fn: () => wrapped.execute(input, direct) },
    },
    { rounds: 25, iterations: 20_000, warmup: 50_000 },
  );
  await runtime.endPlan(ctx);
  const overhead = medians['wrapped tool'] - medians['bare tool'];
  return [
    {
      name: 'runtime.execute of wrapTool + 1 middleware',
      baseline: 'runtime.execute of the bare tool',
      baselineNs: medians['bare tool'],
      subjectNs: medians['wrapped tool'],
      note: `overhead ${overhead.toFixed(0)} ns/call`,
      target: 'report',
      pass: true,
    },
    {
      name: 'wrapper.execute (direct, 1 middleware)',
      baseline: 'tool.execute (direct)',
      baselineNs: medians['bare direct'],
      subjectNs: medians['wrapped direct'],
      target: 'report',
      pass: true,
    },
  ];
}

module.exports = { run };
runWhenMain(module, run);
