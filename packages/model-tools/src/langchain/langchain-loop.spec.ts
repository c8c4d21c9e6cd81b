import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { Command, MemorySaver, interrupt } from '@langchain/langgraph';
import { createAgent, humanInTheLoopMiddleware } from 'langchain';
import { ToolRuntime, silentLogger } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { FrameworkApprovals } from '../approval/framework-approvals';
import { abortMidCall, executed, loopRuntime, loopTools } from '../testing/loop-tools.test-helper';
import { ModelTools } from '../calls/model-tools';
import { createLangChainApprovalMiddleware, createLangChainTools, type LangChainApprovalRequest } from './index';

// LangChain's agent loop (createAgent of langchain 1.x, on LangGraph), driven
// by a small BaseChatModel that answers from a script: only the model is scripted.
class ScriptedChatModel extends BaseChatModel {
  readonly seen: BaseMessage[][] = [];
  constructor(private readonly steps: AIMessage[]) {
    super({});
  }
  _llmType(): string {
    return 'scripted';
  }
  override bindTools(): this {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.seen.push(messages);
    const message = this.steps.shift() ?? new AIMessage('nothing left to do');
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }
}

const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, name, args, type: 'tool_call' as const });

describe('LangChain agent loop over the runtime', () => {
  it('repairs (before LangChain validates), refuses, interrupts for approval, resumes, and traces every call', async () => {
    const { search, fetch, write } = loopTools();
    const approvals = new FrameworkApprovals();
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([search, fetch, write])], logger: silentLogger, approvalHandler: approvals });
    const policy = { readOnly: false, requireCheckpoint: false, network: 'deny' as const, approval: { capabilities: ['writes' as const] } };
    await runtime.runPlan({ policy }, async (plan) => {
      const model = new ScriptedChatModel([
        new AIMessage({
          content: '',
          tool_calls: [call('c1', 'docs_search', { query: 'plans', limit: '3' }), call('c2', 'web_fetch', { url: 'https://example.com' })],
        }),
        new AIMessage({ content: '', tool_calls: [call('c3', 'notes_write', { text: 'plans are units of work' })] }),
        new AIMessage('Saved.'),
      ]);
      const agentTools = await createLangChainTools(new ModelTools(runtime, { refused: 'mark' }), plan, { approvals, interrupt });
      const agent = createAgent({ model, tools: agentTools, checkpointer: new MemorySaver() });
      const config = { configurable: { thread_id: plan.planId }, signal: plan.signal };
      const first: any = await agent.invoke({ messages: [{ role: 'user', content: 'Find and save.' }] }, config);
      expect(executed(search)[0]?.input).toEqual({ query: 'plans', limit: 3 });
      expect(executed(fetch)).toEqual([]);
      const refusal = model.seen[1]!.find((message) => message.getType() === 'tool' && (message as any).tool_call_id === 'c2') as any;
      expect(refusal.status).toBe('error');
      expect(refusal.content).toMatch(/^Error TOOL_ACCESS_DENIED: 'web_fetch' reaches outside/);
      const request = first.__interrupt__?.[0]?.value as LangChainApprovalRequest;
      expect(request).toMatchObject({ type: 'ca.tool-approval', tool: 'notes_write', arguments: { text: 'plans are units of work' }, planId: plan.planId });
      expect(executed(write)).toEqual([]);
      const second: any = await agent.invoke(new Command({ resume: { decision: 'approve', decidedBy: 'alice' } }), config);
      expect(second.messages.at(-1).content).toBe('Saved.');
      expect(executed(write)).toHaveLength(1);
      const traces = [...plan.traces].sort((a, b) => (a.toolName < b.toolName ? -1 : 1));
      expect(traces.map((trace) => [trace.toolName, trace.error?.code, trace.repairs?.map((repair) => repair.rule), trace.approval?.decidedBy])).toEqual([
        ['docs.search', undefined, ['string-to-scalar'], undefined],
        ['notes.write', undefined, undefined, 'alice'],
        ['web.fetch', 'TOOL_ACCESS_DENIED', undefined, undefined],
      ]);
    });
  });

  it('a denial through the interrupt is traced with the reason and runs nothing; an ambiguous argument is the runtime’s error, not LangChain’s', async () => {
    const { search, fetch, write } = loopTools();
    const tags = new TestTool({
      name: 'tags.set',
      inputSchema: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } }, required: ['tags'] },
    });
    const approvals = new FrameworkApprovals();
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([search, fetch, write, tags])], logger: silentLogger, approvalHandler: approvals });
    await runtime.runPlan({ policy: { approval: { capabilities: ['writes'] } } }, async (plan) => {
      const model = new ScriptedChatModel([
        new AIMessage({ content: '', tool_calls: [call('t1', 'tags_set', { tags: '["a"]' })] }),
        new AIMessage({ content: '', tool_calls: [call('w1', 'notes_write', { text: 'x' })] }),
        new AIMessage('Not saved.'),
      ]);
      const agent = createAgent({
        model,
        tools: await createLangChainTools(new ModelTools(runtime), plan, { approvals, interrupt }),
        checkpointer: new MemorySaver(),
      });
      const config = { configurable: { thread_id: 'deny' }, signal: plan.signal };
      await agent.invoke({ messages: [{ role: 'user', content: 'go' }] }, config);
      const ambiguous = model.seen[1]!.find((message) => (message as any).tool_call_id === 't1') as any;
      expect(ambiguous.content).toContain('/tags was left as sent');
      expect(executed(tags)).toEqual([]);
      const done: any = await agent.invoke(new Command({ resume: { decision: 'deny', reason: 'not today', decidedBy: 'bob' } }), config);
      expect(done.messages.at(-1).content).toBe('Not saved.');
      expect(executed(write)).toEqual([]);
      expect(plan.traces.find((trace) => trace.toolName === 'notes.write')?.approval).toMatchObject({
        decision: 'denied',
        decidedBy: 'bob',
        reason: 'not today',
      });
    });
  });

  it('a plan cancelled mid-loop stops the graph', async () => {
    const { search } = loopTools();
    const holder: { plan?: ReturnType<ToolRuntime['createPlan']> } = {};
    const stopper = new TestTool({ name: 'plan.stop', execute: () => (holder.plan?.cancellationToken.cancel('the user pressed stop'), 'stopping') });
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([search, stopper])], logger: silentLogger });
    const plan = (holder.plan = runtime.createPlan());
    const model = new ScriptedChatModel([
      new AIMessage({ content: '', tool_calls: [call('s1', 'plan_stop', {})] }),
      new AIMessage({ content: '', tool_calls: [call('s2', 'docs_search', { query: 'more' })] }),
    ]);
    const agent = createAgent({ model, tools: await createLangChainTools(new ModelTools(runtime), plan) });
    await expect(agent.invoke({ messages: [{ role: 'user', content: 'go' }] }, { signal: plan.signal })).rejects.toThrow();
    expect(model.seen).toHaveLength(1);
    expect(executed(search)).toEqual([]);
    await runtime.endPlan(plan);
  });

  describe("approval through LangChain's human-in-the-loop middleware", () => {
    const policy = { approval: { capabilities: ['writes' as const] } };
    const writeCall = (text: unknown, id = 'call_DdmO9pD3xa9XTPNJ32zg2hcA') => call(id, 'notes_write', { text });

    async function agentFor(steps: AIMessage[], interruptOn?: Parameters<typeof createLangChainApprovalMiddleware>[2]['interruptOn'], withInterrupt = false) {
      const approvals = new FrameworkApprovals();
      const { search, write, runtime } = loopRuntime(approvals);
      const plan = runtime.createPlan({ policy });
      const modelTools = new ModelTools(runtime);
      const model = new ScriptedChatModel(steps);
      const agent = createAgent({
        model,
        tools: await createLangChainTools(modelTools, plan, { approvals, ...(withInterrupt ? { interrupt } : {}) }),
        middleware: [await createLangChainApprovalMiddleware(modelTools, plan, { approvals, ...(interruptOn === undefined ? {} : { interruptOn }) })],
        checkpointer: new MemorySaver(),
      });
      const config = { configurable: { thread_id: plan.planId }, signal: plan.signal };
      return { agent, config, model, plan, runtime, search, write };
    }

    it("asks once, in the middleware's protocol, for a call the runtime's rules want approved; approve runs it once", async () => {
      // The tools also hold the runtime's own interrupt: a call the middleware approved is not asked about again.
      const { agent, config, plan, runtime, write } = await agentFor(
        [new AIMessage({ content: '', tool_calls: [writeCall('hello')] }), new AIMessage('Saved.')],
        undefined,
        true,
      );
      const first: any = await agent.invoke({ messages: [{ role: 'user', content: 'Save "hello".' }] }, config);
      expect(first.__interrupt__).toHaveLength(1);
      expect(first.__interrupt__[0].value.actionRequests).toEqual([{ name: 'notes_write', args: { text: 'hello' }, description: expect.any(String) }]);
      expect(first.__interrupt__[0].value.reviewConfigs).toEqual([{ actionName: 'notes_write', allowedDecisions: ['approve', 'edit', 'reject'] }]);
      expect(executed(write)).toEqual([]);
      const second: any = await agent.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), config);
      expect(second.__interrupt__).toBeUndefined();
      expect(second.messages.at(-1).content).toBe('Saved.');
      expect(executed(write)).toHaveLength(1);
      expect(plan.traces.map((trace) => [trace.toolName, trace.success, trace.approval?.decision, trace.approval?.decidedBy])).toEqual([
        ['notes.write', true, 'approved', 'LangChain human-in-the-loop'],
      ]);
      await runtime.endPlan(plan);
    });

    it('reject runs nothing, the model reads why, and the rejection is traced', async () => {
      const { agent, config, model, plan, runtime, write } = await agentFor([
        new AIMessage({ content: '', tool_calls: [writeCall('hello')] }),
        new AIMessage('Not saved.'),
      ]);
      await agent.invoke({ messages: [{ role: 'user', content: 'Save "hello".' }] }, config);
      const done: any = await agent.invoke(new Command({ resume: { decisions: [{ type: 'reject', message: 'Not in the shared notes, please.' }] } }), config);
      expect(done.messages.at(-1).content).toBe('Not saved.');
      expect(executed(write)).toEqual([]);
      const told = model.seen[1]!.find((message) => message.getType() === 'tool') as any;
      expect([told.content, told.status]).toEqual(['Not in the shared notes, please.', 'error']);
      expect(plan.traces.map((trace) => [trace.toolName, trace.error?.code, trace.approval?.decision, trace.approval?.reason])).toEqual([
        ['notes.write', 'TOOL_APPROVAL_DENIED', 'denied', 'Not in the shared notes, please.'],
      ]);
      await runtime.endPlan(plan);
    });

    it("edit: the edited arguments go through the runtime's validation, and the approval binds to them", async () => {
      const { agent, config, plan, runtime, write } = await agentFor([
        new AIMessage({ content: '', tool_calls: [writeCall('draft', 'call_DdmO9pD3xa9XTPNJ32zg2hcA')] }),
        new AIMessage({ content: '', tool_calls: [writeCall('draft', 'call_DdmO9pD3xa9XTPNJ32zg2hcB')] }),
        new AIMessage('Done.'),
      ]);
      await agent.invoke({ messages: [{ role: 'user', content: 'Save.' }] }, config);
      // Edited into arguments the schema refuses: the runtime's validation answers, nothing runs.
      const invalid = { type: 'edit', editedAction: { name: 'notes_write', args: { text: 42 } } };
      const second: any = await agent.invoke(new Command({ resume: { decisions: [invalid] } }), config);
      expect(executed(write)).toEqual([]);
      expect(second.__interrupt__).toHaveLength(1);
      // Edited into valid arguments: those run, approved.
      const edited = { type: 'edit', editedAction: { name: 'notes_write', args: { text: 'final' } } };
      const third: any = await agent.invoke(new Command({ resume: { decisions: [edited] } }), config);
      expect(third.messages.at(-1).content).toBe('Done.');
      expect(executed(write).map((event) => event.input)).toEqual([{ text: 'final' }]);
      expect(plan.traces.map((trace) => [trace.error?.code, trace.approval?.decidedBy])).toEqual([
        ['TOOL_SCHEMA_VALIDATION_FAILED', undefined],
        [undefined, 'LangChain human-in-the-loop'],
      ]);
      await runtime.endPlan(plan);
    });

    it("merged with the user's own interruptOn it asks once for every gated call, and each runs once after approval", async () => {
      const { agent, config, plan, runtime, search, write } = await agentFor(
        [
          new AIMessage({ content: '', tool_calls: [call('call_DdmO9pD3xa9XTPNJ32zg2hcC', 'docs_search', { query: 'notes' }), writeCall('hello')] }),
          new AIMessage('Done.'),
        ],
        { docs_search: true, notes_write: { allowedDecisions: ['approve', 'reject'], description: 'Check the note first.' } },
      );
      const first: any = await agent.invoke({ messages: [{ role: 'user', content: 'go' }] }, config);
      expect(first.__interrupt__).toHaveLength(1);
      expect(first.__interrupt__[0].value.actionRequests.map((request: any) => [request.name, request.description])).toEqual([
        ['docs_search', expect.stringContaining('Tool execution requires approval')],
        ['notes_write', 'Check the note first.'],
      ]);
      const second: any = await agent.invoke(new Command({ resume: { decisions: [{ type: 'approve' }, { type: 'approve' }] } }), config);
      expect(second.__interrupt__).toBeUndefined();
      expect(second.messages.at(-1).content).toBe('Done.');
      expect([executed(search).length, executed(write).length]).toEqual([1, 1]);
      expect(plan.traces.find((trace) => trace.toolName === 'notes.write')?.approval?.decidedBy).toBe('LangChain human-in-the-loop');
      await runtime.endPlan(plan);
    });

    it('a second humanInTheLoopMiddleware beside it (which would ask twice) is refused when the agent is made', async () => {
      const approvals = new FrameworkApprovals();
      const { runtime } = loopRuntime(approvals);
      await runtime.runPlan({ policy }, async (plan) => {
        const modelTools = new ModelTools(runtime);
        const middleware = [
          await createLangChainApprovalMiddleware(modelTools, plan, { approvals }),
          humanInTheLoopMiddleware({ interruptOn: { notes_write: true } }),
        ];
        const tools = await createLangChainTools(modelTools, plan, { approvals });
        expect(() => createAgent({ model: new ScriptedChatModel([]), tools, middleware, checkpointer: new MemorySaver() })).toThrow(/defined multiple times/);
      });
    });
  });

  it("with a user's defaults, a call of a tool the plan refuses is the runtime's refusal, not LangChain's 'not a valid tool'", async () => {
    const { write, runtime } = loopRuntime();
    await runtime.runPlan({ policy: { readOnly: true } }, async (plan) => {
      const model = new ScriptedChatModel([
        new AIMessage({ content: '', tool_calls: [call('call_DdmO9pD3xa9XTPNJ32zg2hcA', 'notes_write', { text: 'x' })] }),
        new AIMessage('I cannot save in this plan.'),
      ]);
      const agent = createAgent({ model, tools: await createLangChainTools(new ModelTools(runtime), plan) });
      const result: any = await agent.invoke({ messages: [{ role: 'user', content: 'save' }] }, { signal: plan.signal });
      expect(result.messages.at(-1).content).toBe('I cannot save in this plan.');
      const told = model.seen[1]!.find((message) => message.getType() === 'tool') as any;
      expect(told.content).toMatch(/^Error TOOL_ACCESS_DENIED: 'notes_write' changes things and this plan is read-only/);
      expect(executed(write)).toEqual([]);
      expect(plan.traces.map((trace) => [trace.toolName, trace.error?.code])).toEqual([['notes.write', 'TOOL_ACCESS_DENIED']]);
    });
  });

  it("the run's abort signal reaches the running tool within a bound, and the plan is not cancelled (unless cancelPlanOnAbort)", async () => {
    for (const cancelPlanOnAbort of [false, true]) {
      const { planCancelled, traces } = await abortMidCall(cancelPlanOnAbort, async (modelTools, plan, signal) => {
        const model = new ScriptedChatModel([
          new AIMessage({ content: '', tool_calls: [call('call_DdmO9pD3xa9XTPNJ32zg2hcA', 'reports_build', { month: 'May' })] }),
        ]);
        const agent = createAgent({ model, tools: await createLangChainTools(modelTools, plan, { cancelPlanOnAbort }) });
        return agent.invoke({ messages: [{ role: 'user', content: 'report' }] }, { signal });
      });
      expect(planCancelled).toBe(cancelPlanOnAbort);
      expect(traces.map((trace) => trace.error?.code)).toEqual(['TOOL_CANCELLED']);
    }
  });

  it('a call the runtime fails closed on (no approval given anywhere) is not told to the model as a person’s denial', async () => {
    const approvals = new FrameworkApprovals();
    const { write, runtime } = loopRuntime(approvals);
    await runtime.runPlan({ policy: { approval: { capabilities: ['writes'] } } }, async (plan) => {
      const model = new ScriptedChatModel([
        new AIMessage({ content: '', tool_calls: [call('call_DdmO9pD3xa9XTPNJ32zg2hcA', 'notes_write', { text: 'x' })] }),
        new AIMessage('Not saved.'),
      ]);
      // Neither the middleware nor an interrupt: nobody is asked, and the runtime's question goes unanswered.
      const agent = createAgent({ model, tools: await createLangChainTools(new ModelTools(runtime), plan, { approvals }) });
      await agent.invoke({ messages: [{ role: 'user', content: 'save' }] }, { signal: plan.signal });
      const told = model.seen[1]!.find((message) => message.getType() === 'tool') as any;
      expect(told.content).toContain("needs a person's approval, and no approval was asked for or given for it (nobody denied it)");
      expect(told.content).not.toContain('a person denied');
      expect(executed(write)).toEqual([]);
    });
  });

  it('a durable loop replaying a turn (the same tool-call id in the same plan) does not run the tool twice', async () => {
    const { write, runtime } = loopRuntime();
    await runtime.runPlan({}, async (plan) => {
      const tools = await createLangChainTools(new ModelTools(runtime), plan);
      for (let replay = 0; replay < 2; replay++) {
        const model = new ScriptedChatModel([
          new AIMessage({ content: '', tool_calls: [call('call_DdmO9pD3xa9XTPNJ32zg2hcA', 'notes_write', { text: 'once' })] }),
          new AIMessage('Saved.'),
        ]);
        const result: any = await createAgent({ model, tools }).invoke({ messages: [{ role: 'user', content: 'save' }] }, { signal: plan.signal });
        expect(result.messages.at(-1).content).toBe('Saved.');
      }
      expect(executed(write)).toHaveLength(1);
      expect(plan.traces[1]?.replayedFrom).toBe(plan.traces[0]?.executionId);
    });
  });
});
