// The same programs through every door code mode has: the AI SDK's tool loop, the OpenAI Agents
// SDK's run loop, LangChain's agent, and an MCP client of `agents mcp serve --code-mode` (the
// built command, over stdio). Each door is given code.run (and tools.search) instead of the 116
// tools of the token benchmark's catalog; a scripted model sends each program as one call of
// code.run. Every door must give the same result and the same inner calls, each traced with the
// code.run execution as its parent. And examples/code-mode.mjs, run as a process.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCustomAdapter, defineTool } from '@ca/adapters-custom';
import { createCodeMode, ToolNames, type CodeMode } from '@ca/code-mode';
import { ModelTools } from '@ca/model-tools';
import { createAiSdkTools } from '@ca/model-tools/ai-sdk';
import { createLangChainTools } from '@ca/model-tools/langchain';
import { createOpenAiAgentsTools } from '@ca/model-tools/openai-agents';
import type { PlanContext, ToolExecutionTrace } from '@ca/tool-context';
import { ToolRuntime, silentLogger } from '@ca/tool-lifecycle';
import { AIMessage } from '@langchain/core/messages';
import { ScriptedChatModel } from './support/scripted-chat-model';
import { MemorySaver } from '@langchain/langgraph';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Agent, run } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { createAgent } from 'langchain';

const root = path.resolve(__dirname, '..', '..', '..');

const fixtures = require('./__fixtures__/code-mode/tools') as {
  catalog: () => Parameters<typeof defineTool>[0][];
  tasks: { id: string; program: string }[];
  programFor: (task: { program: string }, identifiers: Map<string, string>) => string;
};
const { catalog, tasks, programFor } = fixtures;

jest.setTimeout(240_000);

const CHOSEN = ['top-eu-customers-in-eur', 'flaky-ci-jobs', 'duplicate-open-issues', 'gold-customers-open-orders', 'deprecated-api-issues'];
/** A failed inner call the program catches: every door must hand it the same coded error. */
const CAUGHT = `try { await tools.inventory_get_stock({ sku: 'SKU-999' }); return 'no error'; } catch (error) { return { code: error.code, toolName: error.toolName }; }`;

/** The programs, with the catalog's names rewritten into code mode's identifiers. */
function programs(): { id: string; code: string }[] {
  const names = catalog()
    .map((tool) => tool.name as string)
    .concat('tools.search');
  const map = new ToolNames(names);
  const identifiers = new Map(names.map((name) => [name, map.identOf(name) as string]));
  return [
    ...tasks.filter((task) => CHOSEN.includes(task.id)).map((task) => ({ id: task.id, code: programFor(task, identifiers) })),
    { id: 'caught-failure', code: CAUGHT },
  ];
}

/** What a door is compared on: each program's result, and its inner calls (tool, outcome), sorted. */
interface Outcome {
  readonly results: Record<string, unknown>;
  readonly inner: Record<string, string[]>;
}

/** The inner calls of each code.run execution, by program (the code.run executions in program order). */
function innerCalls(traces: readonly ToolExecutionTrace[], ids: readonly string[]): Record<string, string[]> {
  const runs = traces.filter((trace) => trace.toolName === 'code.run');
  expect(runs).toHaveLength(ids.length);
  const ordered = [...runs].sort((a, b) => (a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : 0));
  return Object.fromEntries(
    ordered.map((runTrace, index) => [
      ids[index],
      traces
        .filter((trace) => trace.parentExecutionId === runTrace.executionId)
        .map((trace) => `${trace.toolName} ${trace.success ? 'ok' : trace.error?.code}`)
        .sort(),
    ]),
  );
}

/** An in-process runtime over the catalog with code mode, as the command builds it (code.run and tools.search). */
function inProcess(): { runtime: ToolRuntime; codeMode: CodeMode; modelTools: ModelTools } {
  const holder: { runtime?: ToolRuntime } = {};
  const codeMode = createCodeMode({ runtime: () => holder.runtime as ToolRuntime });
  const runtime = new ToolRuntime({
    sources: [createCustomAdapter({ tools: catalog().map((tool) => defineTool(tool)) }), codeMode.source],
    logger: silentLogger,
    options: { searchTool: true },
  });
  holder.runtime = runtime;
  return { runtime, codeMode, modelTools: new ModelTools(runtime, { codeMode: { describe: () => codeMode.description() } }) };
}

async function throughDoor(
  door: (plan: PlanContext, modelTools: ModelTools, program: { id: string; code: string }, index: number) => Promise<unknown>,
): Promise<Outcome> {
  const { runtime, codeMode, modelTools } = inProcess();
  const list = programs();
  try {
    return await runtime.runPlan({ policy: { readOnly: false, requireCheckpoint: false } }, async (plan) => {
      const results: Record<string, unknown> = {};
      for (const [index, program] of list.entries()) results[program.id] = await door(plan, modelTools, program, index);
      return {
        results,
        inner: innerCalls(
          plan.traces,
          list.map((program) => program.id),
        ),
      };
    });
  } finally {
    await codeMode.close();
  }
}

const resultOf = (text: unknown): unknown => (JSON.parse(String(text)) as { result?: unknown }).result;

const aiSdk = (): Promise<Outcome> =>
  throughDoor(async (plan, modelTools, program, index) => {
    const tools = await createAiSdkTools(modelTools, plan);
    expect(Object.keys(tools).sort()).toEqual(['code_run', 'tools_search']);
    const steps = [
      [{ type: 'tool-call' as const, toolCallId: `call_aisdk_${index}_Zp41`, toolName: 'code_run', input: JSON.stringify({ code: program.code }) }],
      [{ type: 'text' as const, text: 'done' }],
    ];
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        const content = steps.shift() ?? [{ type: 'text' as const, text: 'done' }];
        return {
          content,
          finishReason: { unified: content[0]?.type === 'tool-call' ? 'tool-calls' : 'stop', raw: undefined },
          usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
          warnings: [],
        } as never;
      },
    });
    const out = await generateText({ model, tools, prompt: program.id, stopWhen: stepCountIs(3), abortSignal: plan.signal });
    const result = out.steps[0]?.toolResults[0];
    expect(result).toBeDefined();
    return (result?.output as { result?: unknown }).result;
  });

const openAiAgents = (): Promise<Outcome> =>
  throughDoor(async (plan, modelTools, program, index) => {
    const model = new ScriptedModel([[functionCall('code_run', { code: program.code }, { callId: `call_agents_${index}_Qm7` })], [assistantMessage('done')]]);
    const agent = new Agent({ name: 'coder', instructions: 'Write programs.', model, tools: await createOpenAiAgentsTools(modelTools, plan) });
    const out = await run(agent, program.id, { signal: plan.signal });
    const item = out.newItems.find((entry) => entry.type === 'tool_call_output_item') as { output?: unknown } | undefined;
    return resultOf(item?.output);
  });

const langChain = (): Promise<Outcome> =>
  throughDoor(async (plan, modelTools, program, index) => {
    const toolCall = { id: `call_langchain_${index}_Rt2`, name: 'code_run', args: { code: program.code }, type: 'tool_call' as const };
    const model = new ScriptedChatModel([new AIMessage({ content: '', tool_calls: [toolCall] }), new AIMessage('done')]);
    const agent = createAgent({ model, tools: await createLangChainTools(modelTools, plan), checkpointer: new MemorySaver() });
    const out = (await agent.invoke(
      { messages: [{ role: 'user', content: program.id }] },
      { configurable: { thread_id: `t${index}` }, signal: plan.signal },
    )) as {
      messages: { getType(): string; content: unknown }[];
    };
    return resultOf(out.messages.find((message) => message.getType() === 'tool')?.content);
  });

async function mcpClient(): Promise<Outcome> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-code-mode-doors-'));
  const traces = path.join(folder, 'traces.jsonl');
  fs.writeFileSync(
    path.join(folder, 'agents.config.json'),
    JSON.stringify({ custom: { modules: [path.join(__dirname, '__fixtures__', 'code-mode', 'tools.js')] } }),
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(root, 'packages', 'cli', 'dist', 'bin.js'), 'mcp', 'serve', '--code-mode', '--traces', traces],
    cwd: folder,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', AGENTS_STATE_DIR: path.join(folder, 'state') },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'code-mode-doors', version: '1.0.0' });
  await client.connect(transport);
  try {
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['code.run', 'tools.search']);
    const list = programs();
    const results: Record<string, unknown> = {};
    for (const program of list) {
      const called = await client.callTool({ name: 'code.run', arguments: { code: program.code } });
      expect(called.isError).toBeFalsy();
      results[program.id] = (called.structuredContent as { result?: unknown }).result;
    }
    await client.close();
    const recorded = fs
      .readFileSync(traces, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as ToolExecutionTrace);
    return {
      results,
      inner: innerCalls(
        recorded,
        list.map((program) => program.id),
      ),
    };
  } finally {
    await client.close().catch(() => undefined);
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

describe('code mode through every front door', () => {
  it('the same programs give the same results and the same inner calls through the AI SDK, OpenAI Agents, LangChain and an MCP client of agents mcp serve --code-mode', async () => {
    const doors: Record<string, Outcome> = {
      'AI SDK': await aiSdk(),
      'OpenAI Agents': await openAiAgents(),
      LangChain: await langChain(),
      'MCP client': await mcpClient(),
    };
    const reference = doors['AI SDK'] as Outcome;
    // The programs did real work: results, and inner calls, including the caught failure.
    expect(reference.results['caught-failure']).toEqual({ code: 'TOOL_EXECUTION_FAILED', toolName: 'inventory.get_stock' });
    expect(reference.inner['flaky-ci-jobs']?.length).toBeGreaterThanOrEqual(5);
    expect(reference.inner['caught-failure']).toEqual(['inventory.get_stock TOOL_EXECUTION_FAILED']);
    expect((reference.results['deprecated-api-issues'] as { opened: unknown[] }).opened.length).toBeGreaterThan(0);
    for (const [door, outcome] of Object.entries(doors)) {
      expect({ door, results: outcome.results }).toEqual({ door, results: reference.results });
      expect({ door, inner: outcome.inner }).toEqual({ door, inner: reference.inner });
    }
  });

  it('examples/code-mode.mjs: one program, the first issue waits for approval, the program resumes by replay and no inner call runs twice', () => {
    const ran = spawnSync(process.execPath, [path.join(root, 'examples', 'code-mode.mjs'), '--json'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    expect(ran.stderr).toBe('');
    expect(ran.status).toBe(0);
    const summary = JSON.parse(ran.stdout) as {
      result: { since: string; changed: number; opened: { file: string; issue: number }[] };
      asked: { toolName: string }[];
      issues: { number: number; title: string; labels: string[] }[];
      traces: { toolName: string; success: boolean; parent: boolean; replayed: boolean; approval?: string }[];
    };
    expect(summary.result.since).toBe('v1.4.0');
    expect(summary.result.changed).toBe(14);
    // The file that calls legacyFetch but did not change since the release is not reported.
    expect(summary.result.opened.map((entry) => entry.file)).not.toContain('src/search/utils4.ts');
    expect(summary.asked.map((pending) => pending.toolName)).toEqual(['issues.open']);
    // Every issue the program reports was opened once, labelled by the wrapped tool.
    expect(summary.issues.map((issue) => issue.number)).toEqual(summary.result.opened.map((entry) => entry.issue));
    expect(summary.issues.every((issue) => issue.labels.join() === 'deprecation')).toBe(true);
    const ranForReal = summary.traces.filter((trace) => trace.parent && !trace.replayed);
    const replayed = summary.traces.filter((trace) => trace.replayed);
    // The resumed run answered the calls made before the suspension from the journal: each ran once.
    expect(replayed.length).toBe(ranForReal.length - summary.issues.length);
    expect(summary.traces.filter((trace) => trace.toolName === 'issues.open').map((trace) => trace.approval)).toEqual(
      summary.issues.map(() => expect.any(String)),
    );
  });
});
