import { ToolRuntime, silentLogger } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { FrameworkApprovals } from '../approval/framework-approvals';
import { ModelTools } from '../calls/model-tools';
import { createAiSdkTools } from './index';

// The same ToolSet in ai 6 (installed as the alias ai-v6), driven by its MockLanguageModelV3.
const ai6 = require('ai-v6') as typeof import('ai');
const { MockLanguageModelV3 } = require('ai-v6/test');

describe('AI SDK 6 agent loop over the runtime', () => {
  it('repairs, and asks for approval through the AI SDK 6 approval parts', async () => {
    expect(require('ai-v6/package.json').version).toMatch(/^6\./);
    const search = new TestTool({
      name: 'docs.search',
      inputSchema: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } }, required: ['query'] },
      capability: { writes: false },
    });
    const write = new TestTool({
      name: 'notes.write',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      capability: { writes: true },
    });
    const approvals = new FrameworkApprovals();
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([search, write])], logger: silentLogger, approvalHandler: approvals });
    const steps: any[] = [
      [{ type: 'tool-call', toolCallId: 'c1', toolName: 'docs_search', input: '{"query":"q","limit":"2"}' }],
      [{ type: 'tool-call', toolCallId: 'c2', toolName: 'notes_write', input: '{"text":"t"}' }],
      [{ type: 'text', text: 'done' }],
    ];
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        const content = steps.shift();
        return {
          content,
          finishReason: { unified: content[0].type === 'tool-call' ? 'tool-calls' : 'stop', raw: undefined },
          usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
          warnings: [],
        };
      },
    });
    await runtime.runPlan({ policy: { approval: { capabilities: ['writes'] } } }, async (plan) => {
      const tools = await createAiSdkTools(new ModelTools(runtime), plan, { approvals });
      const first = await ai6.generateText({ model, tools: tools as any, prompt: 'go', stopWhen: ai6.stepCountIs(5) });
      expect(search.events.find((event) => event.type === 'execute')?.input).toEqual({ query: 'q', limit: 2 });
      const request: any = first.content.find((part: any) => part.type === 'tool-approval-request');
      expect(request.toolCall.toolName).toBe('notes_write');
      const second = await ai6.generateText({
        model,
        tools: tools as any,
        messages: [
          { role: 'user', content: 'go' },
          ...first.response.messages,
          { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }] },
        ],
        stopWhen: ai6.stepCountIs(5),
      });
      expect(second.text).toBe('done');
      expect(plan.traces.map((trace) => [trace.toolName, trace.repairs?.length, trace.approval?.decidedBy])).toEqual([
        ['docs.search', 1, undefined],
        ['notes.write', undefined, 'AI SDK approval response'],
      ]);
    });
  });
});
