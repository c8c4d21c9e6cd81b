'use strict';
// A host of durable plans for the tests: the same runtime and plan functions on every host.
// Usage: node host.js <name> <ingressUrl> <effectsUrl>; prints "ready <port>" when it serves.
const { ToolRuntime, ToolSet, toolSuccess } = require('@ca/tool-lifecycle');
const { DurableApprovalRouter, createPlanWorkflow, serveDurablePlans } = require('@ca/plan-restate');

const [name, ingressUrl, effectsUrl] = process.argv.slice(2);

/** Tells the test's effects server that an effect happened (it counts them, and dedups by Idempotency-Key where asked). */
async function effect(kind, key, extra = {}, planId = '') {
  const response = await fetch(`${effectsUrl}/effect/${kind}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key ?? '', 'x-host': name, 'x-plan': planId },
    body: JSON.stringify(extra),
  });
  return response.json();
}

const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason ?? new Error('aborted'));
    });
  });

const capability = (writes, idempotent) => ({ writes, checkpointable: false, idempotent, destructive: false, openWorld: true });
const tools = [
  {
    // Not idempotent: each call adds one, whatever its key.
    descriptor: { name: 'counter.add', description: 'Adds one to a counter.', source: 'custom', capability: capability(true, false) },
    execute: async (input, ctx) => {
      const counted = await effect('add', undefined, {}, ctx.planId);
      await sleep(input?.holdMs ?? 0, ctx.signal);
      return toolSuccess(counted);
    },
  },
  {
    // Idempotent: the server applies one call per Idempotency-Key.
    descriptor: { name: 'http.put', description: 'Puts a record.', source: 'custom', capability: capability(true, true) },
    execute: async (input, ctx) => {
      const counted = await effect('put', ctx.idempotencyKey, {}, ctx.planId);
      await sleep(input?.holdMs ?? 0, ctx.signal);
      return toolSuccess(counted);
    },
  },
  {
    descriptor: { name: 'mail.send', description: 'Sends a mail.', source: 'custom', capability: capability(true, false) },
    execute: async (_input, ctx) => toolSuccess(await effect('mail', undefined, {}, ctx.planId)),
  },
  {
    descriptor: { name: 'slow.wait', description: 'Waits until cancelled.', source: 'custom', capability: capability(false, true) },
    execute: async (_input, ctx) => {
      await effect('slow-started', undefined);
      const started = Date.now();
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      await effect('slow-cancelled', undefined, { afterMs: Date.now() - started, at: Date.now() });
      throw new Error('cancelled');
    },
  },
];

/** The plan: each step's outcome, in order; a failed step does not stop it. */
async function demo(ctx, input, runtime) {
  const steps = [];
  for (const [step, tool, args] of [
    ['add', 'counter.add', { holdMs: input?.holdMs ?? 0 }],
    ['put', 'http.put', { holdMs: input?.holdMs ?? 0 }],
    ['mail', 'mail.send', {}],
    ...(input?.slow ? [['slow', 'slow.wait', {}]] : []),
  ]) {
    try {
      const result = await runtime.execute(tool, args, ctx, { step });
      steps.push({ step, ok: result.ok, replayed: result.trace.replayedFrom !== undefined });
    } catch (error) {
      steps.push({ step, ok: false, code: error.code });
      if (error.code === 'TOOL_CANCELLED') break;
    }
  }
  return { steps };
}

/** Six steps: writes, an idempotent HTTP call, a non-idempotent counter, an approval wait (tools/reliability/kill-anywhere.js). */
async function six(ctx, input, runtime) {
  const steps = [];
  for (const [step, tool] of [
    ['write-1', 'http.put'],
    ['count-1', 'counter.add'],
    ['put', 'http.put'],
    ['mail', 'mail.send'],
    ['write-2', 'http.put'],
    ['count-2', 'counter.add'],
  ]) {
    try {
      const result = await runtime.execute(tool, tool === 'mail.send' ? {} : { holdMs: input?.holdMs ?? 0 }, ctx, { step });
      steps.push({ step, ok: result.ok });
    } catch (error) {
      steps.push({ step, ok: false, code: error.code });
    }
  }
  return { steps };
}

async function main() {
  const approvals = new DurableApprovalRouter();
  const runtime = new ToolRuntime({ sources: [new ToolSet({ id: 'test', kind: 'custom', tools, schemaTrust: 'trusted' })], approvalHandler: approvals });
  const workflow = createPlanWorkflow({ runtime, approvals, plans: { demo, six }, host: name, ingressUrl });
  const host = await serveDurablePlans(workflow);
  process.stdout.write(`ready ${host.port}\n`);
  process.on('SIGTERM', () => void host.close().then(() => process.exit(0)));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
