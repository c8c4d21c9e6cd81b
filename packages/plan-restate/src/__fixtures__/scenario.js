'use strict';
// Runs inside a loopback-only network namespace (see two-hosts.spec.ts): a restate-server, an effects
// server, three hosts behind one forwarder; a durable plan whose host is SIGKILLed twice; prints a JSON report.
const { spawn } = require('node:child_process');
const http = require('node:http');
const path = require('node:path');
const { DurablePlanClient } = require('@ca/plan-restate');
const { startForwarder, startRestateServer } = require('@ca/plan-restate/testing');

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

/** Counts effects; dedups calls that carry an Idempotency-Key (as an HTTP API that honours it). */
function startEffects() {
  const effects = [];
  const applied = new Map();
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const kind = request.url.split('/').pop();
      const key = request.headers['idempotency-key'];
      const host = request.headers['x-host'];
      const seen = key ? applied.get(`${kind}:${key}`) : undefined;
      const entry = { kind, key: key || undefined, host, at: Date.now(), applied: seen === undefined, ...(body ? JSON.parse(body) : {}) };
      effects.push(entry);
      if (key && seen === undefined) applied.set(`${kind}:${key}`, entry);
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ count: effects.filter((effect) => effect.kind === kind && effect.applied).length }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, effects, url: `http://127.0.0.1:${server.address().port}` })));
}

function startHost(name, ingressUrl, effectsUrl) {
  const child = spawn(process.execPath, [path.join(__dirname, 'host.js'), name, ingressUrl, effectsUrl], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      const match = /ready (\d+)/.exec(String(chunk));
      if (match) resolve({ name, child, port: Number(match[1]), alive: true });
    });
    child.once('exit', () => reject(new Error(`host ${name} exited before it was ready`)));
  });
}

async function main() {
  const report = {};
  const restate = await startRestateServer();
  const effects = await startEffects();
  const hosts = [];
  let forwarder;
  try {
    for (const name of ['host-a', 'host-b', 'host-c']) hosts.push(await startHost(name, restate.ingressUrl, effects.url));
    forwarder = await startForwarder(() => hosts.filter((host) => host.alive).map((host) => ({ host: '127.0.0.1', port: host.port })));
    const client = new DurablePlanClient({ ingressUrl: restate.ingressUrl, adminUrl: restate.adminUrl });
    await client.register(forwarder.url);
    const kill = (name) => {
      const host = hosts.find((entry) => entry.name === name);
      host.alive = false;
      host.child.kill('SIGKILL');
      return Date.now();
    };
    const policy = { readOnly: false, requireCheckpoint: false, approval: { tools: ['mail.*'] } };
    await client.start('p1', { plan: 'demo', input: { holdMs: 3_000, slow: true }, policy });

    // 1. Killed inside the non-idempotent call, after its effect: never run again silently — a person is asked.
    const added = await until('the add effect', () => effects.effects.find((effect) => effect.kind === 'add'));
    const firstKill = kill(added.host);
    const unknown = await until('the outcome-unknown request', async () => (await client.pending('p1')).find((request) => request.outcomeUnknown));
    report.outcomeUnknown = { ...unknown, killed: added.host, resumeMs: Date.now() - firstKill };
    // Statuses are reports sent beside the journal: the one saying it waits may land just after the request is listed.
    report.statusWhileAsking = await until(
      'the status to say it waits',
      async () => {
        const status = await client.status('p1');
        return status?.state === 'waiting for approval' ? status : undefined;
      },
      10_000,
    ).catch(() => client.status('p1'));
    report.listed = (await client.list()).map((plan) => ({ planId: plan.planId, host: plan.status?.host, state: plan.status?.state, resumes: plan.status?.resumes, pending: plan.pending.length }));
    await client.answer('p1', { decision: 'deny', reason: 'it happened already', sentBy: 'test (host c)' });

    // 2. The idempotent put runs (and would be retried with its key); then the mail waits for approval.
    const mailRequest = await until('the mail approval', async () => (await client.pending('p1')).find((request) => request.toolName === 'mail.send'));
    const asking = (await client.status('p1')).host;
    kill(asking);
    await sleep(300);
    report.approval = { requestId: mailRequest.requestId, askedOn: asking, answeredFrom: 'scenario (host c)' };
    await client.answer('p1', { requestId: mailRequest.requestId, decision: 'approve', sentBy: 'test (host c)' });

    // 3. The slow step: cancel from here reaches the running tool.
    await until('the slow step', () => effects.effects.find((effect) => effect.kind === 'slow-started'));
    report.slowHost = effects.effects.find((effect) => effect.kind === 'slow-started').host;
    const cancelledAt = Date.now();
    await client.cancel('p1');
    const stopped = await until('the tool to see its cancellation', () => effects.effects.find((effect) => effect.kind === 'slow-cancelled'));
    report.cancelToToolMs = stopped.at - cancelledAt;
    report.mailHost = effects.effects.find((effect) => effect.kind === 'mail')?.host;
    report.output = await client.output('p1', { timeoutMs: 30_000 }).then(
      (output) => ({ output }),
      (error) => ({ error: error.code, message: error.message }),
    );
    report.effects = effects.effects.map(({ kind, host, applied }) => ({ kind, host, applied }));
  } finally {
    for (const host of hosts) if (host.alive) host.child.kill('SIGKILL');
    await forwarder?.close();
    effects.server.close();
    await restate.stop(2_000);
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error) => {
  process.stdout.write(`${JSON.stringify({ error: String(error?.stack ?? error) })}\n`);
  process.exit(1);
});
