// A program's inner call that needs a person, through each framework's own
// approval flow: the AI SDK's tool-approval parts, the OpenAI Agents SDK's
// interruptions and LangChain's human-in-the-loop middleware (and a LangGraph
// interrupt). The framework asks about the program tool's call; what the
// person is shown is the inner call (FrameworkApprovals.pendingProgramCall,
// or the middleware's description). After the answer the program resumes by
// replay: no inner call runs twice. A program with two writes needs two
// answers: the model calls the same program again and the framework asks
// about the second. Only the models are scripted.
import { createCodeMode, type CodeMode } from '@ca/code-mode';
import { FrameworkApprovals, ModelTools } from '@ca/model-tools';
import { createAiSdkTools } from '@ca/model-tools/ai-sdk';
import { createLangChainApprovalMiddleware, createLangChainTools } from '@ca/model-tools/langchain';
import { createOpenAiAgentsTools } from '@ca/model-tools/openai-agents';
import type { PlanContext, PlanPolicy } from '@ca/tool-context';
import { ToolRuntime, silentLogger } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { AIMessage } from '@langchain/core/messages';
import { ScriptedChatModel } from './support/scripted-chat-model';
import { Command, MemorySaver, interrupt } from '@langchain/langgraph';
import { Agent, run } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing';
import { generateText, stepCountIs, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { createAgent } from 'langchain';

jest.setTimeout(120_000);

const PROGRAM = `
  const a = await tools.files_read({ path: 'a' });
  const b = await tools.files_read({ path: 'b' });
  const first = await tools.issues_create({ title: a.text });
  const second = await tools.issues_create({ title: b.text });
  return [first.id, second.id];`;

const WRITES_ASK: Partial<PlanPolicy> = { approval: { capabilities: ['writes'] } };

interface Setup {
  readonly runtime: ToolRuntime;
  readonly codeMode: CodeMode;
  readonly modelTools: ModelTools;
  readonly approvals: FrameworkApprovals;
  /** Files read and issues created, as the tools saw them. */
  readonly reads: string[];
  readonly writes: string[];
}

function setup(): Setup {
  const approvals = new FrameworkApprovals();
  const reads: string[] = [];
  const writes: string[] = [];
  const holder: { runtime?: ToolRuntime } = {};
  const codeMode = createCodeMode({ runtime: () => holder.runtime as ToolRuntime, pool: { size: 1 }, suspend: approvals.suspend });
  const runtime = new ToolRuntime({
    sources: [
      new InMemoryToolSource([
        new TestTool({
          name: 'files.read',
          capability: { writes: false },
          execute: (input: unknown) => {
            const { path } = input as { path: string };
            reads.push(path);
            return { text: path.toUpperCase() };
          },
        }),
        new TestTool({
          name: 'issues.create',
          capability: { writes: true, checkpointable: false },
          execute: (input: unknown) => {
            writes.push((input as { title: string }).title);
            return { id: writes.length };
          },
        }),
      ]),
      codeMode.source,
    ],
    approvalHandler: approvals,
    logger: silentLogger,
  });
  holder.runtime = runtime;
  return { runtime, codeMode, modelTools: new ModelTools(runtime, { codeMode: { search: false } }), approvals, reads, writes };
}

/** The inner calls of issues.create in the plan, with who approved each and whether it was answered from the journal. */
function issueCalls(plan: PlanContext): [string, string | undefined, boolean][] {
  return plan.traces
    .filter((trace) => trace.toolName === 'issues.create' && trace.success)
    .map((trace) => [trace.toolName, trace.approval?.decidedBy, trace.replayedFrom !== undefined]);
}

type AiStep = Array<{ type: 'tool-call'; toolCallId: string; toolName: string; input: string } | { type: 'text'; text: string }>;

function aiModel(steps: AiStep[]) {
  const prompts: unknown[] = [];
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      const content = steps.shift() ?? [{ type: 'text', text: 'done' }];
      return {
        content,
        finishReason: { unified: content.some((part) => part.type === 'tool-call') ? 'tool-calls' : 'stop', raw: undefined },
        usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
        warnings: [],
      } as never;
    },
  });
  return { model, prompts };
}

describe('an inner call of a program waits for a person through the framework’s own approval flow', () => {
  let current: Setup | undefined;
  afterEach(async () => {
    await current?.codeMode.close();
    current = undefined;
  });

  it('AI SDK: the approval request of code_run is about the inner call; approved, the program resumes by replay; the second write is asked about when the model runs the program again', async () => {
    const s = (current = setup());
    await s.runtime.runPlan({ policy: WRITES_ASK }, async (plan) => {
      const tools = await createAiSdkTools(s.modelTools, plan, { approvals: s.approvals });
      const call = (id: string) => ({ type: 'tool-call' as const, toolCallId: id, toolName: 'code_run', input: JSON.stringify({ code: PROGRAM }) });
      const { model, prompts } = aiModel([[call('call_prog_Zp41x')], [call('call_prog_Qm77y')], [{ type: 'text', text: 'Filed both.' }]]);
      const prompt = 'File an issue per file.';

      const first = await generateText({ model, tools, prompt, stopWhen: stepCountIs(6), abortSignal: plan.signal });
      const request = first.content.find((part) => part.type === 'tool-approval-request') as { approvalId: string; toolCall: { toolCallId: string } };
      expect(request?.toolCall.toolCallId).toBe('call_prog_Zp41x');
      // What the person is shown: the inner call, not the program.
      expect(s.approvals.pendingProgramCall(plan, 'call_prog_Zp41x')).toMatchObject({
        toolName: 'issues.create',
        input: { title: 'A' },
        step: 'call_prog_Zp41x/3',
      });
      expect([s.reads, s.writes]).toEqual([['a', 'b'], []]);

      const messages: ModelMessage[] = [
        { role: 'user', content: prompt },
        ...first.responseMessages,
        { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }] },
      ];
      const second = await generateText({ model, tools, messages, stopWhen: stepCountIs(6), abortSignal: plan.signal });
      // The first issue was created once, the reads were answered from the journal; the program stopped at the second write.
      expect([s.reads, s.writes]).toEqual([['a', 'b'], ['A']]);
      expect(JSON.stringify(prompts[1])).toContain('CODE_APPROVAL_PENDING');
      const again = second.content.find((part) => part.type === 'tool-approval-request') as { approvalId: string; toolCall: { toolCallId: string } };
      expect(again?.toolCall.toolCallId).toBe('call_prog_Qm77y');
      expect(s.approvals.pendingProgramCall(plan, 'call_prog_Qm77y')).toMatchObject({ toolName: 'issues.create', input: { title: 'B' } });

      const third = await generateText({
        model,
        tools,
        messages: [
          ...messages,
          ...second.responseMessages,
          { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: again.approvalId, approved: true }] },
        ],
        stopWhen: stepCountIs(6),
        abortSignal: plan.signal,
      });
      expect(third.text).toBe('Filed both.');
      // The model read the program's result (the tool result of the approved call, rendered for the model).
      const results = third.responseMessages.flatMap((message) =>
        Array.isArray(message.content) ? (message.content as { type: string; toolCallId?: string }[]) : [],
      );
      const last = results.find((part) => part.type === 'tool-result' && part.toolCallId === 'call_prog_Qm77y') as { output?: { value?: unknown } } | undefined;
      expect(JSON.parse(String(last?.output?.value))).toMatchObject({ result: [1, 2] });
      // Every inner call ran once; each write was approved through the AI SDK.
      expect([s.reads, s.writes]).toEqual([
        ['a', 'b'],
        ['A', 'B'],
      ]);
      expect(issueCalls(plan)).toEqual([
        ['issues.create', 'AI SDK approval response', false],
        // The program's third run replays the first write from the journal: it did not run again.
        ['issues.create', undefined, true],
        ['issues.create', 'AI SDK approval response', false],
      ]);
    });
  });

  it('AI SDK: a denied inner call runs nothing; a program that needs nobody runs once', async () => {
    const s = (current = setup());
    await s.runtime.runPlan({ policy: WRITES_ASK }, async (plan) => {
      const tools = await createAiSdkTools(s.modelTools, plan, { approvals: s.approvals });
      const reading = `const a = await tools.files_read({ path: 'x' }); return a.text;`;
      const { model } = aiModel([
        [
          { type: 'tool-call', toolCallId: 'call_read_Hh21q', toolName: 'code_run', input: JSON.stringify({ code: reading }) },
          { type: 'tool-call', toolCallId: 'call_write_Jj32r', toolName: 'code_run', input: JSON.stringify({ code: PROGRAM }) },
        ],
        [{ type: 'text', text: 'ok' }],
      ]);
      const first = await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(4), abortSignal: plan.signal });
      const request = first.content.find((part) => part.type === 'tool-approval-request') as { approvalId: string; toolCall: { toolCallId: string } };
      expect(request.toolCall.toolCallId).toBe('call_write_Jj32r');
      // The reading program needed nobody: it ran once (when the AI SDK asked), and its result is the one the model got.
      const readResult = first.content.find((part) => part.type === 'tool-result') as { output?: { result?: unknown } } | undefined;
      expect(readResult?.output?.result).toBe('X');
      expect(plan.traces.filter((trace) => trace.toolName === 'code.run')).toHaveLength(2);
      await generateText({
        model,
        tools,
        messages: [
          { role: 'user', content: 'go' },
          ...first.responseMessages,
          { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: false }] },
        ],
        stopWhen: stepCountIs(4),
        abortSignal: plan.signal,
      });
      expect(s.writes).toEqual([]);
      expect(s.reads).toEqual(['x', 'a', 'b']);
    });
  });

  it('OpenAI Agents: the interruption of code_run is about the inner call; state.approve resumes the program; the next run of the program asks about the second write', async () => {
    const s = (current = setup());
    await s.runtime.runPlan({ policy: WRITES_ASK }, async (plan) => {
      const model = new ScriptedModel([
        [functionCall('code_run', { code: PROGRAM }, { callId: 'call_agents_Pk41a' })],
        [functionCall('code_run', { code: PROGRAM }, { callId: 'call_agents_Pk52b' })],
        [assistantMessage('Filed both.')],
      ]);
      const agent = new Agent({
        name: 'filer',
        instructions: 'File issues.',
        model,
        tools: await createOpenAiAgentsTools(s.modelTools, plan, { approvals: s.approvals }),
      });
      const first = await run(agent, 'File an issue per file.', { signal: plan.signal });
      expect(first.interruptions).toHaveLength(1);
      expect(s.approvals.pendingProgramCall(plan, 'call_agents_Pk41a')).toMatchObject({ toolName: 'issues.create', input: { title: 'A' } });
      expect([s.reads, s.writes]).toEqual([['a', 'b'], []]);

      first.state.approve(first.interruptions[0]!);
      const second = await run(agent, first.state, { signal: plan.signal });
      expect([s.reads, s.writes]).toEqual([['a', 'b'], ['A']]);
      expect(second.interruptions).toHaveLength(1);
      expect(s.approvals.pendingProgramCall(plan, 'call_agents_Pk52b')).toMatchObject({ toolName: 'issues.create', input: { title: 'B' } });

      second.state.approve(second.interruptions[0]!);
      const third = await run(agent, second.state, { signal: plan.signal });
      expect(third.finalOutput).toBe('Filed both.');
      expect([s.reads, s.writes]).toEqual([
        ['a', 'b'],
        ['A', 'B'],
      ]);
      const outputs = third.newItems.filter((item) => item.type === 'tool_call_output_item').map((item) => String((item as { output?: unknown }).output));
      expect(JSON.parse(outputs.at(-1) as string)).toMatchObject({ result: [1, 2] });
      expect(issueCalls(plan)).toEqual([
        ['issues.create', 'OpenAI Agents approval', false],
        // The program's third run replays the first write from the journal: it did not run again.
        ['issues.create', undefined, true],
        ['issues.create', 'OpenAI Agents approval', false],
      ]);
    });
  });

  it("LangChain: the human-in-the-loop middleware's request describes the inner call (approve or reject); approving resumes the program", async () => {
    const s = (current = setup());
    await s.runtime.runPlan({ policy: WRITES_ASK }, async (plan) => {
      const call = (id: string) => new AIMessage({ content: '', tool_calls: [{ id, name: 'code_run', args: { code: PROGRAM }, type: 'tool_call' }] });
      const model = new ScriptedChatModel([call('call_lc_Rt21z'), call('call_lc_Rt32w'), new AIMessage('Filed both.')]);
      const agent = createAgent({
        model,
        tools: await createLangChainTools(s.modelTools, plan, { approvals: s.approvals }),
        middleware: [await createLangChainApprovalMiddleware(s.modelTools, plan, { approvals: s.approvals })],
        checkpointer: new MemorySaver(),
      });
      const config = { configurable: { thread_id: 'filer' }, signal: plan.signal };
      const first: any = await agent.invoke({ messages: [{ role: 'user', content: 'File an issue per file.' }] }, config);
      expect(first.__interrupt__).toHaveLength(1);
      const [action] = first.__interrupt__[0].value.actionRequests;
      expect(action.name).toBe('code_run');
      expect(action.description).toContain('calls issues.create (inner call call_lc_Rt21z/3)');
      expect(action.description).toContain('"title": "A"');
      expect(first.__interrupt__[0].value.reviewConfigs).toEqual([{ actionName: 'code_run', allowedDecisions: ['approve', 'reject'] }]);
      expect([s.reads, s.writes]).toEqual([['a', 'b'], []]);

      const second: any = await agent.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), config);
      expect([s.reads, s.writes]).toEqual([['a', 'b'], ['A']]);
      expect(second.__interrupt__).toHaveLength(1);
      expect(second.__interrupt__[0].value.actionRequests[0].description).toContain('"title": "B"');

      const third: any = await agent.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), config);
      expect(third.__interrupt__).toBeUndefined();
      expect([s.reads, s.writes]).toEqual([
        ['a', 'b'],
        ['A', 'B'],
      ]);
      expect(third.messages.at(-1).content).toBe('Filed both.');
      expect(issueCalls(plan)).toEqual([
        ['issues.create', 'LangChain human-in-the-loop', false],
        // The program's third run replays the first write from the journal: it did not run again.
        ['issues.create', undefined, true],
        ['issues.create', 'LangChain human-in-the-loop', false],
      ]);
    });
  });

  it("LangGraph interrupt inside the tool: the interrupt names the inner call; a person's denial is the exception the program catches", async () => {
    const s = (current = setup());
    await s.runtime.runPlan({ policy: WRITES_ASK }, async (plan) => {
      const program = `try { await tools.issues_create({ title: 'X' }); return 'created'; } catch (error) { return [error.code, error.reason]; }`;
      const model = new ScriptedChatModel([
        new AIMessage({ content: '', tool_calls: [{ id: 'call_lg_Wq81n', name: 'code_run', args: { code: program }, type: 'tool_call' }] }),
        new AIMessage('done'),
      ]);
      const agent = createAgent({
        model,
        tools: await createLangChainTools(s.modelTools, plan, { approvals: s.approvals, interrupt }),
        checkpointer: new MemorySaver(),
      });
      const config = { configurable: { thread_id: 'lg' }, signal: plan.signal };
      const first: any = await agent.invoke({ messages: [{ role: 'user', content: 'file X' }] }, config);
      expect(first.__interrupt__[0].value).toMatchObject({
        type: 'ca.tool-approval',
        tool: 'issues.create',
        arguments: { title: 'X' },
        program: { tool: 'code_run', step: 'call_lg_Wq81n/1' },
      });
      const done: any = await agent.invoke(new Command({ resume: { decision: 'deny', reason: 'not now', decidedBy: 'carol' } }), config);
      const answer = done.messages.find((message: { getType(): string }) => message.getType() === 'tool');
      expect(JSON.parse(answer.content).result).toEqual(['TOOL_APPROVAL_DENIED', 'not now']);
      expect(s.writes).toEqual([]);
      expect(plan.traces.find((trace) => trace.toolName === 'issues.create')?.approval).toMatchObject({ decision: 'denied', decidedBy: 'carol' });
    });
  });
});
