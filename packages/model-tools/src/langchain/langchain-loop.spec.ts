import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { Command, MemorySaver, interrupt } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { ToolRuntime, silentLogger } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { FrameworkApprovals } from '../approval/framework-approvals';
import { executed, loopTools } from '../testing/loop-tools.test-helper';
import { ModelTools } from '../calls/model-tools';
import { createLangChainTools, type LangChainApprovalRequest } from './index';

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
});
