import { generateText, stepCountIs, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { ToolRuntime, silentLogger } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { FrameworkApprovals } from '../approval/framework-approvals';
import { abortMidCall, executed, loopRuntime, loopTools, slowTool, within } from '../testing/loop-tools.test-helper';
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

  it("with a user's defaults, a call of a tool the plan refuses is the runtime's refusal, read by the model, and the loop goes on", async () => {
    const { write, runtime } = loopRuntime();
    await runtime.runPlan({ policy: { readOnly: true } }, async (plan) => {
      const toolSet = await createAiSdkTools(new ModelTools(runtime), plan);
      // The model sees only the name and why: no parameters, no description to tempt it.
      expect((toolSet['notes_write'] as { description?: string }).description).toBe(
        '[Not available in this plan: it changes things and this plan is read-only. Do not call it.]',
      );
      const { model, prompts } = scriptedModel([
        [{ type: 'tool-call', toolCallId: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', toolName: 'notes_write', input: '{"text":"x"}' }],
        [{ type: 'text', text: 'I cannot save in this plan.' }],
      ]);
      const result = await generateText({ model, tools: toolSet, prompt: 'save', stopWhen: stepCountIs(4), abortSignal: plan.signal });
      expect(result.text).toBe('I cannot save in this plan.');
      expect(JSON.stringify(prompts[1])).toContain("Error TOOL_ACCESS_DENIED: 'notes_write' changes things and this plan is read-only, so it was not run.");
      expect(executed(write)).toEqual([]);
      expect(plan.traces.map((trace) => [trace.toolName, trace.error?.code])).toEqual([['notes.write', 'TOOL_ACCESS_DENIED']]);
    });
  });

  it('an AI SDK abort (its per-tool timeout) cancels the running tool, and the plan goes on', async () => {
    const { tool, started, cancelled } = slowTool();
    const { search } = loopTools();
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool, search])], logger: silentLogger });
    await runtime.runPlan({}, async (plan) => {
      const toolSet = await createAiSdkTools(new ModelTools(runtime), plan);
      const { model, prompts } = scriptedModel([
        [{ type: 'tool-call', toolCallId: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', toolName: 'reports_build', input: '{"month":"May"}' }],
        [{ type: 'tool-call', toolCallId: 'call_DdmO9pD3xa9XTPNJ32zg2hcB', toolName: 'docs_search', input: '{"query":"reports"}' }],
        [{ type: 'text', text: 'The report took too long.' }],
      ]);
      const result = await generateText({ model, tools: toolSet, prompt: 'report', stopWhen: stepCountIs(5), timeout: { toolMs: 300 } });
      await within(cancelled, 5_000, 'the tool seeing its cancellation');
      expect(result.text).toBe('The report took too long.');
      expect(JSON.stringify(prompts[1])).toContain('TOOL_CANCELLED');
      // The timeout was the AI SDK's for one tool call, not an end of the plan: the next call ran.
      expect(plan.cancellationToken.isCancelled).toBe(false);
      expect(executed(search)).toHaveLength(1);
      expect(plan.traces.map((trace) => [trace.toolName, trace.error?.code])).toEqual([
        ['reports.build', 'TOOL_CANCELLED'],
        ['docs.search', undefined],
      ]);
      await started;
    });
  });

  it('the user stopping the run (abortSignal) reaches the running tool; cancelPlanOnAbort cancels the plan too', async () => {
    for (const cancelPlanOnAbort of [false, true]) {
      const { planCancelled, traces } = await abortMidCall(cancelPlanOnAbort, async (modelTools, plan, abortSignal) => {
        const tools = await createAiSdkTools(modelTools, plan, { cancelPlanOnAbort });
        const { model } = scriptedModel([[{ type: 'tool-call', toolCallId: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', toolName: 'reports_build', input: '{}' }]]);
        return generateText({ model, tools, prompt: 'report', stopWhen: stepCountIs(3), abortSignal });
      });
      expect(planCancelled).toBe(cancelPlanOnAbort);
      expect(traces.map((trace) => trace.error?.code)).toEqual(['TOOL_CANCELLED']);
    }
  });

  it('a call the runtime fails closed on (no approval given anywhere) is not told to the model as a person’s denial', async () => {
    const { write, runtime } = loopRuntime(new FrameworkApprovals());
    await runtime.runPlan({ policy: { approval: { capabilities: ['writes'] } } }, async (plan) => {
      // The bridge was not given to the tools: the AI SDK never asks, and the runtime's question goes unanswered.
      const toolSet = await createAiSdkTools(new ModelTools(runtime), plan);
      const { model, prompts } = scriptedModel([
        [{ type: 'tool-call', toolCallId: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', toolName: 'notes_write', input: '{"text":"x"}' }],
        [{ type: 'text', text: 'Not saved.' }],
      ]);
      await generateText({ model, tools: toolSet, prompt: 'save', stopWhen: stepCountIs(3) });
      const told = JSON.stringify(prompts[1]);
      expect(told).toContain(
        "Error TOOL_APPROVAL_DENIED: this call of 'notes_write' needs a person's approval, and no approval was asked for or given for it (nobody denied it)",
      );
      expect(told).not.toContain('a person denied');
      expect(executed(write)).toEqual([]);
      expect(plan.traces[0]?.approval).toMatchObject({ decision: 'denied', decidedBy: 'model-tools' });
    });
  });

  it('a durable loop replaying a turn (the same tool-call id in the same plan) does not run the tool twice', async () => {
    const { write, runtime } = loopRuntime();
    await runtime.runPlan({}, async (plan) => {
      const toolSet = await createAiSdkTools(new ModelTools(runtime), plan);
      const turn = (): Step[] => [
        [{ type: 'tool-call', toolCallId: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', toolName: 'notes_write', input: '{"text":"once"}' }],
        [{ type: 'text', text: 'Saved.' }],
      ];
      // The first run, then the same turn replayed (the journaled model response, the same ids).
      for (const steps of [turn(), turn()]) {
        const { model } = scriptedModel(steps);
        expect((await generateText({ model, tools: toolSet, prompt: 'save', stopWhen: stepCountIs(3) })).text).toBe('Saved.');
      }
      expect(executed(write)).toHaveLength(1);
      expect(plan.traces[1]?.replayedFrom).toBe(plan.traces[0]?.executionId);
    });
  });
});
