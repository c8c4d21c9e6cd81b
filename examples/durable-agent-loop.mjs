// A model's tool loop that survives the death of its host: the AI SDK's loop (generateText with a
// scripted model, MockLanguageModelV4: no network, no keys) runs as a durable plan on Restate
// (@ca/plan-restate). Each model turn is a journaled step (as Restate's AI SDK middleware journals
// model calls), and each tool call is a journaled call whose step key is the framework's toolCallId
// (@ca/model-tools passes it). The host is SIGKILLed in the middle of the second turn, inside a tool;
// a second host resumes the loop: the first turn's model answer and tool call come from the journal
// (the non-idempotent append is not made again), the interrupted idempotent tool runs again with the
// same idempotency key, and the loop finishes.
//
//   node examples/durable-agent-loop.mjs        (after `npm run build`; not part of `npm start`)
//
// It starts its own restate-server (@restatedev/restate-server, a devDependency) in a loopback-only
// network namespace — the server looks up its latest release on the internet at every start — with
// two hosts (this file with --host) behind one forwarding address. Exit 0 when every check holds.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const self = fileURLToPath(import.meta.url);
const restateTesting = () => require('../packages/plan-restate/dist/testing/index.js');

// What the model "answers" at each turn: the tool calls a real model would make, with the ids it gives them.
const SCRIPT = [
  [{ type: 'tool-call', toolCallId: 'call_note_1', toolName: 'notes_append', input: '{"text":"release 4.2: notes drafted"}' }],
  [{ type: 'tool-call', toolCallId: 'call_build_1', toolName: 'build_wait', input: '{}' }],
  [{ type: 'text', text: 'Done: notes drafted and the build is green.' }],
];
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/** A host: the same runtime, tools and plan functions as every other host, serving durable plans. */
async function host(name, workDir, ingressUrl) {
  const { generateText, stepCountIs } = await import('ai');
  const { MockLanguageModelV4 } = await import('ai/test');
  const { ToolRuntime, ToolSet, silentLogger, toolSuccess } = require('../packages/tool-lifecycle/dist/index.js');
  const { ModelTools } = require('../packages/model-tools/dist/index.js');
  const { createAiSdkTools } = require('../packages/model-tools/dist/ai-sdk/index.js');
  const { DurableApprovalRouter, createPlanWorkflow, serveDurablePlans } = require('../packages/plan-restate/dist/index.js');

  const notes = path.join(workDir, 'notes.txt');
  const tools = [
    {
      // Not idempotent: each call appends a line, whatever its key.
      descriptor: {
        name: 'notes.append',
        description: 'Appends a line to the release notes.',
        source: 'custom',
        capability: { writes: true, idempotent: false, checkpointable: false, destructive: false, openWorld: false },
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      },
      execute: async ({ text }) => {
        fs.appendFileSync(notes, `${text}\n`);
        return toolSuccess({ lines: fs.readFileSync(notes, 'utf8').trim().split('\n').length });
      },
    },
    {
      // Idempotent: waits for the build to be green (a file here), from any host, as often as asked.
      descriptor: {
        name: 'build.wait',
        description: 'Waits until the build is green.',
        source: 'custom',
        capability: { writes: false, idempotent: true, checkpointable: false, destructive: false, openWorld: false },
        inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      },
      execute: (_input, ctx) =>
        new Promise((resolve, reject) => {
          fs.appendFileSync(path.join(workDir, 'build.started'), `${name}\n`);
          const timer = setInterval(() => {
            if (!fs.existsSync(path.join(workDir, 'build.green'))) return;
            clearInterval(timer);
            resolve(toolSuccess({ green: true, seenBy: name }));
          }, 50);
          ctx.signal.addEventListener('abort', () => {
            clearInterval(timer);
            reject(new Error('cancelled'));
          });
        }),
    },
  ];

  /** The agent loop, as a durable plan: model turns are journaled steps, tool calls journaled calls keyed by their toolCallId. */
  async function agentLoop(ctx, input, runtime, steps) {
    const aiTools = await createAiSdkTools(new ModelTools(runtime), ctx);
    let turn = 0;
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        const index = turn++;
        return steps.run(`model turn ${index + 1}`, async () => {
          const content = SCRIPT[index] ?? [{ type: 'text', text: 'nothing left to do' }];
          return { content, finishReason: { unified: content[0].type === 'tool-call' ? 'tool-calls' : 'stop', raw: undefined }, usage, warnings: [] };
        });
      },
    });
    const result = await generateText({
      model,
      tools: aiTools,
      messages: [{ role: 'user', content: input.prompt }],
      stopWhen: stepCountIs(5),
      abortSignal: ctx.signal,
    });
    const calls = result.steps.flatMap((step) =>
      step.content.filter((part) => part.type === 'tool-result' || part.type === 'tool-error').map((part) => ({ tool: part.toolName, type: part.type })),
    );
    const replayed = ctx.traces.filter((trace) => trace.replayedFrom !== undefined).map((trace) => trace.toolName);
    return { text: result.text, calls, replayed, endedOn: name };
  }

  const approvals = new DurableApprovalRouter();
  const runtime = new ToolRuntime({
    sources: [new ToolSet({ id: 'demo', kind: 'custom', tools, schemaTrust: 'trusted' })],
    approvalHandler: approvals,
    logger: silentLogger,
  });
  const workflow = createPlanWorkflow({ runtime, approvals, host: name, ingressUrl, plans: { 'agent-loop': agentLoop } });
  const served = await serveDurablePlans(workflow);
  process.stdout.write(`ready ${served.port}\n`);
  process.on('SIGTERM', () => void served.drain(5_000).then(() => process.exit(0)));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(what, check, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Inside the namespace: the server, the hosts, the kill, the checks. */
async function scenario() {
  const { startForwarder, startRestateServer } = restateTesting();
  const { DurablePlanClient } = require('../packages/plan-restate/dist/index.js');
  const say = (text) => process.stdout.write(`${text}\n`);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-durable-loop-'));
  const restate = await startRestateServer();
  const hosts = [];
  const forwarder = await startForwarder(() => hosts.filter((entry) => entry.alive).map((entry) => ({ host: '127.0.0.1', port: entry.port })));
  const startHost = (name) =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [self, '--host', name, workDir, restate.ingressUrl], {
        env: { ...process.env, RESTATE_LOGGING: 'WARN' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const entry = { name, child, alive: true, port: 0 };
      child.once('exit', () => {
        entry.alive = false;
        reject(new Error(`host ${name} exited before it was ready`));
      });
      child.stdout.on('data', (chunk) => {
        const match = /ready (\d+)/.exec(String(chunk));
        if (!match) return;
        entry.port = Number(match[1]);
        hosts.push(entry);
        resolve(entry);
      });
    });
  const failures = [];
  const check = (ok, what) => {
    say(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
    if (!ok) failures.push(what);
  };
  try {
    const a = await startHost('host-a');
    const client = new DurablePlanClient({ ingressUrl: restate.ingressUrl, adminUrl: restate.adminUrl });
    await client.register(forwarder.url);
    await client.start('release-agent', { plan: 'agent-loop', input: { prompt: 'Draft the release notes, then wait for the build.' } });
    say('started the agent loop on host-a (turn 1: notes.append; turn 2: build.wait)');
    const started = path.join(workDir, 'build.started');
    await until('the second turn to start its tool on host-a', () => fs.existsSync(started));
    a.child.kill('SIGKILL');
    say('host-a SIGKILLed in the middle of turn 2, inside build.wait');
    fs.writeFileSync(path.join(workDir, 'build.green'), '');
    await startHost('host-b');
    say('host-b started; Restate resumes the loop there');
    const output = await client.output('release-agent', { timeoutMs: 120_000 });
    const status = await client.status('release-agent');
    say(`the loop ended on ${output.endedOn}: "${output.text}"`);
    const notes = fs.readFileSync(path.join(workDir, 'notes.txt'), 'utf8').trim().split('\n');
    const starts = fs.readFileSync(started, 'utf8').trim().split('\n');
    check(output.text === SCRIPT[2][0].text, 'the loop finished with the model’s last answer');
    check(output.endedOn === 'host-b', 'it ended on the host that resumed it');
    check(notes.length === 1, `notes.append ran once (${notes.length} line(s) in the notes), its turn replayed from the journal`);
    check(output.replayed.includes('notes.append'), 'the resumed loop got notes.append’s result from the journal (trace replayedFrom)');
    check(starts.join(',') === 'host-a,host-b', `build.wait, idempotent, in flight when host-a died, ran again on host-b (${starts.join(', ')})`);
    check((status?.resumes ?? 0) >= 1, `Restate resumed the plan (${status?.resumes ?? 0} time(s))`);
    check(
      output.calls.map((call) => `${call.tool}:${call.type}`).join(',') === 'notes_append:tool-result,build_wait:tool-result',
      'the model saw both tool results',
    );
  } finally {
    for (const entry of hosts) if (entry.alive) entry.child.kill('SIGKILL');
    await forwarder.close();
    await restate.stop(2_000);
    fs.rmSync(workDir, { recursive: true, force: true });
  }
  return failures.length;
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === '--host') {
  host(rest[0], rest[1], rest[2]).catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else if (mode === '--inside') {
  scenario().then(
    (failures) => process.exit(failures === 0 ? 0 : 1),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
} else {
  // Everything runs in a loopback-only network namespace: nothing it starts reaches beyond 127.0.0.0/8.
  const { command, args } = restateTesting().loopbackCommand(process.execPath, [self, '--inside']);
  const child = spawn(command, args, { stdio: 'inherit' });
  child.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
