// Code mode with a policy (`node examples/code-mode.mjs`, after `npm run build`): "which of these
// 40 files changed since the last release call a deprecated API? Open an issue for each."
// A scripted model — the tool call a real one would send, in the OpenAI Chat Completions format —
// answers with one program instead of ~30 tool calls. The program runs in @ca/code-mode's QuickJS
// sandbox; each of its calls (tools of three sources: built-in file tools, custom tools, a
// wrapped tool) is a runtime.execute in the plan. The plan asks before `issues.open`: the first
// issue the program opens suspends it (CODE_APPROVAL_PENDING, naming that inner call); a person
// approves it for the rest of the plan; the same call runs again and the program resumes by
// replay — the calls it had made are answered from the plan's journal, none runs twice.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWorkspace, workspaceSources } from './code-mode-workspace.mjs';

const require = createRequire(import.meta.url);
const { createCodeMode } = require('../packages/code-mode/dist/index.js');
const { FrameworkApprovals, ModelTools } = require('../packages/model-tools/dist/index.js');
const { ToolRuntime, silentLogger } = require('../packages/tool-lifecycle/dist/index.js');

/** The program the scripted model writes, against the declarations code.run's description gives it. */
export const PROGRAM = `
const since = await tools.releases_latest();
const changed = await tools.releases_changed_files({ since });
const doc = await tools.builtin_fs_read({ resource: 'workspace', path: 'DEPRECATIONS.md' });
const deprecated = [...doc.content.matchAll(/\`(\\w+)\`/g)].map((m) => m[1]);
const hits = [];
for (const file of changed) {
  const { content } = await tools.builtin_fs_read({ resource: 'workspace', path: file });
  const used = deprecated.filter((name) => content.includes(name + '('));
  if (used.length > 0) hits.push({ file, used });
}
console.log(changed.length + ' files changed since ' + since + ', ' + hits.length + ' call a deprecated API');
const opened = [];
for (const hit of hits) {
  const { number } = await tools.issues_open({ title: 'Deprecated API in ' + hit.file, body: 'Calls ' + hit.used.join(', ') + ', removed in 2.0.' });
  opened.push({ file: hit.file, used: hit.used, issue: number });
}
return { since, changed: changed.length, opened };
`;

/**
 * Runs the example; resolves to what it found, the traces of the plan and the issues the tracker
 * holds. `approve(pending)` is the person: it gets the inner call waiting for approval and says
 * yes (default) or no.
 */
export async function runCodeModeExample({ write = (text) => process.stdout.write(text), approve = () => true } = {}) {
  const { root } = createWorkspace();
  const { sources, resources } = workspaceSources(root);
  const approvals = new FrameworkApprovals();
  const holder = {};
  const codeMode = createCodeMode({
    runtime: () => holder.runtime,
    // An inner call the runtime would ask about suspends the program: the caller asks its person.
    suspend: (call) => approvals.needsApproval(call.descriptor, call.input, call.ctx),
  });
  const runtime = (holder.runtime = new ToolRuntime({ sources: [...sources, codeMode.source], approvalHandler: approvals, logger: silentLogger }));
  const modelTools = new ModelTools(runtime, { codeMode: { describe: () => codeMode.description() } });
  const policy = { readOnly: false, requireCheckpoint: false, approval: { tools: ['issues.open'] } };
  try {
    return await runtime.runPlan({ planId: 'code-mode-example', policy, resources }, async (plan) => {
      const definitions = await modelTools.definitions('openai-chat', plan);
      write(
        `The model is given ${definitions.map((tool) => tool.function.name).join(' and ')}; code.run declares ${(await runtime.listTools()).length - 1} tools.\n`,
      );
      // What the model answered (choices[0].message.tool_calls[0]).
      const toolCall = { id: 'call_7Hq2cXbV0mRk', type: 'function', function: { name: 'code_run', arguments: JSON.stringify({ code: PROGRAM }) } };
      let { message, outcome } = await modelTools.call('openai-chat', toolCall, plan);
      const asked = [];
      while (!outcome.ok && outcome.error?.code === 'CODE_APPROVAL_PENDING') {
        const pending = outcome.error.pending;
        asked.push(pending);
        write(`The program waits: ${pending.toolName} ${JSON.stringify(pending.input)} needs approval.\n`);
        const yes = await approve(pending);
        approvals.grant(
          plan,
          pending.toolName,
          pending.input,
          yes ? { scope: 'tool', decidedBy: 'the example' } : { scope: 'once', decidedBy: 'the example', denied: { reason: 'not now' } },
        );
        write(yes ? `Approved ${pending.toolName} for the rest of the plan; the program resumes.\n` : `Denied; the program resumes and sees the refusal.\n`);
        // The same program again, under the step the pending call names: it replays to where it stopped.
        ({ message, outcome } = await modelTools.call('openai-chat', { ...toolCall, id: pending.resumeStep }, plan));
      }
      // What goes back to the model answers its own call.
      message = { ...message, tool_call_id: toolCall.id };
      if (!outcome.ok) throw new Error(`code.run failed: ${message.content}`);
      const { result, logs } = outcome.result.output;
      for (const line of logs) write(`  log: ${line}\n`);
      for (const entry of result.opened) write(`  #${entry.issue} ${entry.file} (${entry.used.join(', ')})\n`);
      const issues = JSON.parse(fs.readFileSync(path.join(root, 'issues.json'), 'utf8'));
      write(`${result.opened.length} issues opened, ${plan.traces.length} executions traced, ${asked.length} approval asked.\n`);
      return { result, logs, asked, issues, traces: [...plan.traces], message };
    });
  } finally {
    await codeMode.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** What a test checks: each inner call's step and whether it ran or was answered from the journal. */
function summary({ result, asked, issues, traces }) {
  return {
    result,
    asked,
    issues,
    traces: traces.map((trace) => ({
      toolName: trace.toolName,
      success: trace.success,
      error: trace.error?.code,
      parent: trace.parentExecutionId !== undefined,
      replayed: trace.replayedFrom !== undefined,
      approval: trace.approval?.decidedBy,
    })),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const json = process.argv.includes('--json');
  runCodeModeExample(json ? { write: () => undefined } : {}).then(
    (ran) => {
      if (json) process.stdout.write(`${JSON.stringify(summary(ran))}\n`);
    },
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
