import { Agent, RunState, run } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing';
import { MemoryApprovalStore, ToolRuntime, silentLogger } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { FrameworkApprovals } from '../approval/framework-approvals';
import { abortMidCall, executed, loopRuntime, loopTools } from '../testing/loop-tools.test-helper';
import { ModelTools } from '../calls/model-tools';
import { createOpenAiAgentsTools } from './index';

// The Agents SDK's own run loop (run, interruptions, RunState), driven by its
// ScriptedModel from @openai/agents/testing: only the model is scripted.
const KEY = 'an approval key of at least thirty-two bytes, for tests';

describe('OpenAI Agents SDK run loop over the runtime', () => {
  const policy = { readOnly: false, requireCheckpoint: false, network: 'deny' as const, approval: { capabilities: ['writes' as const] } };

  it('repairs, refuses, stops for approval, resumes from a serialized state in a new runtime, and traces every call', async () => {
    const { search, fetch, write } = loopTools();
    const store = new MemoryApprovalStore();
    const approvals = new FrameworkApprovals({ store });
    const runtime = new ToolRuntime({
      sources: [new InMemoryToolSource([search, fetch, write])],
      logger: silentLogger,
      approvalHandler: approvals,
      approvalStore: store,
      approvalKey: KEY,
    });
    const plan = runtime.createPlan({ planId: 'agents-plan', policy });
    const model = new ScriptedModel([
      [
        functionCall('docs_search', '{"query":"plans","limit":"3"}', { callId: 'c1' }),
        functionCall('web_fetch', '{"url":"https://example.com"}', { callId: 'c2' }),
      ],
      [functionCall('notes_write', { text: 'plans are units of work' }, { callId: 'c3' })],
      [assistantMessage('Saved.')],
    ]);
    const agent = new Agent({
      name: 'assistant',
      instructions: 'Use the tools.',
      model,
      tools: await createOpenAiAgentsTools(new ModelTools(runtime, { refused: 'mark' }), plan, { approvals }),
    });
    const first = await run(agent, 'Find and save.', { signal: plan.signal });
    expect(executed(search)[0]?.input).toEqual({ query: 'plans', limit: 3 });
    expect(executed(fetch)).toEqual([]);
    expect(JSON.stringify(model.calls[1]!.request.input)).toContain("Error TOOL_ACCESS_DENIED: 'web_fetch' reaches outside");
    expect(first.interruptions.map((item) => item.name)).toEqual(['notes_write']);
    expect(executed(write)).toEqual([]);
    const saved = first.state.toString();
    await runtime.endPlan(plan);

    // Another process: a new runtime with the same store and key, the same plan id, the state restored.
    const again = loopTools();
    const approvals2 = new FrameworkApprovals({ store });
    const runtime2 = new ToolRuntime({
      sources: [new InMemoryToolSource([again.search, again.fetch, again.write])],
      logger: silentLogger,
      approvalHandler: approvals2,
      approvalStore: store,
      approvalKey: KEY,
    });
    const plan2 = runtime2.createPlan({ planId: 'agents-plan', policy });
    const agent2 = agent.clone({ tools: await createOpenAiAgentsTools(new ModelTools(runtime2, { refused: 'mark' }), plan2, { approvals: approvals2 }) });
    const state = await RunState.fromString(agent2, saved);
    for (const interruption of state.getInterruptions()) state.approve(interruption, { alwaysApprove: true });
    const second = await run(agent2, state, { signal: plan2.signal });
    expect(second.finalOutput).toBe('Saved.');
    expect(executed(again.write)).toHaveLength(1);
    expect(plan2.traces.map((trace) => [trace.toolName, trace.approval?.decidedBy, trace.approval?.scope])).toEqual([
      ['notes.write', 'OpenAI Agents approval', 'tool'],
    ]);
    // The tool approval is kept in the runtime's store: a later call of the plan asks nobody.
    expect((await store.load('agents-plan')).map((record: any) => [record.toolName, record.scope])).toEqual([['notes.write', 'tool']]);
    await runtime2.endPlan(plan2);
    expect(plan.traces.map((trace) => [trace.toolName, trace.error?.code, trace.repairs?.map((repair) => repair.rule)]).sort()).toEqual([
      ['docs.search', undefined, ['string-to-scalar']],
      ['web.fetch', 'TOOL_ACCESS_DENIED', undefined],
    ]);
  });

  it('a rejection in the Agents SDK runs nothing; a plan cancelled mid-run stops the run', async () => {
    const { search, fetch, write } = loopTools();
    const approvals = new FrameworkApprovals();
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([search, fetch, write])], logger: silentLogger, approvalHandler: approvals });
    await runtime.runPlan({ policy }, async (plan) => {
      const model = new ScriptedModel([[functionCall('notes_write', { text: 'x' }, { callId: 'w1' })], [assistantMessage('Not saved.')]]);
      const agent = new Agent({ name: 'a', model, tools: await createOpenAiAgentsTools(new ModelTools(runtime), plan, { approvals }) });
      const first = await run(agent, 'save', { signal: plan.signal });
      first.state.reject(first.interruptions[0]!);
      const second = await run(agent, first.state, { signal: plan.signal });
      expect(second.finalOutput).toBe('Not saved.');
      expect(executed(write)).toEqual([]);
    });

    // The user presses stop while a tool runs: the plan is cancelled, the run stops.
    const holder: { plan?: ReturnType<ToolRuntime['createPlan']> } = {};
    const stopper = new TestTool({ name: 'plan.stop', execute: () => (holder.plan?.cancellationToken.cancel('the user pressed stop'), 'stopping') });
    const runtime2 = new ToolRuntime({ sources: [new InMemoryToolSource([search, stopper])], logger: silentLogger });
    const plan = (holder.plan = runtime2.createPlan());
    const model = new ScriptedModel([
      [functionCall('plan_stop', {}, { callId: 's1' })],
      [functionCall('docs_search', { query: 'more' }, { callId: 's2' })],
      [assistantMessage('never')],
    ]);
    const agent = new Agent({ name: 'b', model, tools: await createOpenAiAgentsTools(new ModelTools(runtime2), plan) });
    const searchesBefore = executed(search).length;
    const running = run(agent, 'go', { signal: plan.signal });
    await expect(running).rejects.toThrow();
    expect(executed(search).length).toBe(searchesBefore);
    expect(model.calls).toHaveLength(1);
    await runtime2.endPlan(plan);
  });

  it("with a user's defaults, a call of a tool the plan refuses is the runtime's refusal: the run goes on instead of throwing ModelBehaviorError", async () => {
    const { write, runtime } = loopRuntime();
    await runtime.runPlan({ policy: { readOnly: true } }, async (plan) => {
      const model = new ScriptedModel([
        [functionCall('notes_write', { text: 'x' }, { callId: 'call_DdmO9pD3xa9XTPNJ32zg2hcA' })],
        [assistantMessage('I cannot save in this plan.')],
      ]);
      const agent = new Agent({ name: 'a', model, tools: await createOpenAiAgentsTools(new ModelTools(runtime), plan) });
      const result = await run(agent, 'save', { signal: plan.signal });
      expect(result.finalOutput).toBe('I cannot save in this plan.');
      expect(JSON.stringify(model.calls[1]!.request.input)).toContain("Error TOOL_ACCESS_DENIED: 'notes_write' changes things and this plan is read-only");
      expect(executed(write)).toEqual([]);
      expect(plan.traces.map((trace) => [trace.toolName, trace.error?.code])).toEqual([['notes.write', 'TOOL_ACCESS_DENIED']]);
    });
  });

  it("the run's abort signal reaches the running tool within a bound, and the plan is not cancelled (unless cancelPlanOnAbort)", async () => {
    for (const cancelPlanOnAbort of [false, true]) {
      const { planCancelled, traces } = await abortMidCall(cancelPlanOnAbort, async (modelTools, plan, signal) => {
        const model = new ScriptedModel([
          [functionCall('reports_build', { month: 'May' }, { callId: 'call_DdmO9pD3xa9XTPNJ32zg2hcA' })],
          [assistantMessage('never')],
        ]);
        const agent = new Agent({ name: 'r', model, tools: await createOpenAiAgentsTools(modelTools, plan, { cancelPlanOnAbort }) });
        return run(agent, 'report', { signal });
      });
      expect(planCancelled).toBe(cancelPlanOnAbort);
      expect(traces.map((trace) => trace.error?.code)).toEqual(['TOOL_CANCELLED']);
    }
  });

  it('a call the runtime fails closed on (no approval given anywhere) is not told to the model as a person’s denial', async () => {
    const { write, runtime } = loopRuntime(new FrameworkApprovals());
    await runtime.runPlan({ policy: { approval: { capabilities: ['writes'] } } }, async (plan) => {
      const model = new ScriptedModel([
        [functionCall('notes_write', { text: 'x' }, { callId: 'call_DdmO9pD3xa9XTPNJ32zg2hcA' })],
        [assistantMessage('Not saved.')],
      ]);
      // The bridge was not given to the tools: the SDK never interrupts, and the runtime's question goes unanswered.
      const agent = new Agent({ name: 'a', model, tools: await createOpenAiAgentsTools(new ModelTools(runtime), plan) });
      await run(agent, 'save', { signal: plan.signal });
      const told = JSON.stringify(model.calls[1]!.request.input);
      expect(told).toContain("needs a person's approval, and no approval was asked for or given for it (nobody denied it)");
      expect(told).not.toContain('a person denied');
      expect(executed(write)).toEqual([]);
    });
  });

  it('a durable loop replaying a turn (the same call id in the same plan) does not run the tool twice', async () => {
    const { write, runtime } = loopRuntime();
    await runtime.runPlan({}, async (plan) => {
      const tools = await createOpenAiAgentsTools(new ModelTools(runtime), plan);
      for (let replay = 0; replay < 2; replay++) {
        const model = new ScriptedModel([
          [functionCall('notes_write', { text: 'once' }, { callId: 'call_DdmO9pD3xa9XTPNJ32zg2hcA' })],
          [assistantMessage('Saved.')],
        ]);
        expect((await run(new Agent({ name: 'a', model, tools }), 'save', { signal: plan.signal })).finalOutput).toBe('Saved.');
      }
      expect(executed(write)).toHaveLength(1);
      expect(plan.traces[1]?.replayedFrom).toBe(plan.traces[0]?.executionId);
    });
  });
});
