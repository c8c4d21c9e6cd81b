// Part of `npm start`: a model's tool loop over the runtime. The AI SDK's own
// loop (generateText with stopWhen) runs the tools of all five sources of
// examples/agents.config.json through @ca/model-tools, driven by the AI
// SDK's scripted model (MockLanguageModelV4): no network, no keys. The model
// sends numbers as text (repaired, and the repair traced), asks to write a
// file (the plan wants approval for writes: the AI SDK's approval request,
// approved here as a person would in a UI), and calls a tool the plan
// refuses (it reads the refusal and goes on).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const { buildRuntime, loadConfig } = require('../packages/cli/dist/index.js');
const { FrameworkApprovals, ModelTools } = require('../packages/model-tools/dist/index.js');
const { createAiSdkTools } = require('../packages/model-tools/dist/ai-sdk/index.js');
const { silentLogger } = require('../packages/tool-lifecycle/dist/index.js');

// What the model "answers" at each step: the tool calls a real model would make.
const SCRIPT = [
  [
    { type: 'tool-call', toolCallId: 'call_skill', toolName: 'skill_release-notes', input: '{}' },
    { type: 'tool-call', toolCallId: 'call_sum', toolName: 'mcp_everything_get-sum', input: '{"a":"19","b":"23"}' },
    { type: 'tool-call', toolCallId: 'call_words', toolName: 'demo_word-count', input: '{"text":"one two three"}' },
    { type: 'tool-call', toolCallId: 'call_echo', toolName: 'demo_echo-twice', input: '{"message":"hello through a wrapper"}' },
    { type: 'tool-call', toolCallId: 'call_http', toolName: 'builtin_http_request', input: '{"url":"https://example.com"}' },
  ],
  [
    {
      type: 'tool-call',
      toolCallId: 'call_write',
      toolName: 'builtin_fs_write',
      input: '{"resource":"workspace","path":"notes/model.md","content":"19 + 23 = 42\\n"}',
    },
  ],
  [{ type: 'text', text: 'Done: 19 + 23 = 42, written to notes/model.md.' }],
];

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

function scriptedModel() {
  const steps = SCRIPT.map((step) => [...step]);
  return new MockLanguageModelV4({
    doGenerate: async () => {
      const content = steps.shift() ?? [{ type: 'text', text: 'nothing left to do' }];
      return { content, finishReason: { unified: content[0].type === 'tool-call' ? 'tool-calls' : 'stop', raw: undefined }, usage, warnings: [] };
    },
  });
}

const short = (text) => (text.length > 90 ? `${text.slice(0, 87)}…` : text).replace(/\s+/g, ' ');

/** Runs the loop; resolves to the number of unexpected results. */
export async function runModelLoop({ env, stdout }) {
  const configured = loadConfig({ cwd: here, env });
  // This service trusts the MCP server it ships: its annotations (echo and get-sum only read, reach nothing
  // outside) are believed, so a plan that denies the network still offers them and refuses the HTTP tool.
  const everything = { ...configured.mcpServers.everything, trustAnnotations: true };
  const config = { ...configured, mcpServers: { ...configured.mcpServers, everything } };
  const approvals = new FrameworkApprovals();
  const built = await buildRuntime(config, silentLogger, { approval: { handler: approvals } });
  const runtime = built.runtime;
  let failures = 0;
  const expect = (ok, what) => {
    if (!ok) {
      failures++;
      process.stderr.write(`model loop: ${what}\n`);
    }
  };
  try {
    const policy = { readOnly: false, requireCheckpoint: false, network: 'deny', approval: { tools: ['builtin.fs.write'] } };
    await runtime.runPlan({ policy, resources: config.resources }, async (plan) => {
      const tools = await createAiSdkTools(new ModelTools(runtime, { refused: 'mark' }), plan, { approvals });
      stdout(
        `${Object.keys(tools).length} tools offered to the model, e.g. ${Object.keys(tools)
          .filter((name) => /^(skill|mcp|demo)/.test(name))
          .slice(0, 4)
          .join(', ')}\n`,
      );
      const model = scriptedModel();
      const messages = [{ role: 'user', content: 'Add 19 and 23 and write the sum to notes/model.md.' }];
      const report = (result) => {
        for (const step of result.steps) {
          for (const part of step.content) {
            if (part.type === 'tool-result') stdout(`  ${part.toolName.padEnd(24)} ok      ${short(JSON.stringify(part.output))}\n`);
            if (part.type === 'tool-error') stdout(`  ${part.toolName.padEnd(24)} refused ${short(part.error.message)}\n`);
            if (part.type === 'tool-approval-request')
              stdout(`  ${part.toolCall.toolName.padEnd(24)} asks for approval (the AI SDK's tool-approval-request)\n`);
            if (part.type === 'text') stdout(`  model: ${part.text}\n`);
          }
        }
      };
      const first = await generateText({ model, tools, messages, stopWhen: stepCountIs(5), abortSignal: plan.signal });
      report(first);
      const request = first.content.find((part) => part.type === 'tool-approval-request');
      expect(request !== undefined, 'the write did not ask for approval');
      stdout('  (approved, as a person would in a UI: a tool-approval-response goes back with the messages)\n');
      messages.push(...first.response.messages, {
        role: 'tool',
        content: [{ type: 'tool-approval-response', approvalId: request?.approvalId, approved: true }],
      });
      const second = await generateText({ model, tools, messages, stopWhen: stepCountIs(5), abortSignal: plan.signal });
      report(second);
      stdout('\n  traces:\n');
      for (const trace of plan.traces) {
        const notes = [
          trace.error ? trace.error.code : 'ok',
          ...(trace.repairs ?? []).map((repair) => `repaired ${repair.pointer} (${repair.rule})`),
          ...(trace.approval ? [`approved by ${trace.approval.decidedBy}`] : []),
        ];
        stdout(`  ${trace.toolName.padEnd(24)} ${notes.join(', ')}\n`);
      }
      const byTool = new Map(plan.traces.map((trace) => [trace.toolName, trace]));
      expect(byTool.get('mcp.everything.get-sum')?.repairs?.length === 2, 'the sum was not repaired');
      expect(byTool.get('builtin.http.request')?.error?.code === 'TOOL_ACCESS_DENIED', 'the HTTP request was not refused');
      expect(byTool.get('builtin.fs.write')?.approval?.decision === 'approved', 'the write was not approved');
      for (const name of ['skill.release-notes', 'demo.word-count', 'demo.echo-twice']) expect(byTool.get(name)?.success === true, `${name} did not run`);
      expect(second.text.startsWith('Done'), 'the model did not finish');
    });
  } finally {
    await built.dispose();
  }
  return failures;
}
