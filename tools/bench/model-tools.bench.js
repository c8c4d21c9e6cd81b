'use strict';
// The front door (@ca/model-tools), in one process and one run:
// 1. its cost per call over runtime.execute: a provider's tool call (OpenAI
//    Chat Completions) parsed, its name mapped back, its arguments checked for
//    repair, runtime.execute, the result rendered as a tool message — against
//    runtime.execute of the same tool with the same input. Target: at most
//    1 µs more per call.
// 2. each framework's tool execution through the runtime (our tools) against
//    the same framework's own tool() around the same function: the AI SDK
//    (execute), the OpenAI Agents SDK (invoke, which parses the JSON text) and
//    LangChain (invoke, which validates the input). Report: the difference is
//    the runtime's pipeline (policy, validation, trace, …) plus the bridge.
const { ToolRuntime, silentLogger } = require('../../packages/tool-lifecycle/dist/index.js');
const { InMemoryToolSource } = require('../../packages/tool-lifecycle/dist/testing/index.js');
const { ModelTools } = require('../../packages/model-tools/dist/index.js');
const { createAiSdkTools } = require('../../packages/model-tools/dist/ai-sdk/index.js');
const { createOpenAiAgentsTools } = require('../../packages/model-tools/dist/openai-agents/index.js');
const { createLangChainTools } = require('../../packages/model-tools/dist/langchain/index.js');
const { compare, runWhenMain } = require('./harness');

const inputSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, count: { type: 'integer' } },
  required: ['name', 'count'],
  additionalProperties: false,
};
const greet = async (input) => ({ greeting: `hi ${input.name}` });

async function run() {
  // A plain ToolInstance, so that nothing but the pipeline is measured.
  const bare = {
    descriptor: Object.freeze({
      name: 'bench.greet',
      description: 'Greets.',
      source: 'custom',
      capability: { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false },
      inputSchema,
    }),
    execute: async (input) => ({ ok: true, output: await greet(input) }),
  };
  const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([bare])], logger: silentLogger });
  await runtime.listTools();
  const bridge = new ModelTools(runtime, { callIdAsStep: false });
  const input = { name: 'Ada', count: 3 };
  const call = { id: 'call_1', type: 'function', function: { name: 'bench_greet', arguments: '{"name":"Ada","count":3}' } };
  let ctx = runtime.createPlan();
  const fresh = async () => {
    await runtime.endPlan(ctx);
    ctx = runtime.createPlan();
  };
  const door = await compare(
    {
      'runtime.execute': { async: true, fn: () => runtime.execute('bench.greet', input, ctx), setup: fresh },
      'modelTools.call': { async: true, fn: () => bridge.call('openai-chat', call, ctx), setup: fresh },
    },
    { rounds: 25, iterations: 20_000, warmup: 50_000 },
  );

  // The frameworks' own tools around the same function, and ours, in one plan per round.
  const { tool: aiTool, jsonSchema } = await import('ai');
  const agents = require('@openai/agents');
  const { tool: langChainTool } = require('@langchain/core/tools');
  const plan = runtime.createPlan();
  const [aiTools, agentsTools, langChainTools] = await Promise.all([
    createAiSdkTools(new ModelTools(runtime, { callIdAsStep: false }), plan),
    createOpenAiAgentsTools(new ModelTools(runtime, { callIdAsStep: false }), plan),
    createLangChainTools(new ModelTools(runtime, { callIdAsStep: false }), plan),
  ]);
  const ownAi = aiTool({ description: 'Greets.', inputSchema: jsonSchema(inputSchema), execute: greet });
  const ownAgents = agents.tool({ name: 'bench_greet', description: 'Greets.', parameters: { ...inputSchema }, strict: true, execute: greet });
  const ownLangChain = langChainTool(greet, { name: 'bench_greet', description: 'Greets.', schema: inputSchema });
  const runContext = new agents.RunContext();
  const aiOptions = { toolCallId: 'c1', messages: [], context: undefined };
  const text = JSON.stringify(input);
  const frameworks = await compare(
    {
      'ai own': { async: true, fn: () => ownAi.execute(input, aiOptions) },
      'ai ours': { async: true, fn: () => aiTools.bench_greet.execute(input, aiOptions) },
      'agents own': { async: true, fn: () => ownAgents.invoke(runContext, text) },
      'agents ours': { async: true, fn: () => agentsTools[0].invoke(runContext, text) },
      'langchain own': { async: true, fn: () => ownLangChain.invoke(input) },
      'langchain ours': { async: true, fn: () => langChainTools[0].invoke(input) },
    },
    { rounds: 15, iterations: 3_000, warmup: 10_000 },
  );
  await runtime.endPlan(plan);
  await runtime.endPlan(ctx);

  const overhead = door['modelTools.call'] - door['runtime.execute'];
  const frameworkRow = (label, own, ours) => ({
    name: `${label}: a call of one of our tools`,
    baseline: `${label}: its own tool() around the same function`,
    baselineNs: frameworks[own],
    subjectNs: frameworks[ours],
    note: `+${((frameworks[ours] - frameworks[own]) / 1000).toFixed(2)} µs/call; runtime.execute alone ${(door['runtime.execute'] / 1000).toFixed(2)} µs`,
    target: 'report',
    pass: true,
  });
  return [
    {
      name: 'modelTools.call (OpenAI Chat: parse, map, repair check, execute, render)',
      baseline: 'runtime.execute of the same tool and input',
      baselineNs: door['runtime.execute'],
      subjectNs: door['modelTools.call'],
      note: `overhead ${overhead.toFixed(0)} ns/call`,
      target: '≤ +1 µs',
      pass: process.env.BENCH_SMOKE === '1' || overhead <= 1_000,
    },
    frameworkRow('AI SDK 7 execute', 'ai own', 'ai ours'),
    frameworkRow('OpenAI Agents 0.20 invoke', 'agents own', 'agents ours'),
    frameworkRow('LangChain 1.x invoke', 'langchain own', 'langchain ours'),
  ];
}

module.exports = { run };
runWhenMain(module, run);
