'use strict';
// Tokens in the model's context, direct tool calls against code mode, on 26 tasks over a catalog
// of 116 tools (100 of BFCL and 16 of a made-up workspace; fixtures/code-mode/SOURCE.md),
// counted with a real tokenizer (gpt-tokenizer, o200k_base: GPT-4o's and later models').
//
// Both ways are driven by the same scripted model, and run every call through @ca/model-tools in
// the OpenAI Chat Completions format, in one plan of one runtime:
// - direct: the definitions of every tool of the plan (as `definitions('openai-chat')` sends
//   them), the user's question, each assistant message of tool calls (the calls a turn makes
//   together are one message), each tool result message, and the final answer;
// - code mode: the definitions a `codeMode` ModelTools sends (`code.run`, whose description
//   declares the tools as a TypeScript API, and the search), the same question, one call of
//   `code.run` holding the program, its result message (what the program returned and logged),
//   and the same final answer.
// The direct way's model does what the program does — it is the same source, run in Node with
// every tool call sent as a direct call and its result read back — so both ways make the same
// tool calls, and the bench fails unless both give the same answer. Each message is counted as
// the JSON the API request carries (the tokenizer has no count for a provider's own framing,
// which is a few tokens per message either way). Each thing is counted once, as it enters the
// context; a real loop sends the context again on every turn, which the `turns` note shows.
const assert = require('node:assert/strict');
const { encode } = require('gpt-tokenizer/encoding/o200k_base');
const { ToolRuntime } = require('../../packages/tool-lifecycle/dist/index.js');
const { createCustomAdapter, defineTool } = require('../../packages/adapters-custom/dist/index.js');
const { ModelTools } = require('../../packages/model-tools/dist/index.js');
const { catalog } = require('./fixtures/code-mode/tools');
const { tasks } = require('./fixtures/code-mode/tasks');
const { SMOKE, runWhenMain } = require('./harness');

/** Tasks with at least this many inner calls are the ones the target is for. */
const MANY_CALLS = 5;
const TARGET_FEWER = 0.6;

const tokens = (value) => encode(typeof value === 'string' ? value : JSON.stringify(value)).length;

const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor;

/**
 * The program of a task with the catalog's names (`repo.read_file(`) rewritten into the
 * identifiers code mode declares (`tools.<identifier>(`). Longest names first, so that
 * `get_exchange_rate_with_fee` is not read as `get_exchange_rate`.
 */
function programFor(task, identifiers) {
  let code = task.program.trim();
  const names = [...identifiers.keys()].sort((a, b) => b.length - a.length);
  for (const name of names) {
    const pattern = new RegExp(`(?<![\\w.$])${name.replace(/[.$]/g, (c) => `\\${c}`)}\\(`, 'g');
    code = code.replace(pattern, `tools.${identifiers.get(name)}(`);
  }
  return code;
}

/**
 * Runs a program in Node as the direct way's scripted model: each `tools.<identifier>(input)` is
 * a tool call the model sends; the calls made together (before the program waits) are one turn.
 */
async function runDirect({ program, identifiers, send }) {
  const byIdentifier = new Map([...identifiers].map(([name, identifier]) => [identifier, name]));
  let pending = [];
  const flush = async () => {
    const batch = pending;
    pending = [];
    const answers = await send(batch.map((entry) => ({ name: entry.name, input: entry.input })));
    batch.forEach((entry, index) => (answers[index].ok ? entry.resolve(answers[index].value) : entry.reject(answers[index].error)));
  };
  const tools = {};
  for (const [identifier, name] of byIdentifier) {
    tools[identifier] = (input) =>
      new Promise((resolve, reject) => {
        if (pending.length === 0) setImmediate(() => void flush().catch(reject));
        pending.push({ name, input, resolve, reject });
      });
  }
  return new AsyncFunction('tools', program)(tools);
}

async function measure(task, { runtime, direct, codeMode, definitionTokens, codeModeDefinitionTokens, providerNames, identifiers, plan }) {
  const program = programFor(task, identifiers);
  const user = tokens({ role: 'user', content: task.prompt });

  // The direct way: each call and each result enters the context.
  let callCounter = 0;
  let turns = 0;
  let context = 0;
  let perTurnResend = 0;
  const directResult = await runDirect({
    program,
    identifiers,
    send: async (calls) => {
      turns++;
      // What this turn's request carried before the model answered: everything so far.
      perTurnResend += definitionTokens + user + context;
      const toolCalls = calls.map((entry) => ({
        id: `call_${task.id}_${++callCounter}`,
        type: 'function',
        function: { name: providerNames.get(entry.name), arguments: JSON.stringify(entry.input) },
      }));
      context += tokens({ role: 'assistant', content: null, tool_calls: toolCalls });
      const answers = [];
      for (const toolCall of toolCalls) {
        const { message, outcome } = await direct.call('openai-chat', toolCall, plan);
        context += tokens(message);
        answers.push(
          outcome.ok
            ? { ok: true, value: outcome.result.output }
            : { ok: false, error: Object.assign(new Error(String(message.content)), { code: outcome.error?.code }) },
        );
      }
      return answers;
    },
  });
  const answer = tokens({ role: 'assistant', content: JSON.stringify(directResult) });
  perTurnResend += definitionTokens + user + context + answer;
  const directTokens = definitionTokens + user + context + answer;

  // Code mode: one call of code.run with the program, and its result.
  const tracesBefore = plan.traces.length;
  const codeCall = { id: `call_${task.id}_program`, type: 'function', function: { name: 'code_run', arguments: JSON.stringify({ code: program }) } };
  const { message, outcome } = await codeMode.call('openai-chat', codeCall, plan);
  if (!outcome.ok) throw new Error(`${task.id}: code.run failed: ${message.content}`);
  const codeResult = outcome.result.output.result;
  const innerCalls = plan.traces.slice(tracesBefore).filter((trace) => trace.toolName !== 'code.run').length;
  assert.deepEqual(codeResult, directResult, `${task.id}: code mode and direct calls gave different answers`);
  assert.equal(innerCalls, callCounter, `${task.id}: the program made ${innerCalls} calls, the direct way ${callCounter}`);
  const codeTokens =
    codeModeDefinitionTokens +
    user +
    tokens({ role: 'assistant', content: null, tool_calls: [codeCall] }) +
    tokens(message) +
    tokens({ role: 'assistant', content: JSON.stringify(codeResult) });
  void runtime;
  return { id: task.id, calls: callCounter, turns, directTokens, codeTokens, perTurnResend, programTokens: tokens(program) };
}

async function run() {
  const { createCodeMode, ToolNames } = require('../../packages/code-mode/dist/index.js');
  // code.run is a tool of the runtime whose calls go back into it: the runtime is made after it.
  const holder = {};
  const codeModeEngine = createCodeMode({ runtime: () => holder.runtime });
  const runtime = (holder.runtime = new ToolRuntime({
    sources: [createCustomAdapter({ tools: catalog().map((tool) => defineTool(tool)) }), codeModeEngine.source],
  }));
  const direct = new ModelTools(runtime);
  const codeMode = new ModelTools(runtime, { codeMode: { describe: () => codeModeEngine.description() } });
  const selected = SMOKE ? tasks.filter((_, index) => index % 5 === 0) : tasks;
  try {
    return await runtime.runPlan({ policy: { readOnly: false, requireCheckpoint: false } }, async (plan) => {
      // The direct way is given every tool but the program tool; code mode, the program tool alone.
      const definitions = await direct.definitions('openai-chat', plan, { include: (name) => name !== codeModeEngine.toolName });
      const codeModeDefinitions = await codeMode.definitions('openai-chat', plan);
      const providerNames = new Map((await direct.tools(plan)).map((tool) => [tool.name, tool.providerName]));
      const visible = (await runtime.listTools()).map((tool) => tool.name).filter((name) => name !== codeModeEngine.toolName);
      const names = new ToolNames(visible);
      const identifiers = new Map(visible.map((name) => [name, names.identOf(name)]));
      const shared = {
        runtime,
        direct,
        codeMode,
        plan,
        providerNames,
        identifiers,
        definitionTokens: tokens(definitions),
        codeModeDefinitionTokens: tokens(codeModeDefinitions),
      };
      const results = [];
      for (const task of selected) results.push(await measure(task, shared));
      return rows(results, shared, definitions.length);
    });
  } finally {
    await codeModeEngine.close();
  }
}

function percentFewer(direct, code) {
  return `${Math.round((1 - code / direct) * 100)}% fewer`;
}

function rows(results, shared, toolCount) {
  const sum = (list, field) => list.reduce((total, entry) => total + entry[field], 0);
  const many = results.filter((entry) => entry.calls >= MANY_CALLS);
  const out = [];
  const summary = (name, list, target) => {
    const direct = sum(list, 'directTokens');
    const code = sum(list, 'codeTokens');
    const fewer = 1 - code / direct;
    out.push({
      name,
      baseline: 'direct tool calls (tokens in context)',
      baselineValue: `${direct} tokens`,
      subjectValue: `${code} tokens`,
      ratio: code / direct,
      target,
      pass: SMOKE || target === 'report' || fewer >= TARGET_FEWER,
      note: `${list.length} tasks, ${sum(list, 'calls')} inner calls; ${percentFewer(direct, code)}`,
    });
  };
  summary(`code mode tokens, tasks with ≥ ${MANY_CALLS} inner calls (${toolCount} tools)`, many, `≥ ${TARGET_FEWER * 100}% fewer`);
  summary(`code mode tokens, every task (${toolCount} tools)`, results, 'report');
  for (const entry of results) {
    const targeted = entry.calls >= MANY_CALLS;
    const fewer = 1 - entry.codeTokens / entry.directTokens;
    out.push({
      name: `code mode tokens: ${entry.id}`,
      baseline: 'direct tool calls (tokens in context)',
      baselineValue: `${entry.directTokens} tokens`,
      subjectValue: `${entry.codeTokens} tokens`,
      ratio: entry.codeTokens / entry.directTokens,
      target: targeted ? `≥ ${TARGET_FEWER * 100}% fewer` : 'report',
      pass: SMOKE || !targeted || fewer >= TARGET_FEWER,
      note: `${entry.calls} calls in ${entry.turns} turns (${entry.perTurnResend} tokens sent over the turns); program ${entry.programTokens} tokens; ${percentFewer(entry.directTokens, entry.codeTokens)}`,
    });
  }
  out.push({
    name: 'code mode tokens: the definitions alone',
    baseline: `the ${toolCount} tools' OpenAI Chat definitions`,
    baselineValue: `${shared.definitionTokens} tokens`,
    subjectValue: `${shared.codeModeDefinitionTokens} tokens`,
    ratio: shared.codeModeDefinitionTokens / shared.definitionTokens,
    target: 'report',
    pass: true,
    note: `${(shared.codeModeDefinitionTokens / toolCount).toFixed(1)} tokens a tool in code mode, ${(shared.definitionTokens / toolCount).toFixed(1)} direct`,
  });
  return out;
}

module.exports = { run, programFor, runDirect };
runWhenMain(module, run);
