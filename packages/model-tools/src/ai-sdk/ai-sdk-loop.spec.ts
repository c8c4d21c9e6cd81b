import { generateText, stepCountIs, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { ToolRuntime, silentLogger } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { FrameworkApprovals } from '../approval/framework-approvals';
import { executed, loopTools } from '../testing/loop-tools.test-helper';
import { ModelTools } from '../calls/model-tools';
import { createAiSdkTools } from './index';

// The AI SDK's own tool loop (generateText with stopWhen), driven by the AI
// SDK's scripted model: only the model is scripted.
type Step = Array<{ type: 'tool-call'; toolCallId: string; toolName: string; input: string } | { type: 'text'; text: string }>;

function scriptedModel(steps: Step[]) {
  const prompts: unknown[] = [];
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      const content = steps.shift() ?? [{ type: 'text', text: 'nothing left to do' }];
      const toolCalls = content.some((part) => part.type === 'tool-call');
      return {
        content,
        finishReason: { unified: toolCalls ? 'tool-calls' : 'stop', raw: undefined },
        usage: {
          inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 1, text: 1, reasoning: 0 },
        },
        warnings: [],
      };
    },
  });
  return { model, prompts };
}

describe('AI SDK 7 agent loop over the runtime', () => {
  it('repairs, refuses, asks for approval through the AI SDK and goes on, with every call traced', async () => {
    const { search, fetch, write } = loopTools();
    const approvals = new FrameworkApprovals();
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([search, fetch, write])], logger: silentLogger, approvalHandler: approvals });
    const modelTools = new ModelTools(runtime, { refused: 'mark' });
    const policy = { readOnly: false, requireCheckpoint: false, network: 'deny' as const, approval: { capabilities: ['writes' as const] } };
    await runtime.runPlan({ policy }, async (plan) => {
      const toolSet = await createAiSdkTools(modelTools, plan, { approvals });
      expect(Object.keys(toolSet).sort()).toEqual(['docs_search', 'notes_write', 'web_fetch']);
      const { model, prompts } = scriptedModel([
        [
          { type: 'tool-call', toolCallId: 'c1', toolName: 'docs_search', input: '{"query":"plans","limit":"3"}' },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'web_fetch', input: '{"url":"https://example.com"}' },
        ],
        [{ type: 'tool-call', toolCallId: 'c3', toolName: 'notes_write', input: '{"text":"plans are units of work"}' }],
        [{ type: 'text', text: 'Saved the note.' }],
      ]);
      const first = await generateText({ model, tools: toolSet, prompt: 'Find and save.', stopWhen: stepCountIs(5), abortSignal: plan.signal });
      // The search ran with repaired arguments; the fetch was refused and the model was told why.
      expect(search.events.find((event) => event.type === 'execute')?.input).toEqual({ query: 'plans', limit: 3 });
      expect(executed(fetch)).toEqual([]);
      expect(JSON.stringify(prompts[1])).toContain(
        "Error TOOL_ACCESS_DENIED: 'web_fetch' reaches outside (network, remote services) and this plan denies the network",
      );
      // The write needs approval: the AI SDK stops with its approval request and the tool has not run.
      const request = first.content.find((part) => part.type === 'tool-approval-request');
      expect(request).toMatchObject({ toolCall: { toolName: 'notes_write' } });
      expect(executed(write)).toEqual([]);
      const messages: ModelMessage[] = [
        { role: 'user', content: 'Find and save.' },
        ...first.response.messages,
        { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: (request as { approvalId: string }).approvalId, approved: true }] },
      ];
      const second = await generateText({ model, tools: toolSet, messages, stopWhen: stepCountIs(5), abortSignal: plan.signal });
      expect(second.text).toBe('Saved the note.');
      expect(executed(write)).toHaveLength(1);
      const traces = [...plan.traces]
        .sort((a, b) => (a.toolName < b.toolName ? -1 : 1))
        .map((trace) => ({
          tool: trace.toolName,
          error: trace.error?.code,
          repairs: trace.repairs?.map((repair) => repair.rule),
          approval: trace.approval?.decidedBy,
        }));
      expect(traces).toEqual([
        { tool: 'docs.search', error: undefined, repairs: ['string-to-scalar'], approval: undefined },
        { tool: 'notes.write', error: undefined, repairs: undefined, approval: 'AI SDK approval response' },
        { tool: 'web.fetch', error: 'TOOL_ACCESS_DENIED', repairs: undefined, approval: undefined },
      ]);
    });
  });

  it('a call the AI SDK did not approve is refused by the runtime, and a denial in the AI SDK runs nothing', async () => {
    const { search, fetch, write } = loopTools();
    const approvals = new FrameworkApprovals();
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([search, fetch, write])], logger: silentLogger, approvalHandler: approvals });
    const modelTools = new ModelTools(runtime);
    await runtime.runPlan({ policy: { approval: { capabilities: ['writes'] } } }, async (plan) => {
      const toolSet = await createAiSdkTools(modelTools, plan, { approvals });
      // Calling execute directly (no approval response) is no way around the runtime.
      const execute = (toolSet['notes_write'] as any).execute;
      await expect(execute({ text: 'x' }, { toolCallId: 'direct', messages: [] })).rejects.toMatchObject({ code: 'TOOL_APPROVAL_DENIED' });
      expect(executed(write)).toEqual([]);
      const { model } = scriptedModel([[{ type: 'tool-call', toolCallId: 'c9', toolName: 'notes_write', input: '{"text":"x"}' }]]);
      const first = await generateText({ model, tools: toolSet, prompt: 'save', stopWhen: stepCountIs(3) });
      const request = first.content.find((part) => part.type === 'tool-approval-request') as { approvalId: string };
      await generateText({
        model,
        tools: toolSet,
        messages: [
          { role: 'user', content: 'save' },
          ...first.response.messages,
          { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: false }] },
        ],
        stopWhen: stepCountIs(3),
      });
      expect(executed(write)).toEqual([]);
    });
  });

  it('a plan cancelled mid-loop stops the loop: the next model call is aborted and nothing more runs', async () => {
    const { search, fetch, write } = loopTools();
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([search, fetch, write])], logger: silentLogger });
    const modelTools = new ModelTools(runtime);
    const plan = runtime.createPlan();
    const stopper = new TestTool({ name: 'plan.stop', execute: () => (plan.cancellationToken.cancel('the user pressed stop'), 'stopping') });
    const withStop = new ToolRuntime({ sources: [new InMemoryToolSource([search, stopper])], logger: silentLogger });
    const stopPlan = withStop.createPlan({ cancellationToken: plan.cancellationToken });
    const toolSet = await createAiSdkTools(new ModelTools(withStop), stopPlan);
    const { model, prompts } = scriptedModel([
      [{ type: 'tool-call', toolCallId: 'c1', toolName: 'plan_stop', input: '{}' }],
      [{ type: 'tool-call', toolCallId: 'c2', toolName: 'docs_search', input: '{"query":"more"}' }],
    ]);
    await expect(generateText({ model, tools: toolSet, prompt: 'go', stopWhen: stepCountIs(5), abortSignal: stopPlan.signal })).rejects.toThrow();
    expect(prompts).toHaveLength(1);
    expect(executed(search)).toEqual([]);
    await withStop.endPlan(stopPlan);
    await runtime.endPlan(plan);
    void modelTools;
  });
});
