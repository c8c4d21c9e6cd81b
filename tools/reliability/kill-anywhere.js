'use strict';
// Kill anywhere: N runs of a six-step durable plan (writes, an idempotent HTTP call, a non-idempotent
// counter, an approval wait) across three hosts behind one forwarder; each run SIGKILLs the host that
// runs the plan at a random moment, then starts it again. A person's decisions are scripted: every
// approval is given, every "outcome unknown" is answered "do not run again". Prints a JSON report:
// plans ended, effects that happened twice (the effects server counts them), results lost, outcome-unknown
// decisions, resume latency (kill → the plan's next report from another host) p50/p99.
//
//   npx nx run @ca/plan-restate:build && node tools/reliability/kill-anywhere.js [runs=50]
//
// It runs itself in a loopback-only network namespace (restate-server looks up its release on the
// internet at every start): as root `unshare -n`, else `unshare -rn`.
const { spawn, spawnSync } = require('node:child_process');
const http = require('node:http');
const path = require('node:path');

const runs = Number(process.argv[2] ?? 50);
if (process.env.CA_KILL_ANYWHERE_INSIDE !== '1') {
  const { loopbackCommand } = require('@ca/plan-restate/testing');
  const { command, args } = loopbackCommand(process.execPath, [__filename, String(runs)]);
  const run = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, CA_KILL_ANYWHERE_INSIDE: '1' } });
  process.exit(run.status ?? 1);
}

const { DurablePlanClient } = require('@ca/plan-restate');
const { startForwarder, startRestateServer } = require('@ca/plan-restate/testing');
const HOST = path.join(__dirname, '..', '..', 'packages', 'plan-restate', 'src', '__fixtures__', 'host.js');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

function startEffects() {
  const effects = [];
  const applied = new Set();
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const kind = request.url.split('/').pop();
      const key = request.headers['idempotency-key'] || undefined;
      const plan = request.headers['x-plan'];
      const fresh = key === undefined || !applied.has(`${kind}:${key}`);
      if (key !== undefined) applied.add(`${kind}:${key}`);
      effects.push({ kind, key, plan, host: request.headers['x-host'], applied: fresh });
      response.end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, effects, url: `http://127.0.0.1:${server.address().port}` })));
}

function startHost(name, ingressUrl, effectsUrl) {
  const child = spawn(process.execPath, [HOST, name, ingressUrl, effectsUrl], { stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      const match = /ready (\d+)/.exec(String(chunk));
      if (match) resolve({ name, child, port: Number(match[1]), alive: true });
    });
    child.once('exit', () => reject(new Error(`host ${name} exited before it was ready`)));
  });
}

async function main() {
  const restate = await startRestateServer();
  const effects = await startEffects();
  const hosts = new Map();
  for (const name of ['host-a', 'host-b', 'host-c']) hosts.set(name, await startHost(name, restate.ingressUrl, effects.url));
  const forwarder = await startForwarder(() => [...hosts.values()].filter((host) => host.alive).map((host) => ({ host: '127.0.0.1', port: host.port })));
  const client = new DurablePlanClient({ ingressUrl: restate.ingressUrl, adminUrl: restate.adminUrl });
  await client.register(forwarder.url);
  const policy = { readOnly: false, requireCheckpoint: false, approval: { tools: ['mail.*'] } };
  const report = { runs, ended: 0, failedToEnd: [], effectsTwice: [], resultsLost: [], outcomeUnknown: 0, approvals: 0, kills: 0, resumeMs: [] };
  try {
    for (let run = 0; run < runs; run++) {
      const planId = `kill-${run}`;
      await client.start(planId, { plan: 'six', input: { holdMs: 150 }, policy });
      const killAt = Date.now() + Math.floor(Math.random() * 2_500);
      let killed;
      const deadline = Date.now() + 120_000;
      let output;
      for (;;) {
        if (Date.now() > deadline) break;
        const status = await client.status(planId).catch(() => undefined);
        if (killed === undefined && Date.now() >= killAt && status !== undefined && ['running', 'waiting for approval'].includes(status.state)) {
          const host = hosts.get(status.host);
          if (host?.alive) {
            host.alive = false;
            host.child.kill('SIGKILL');
            killed = { host: status.host, at: Date.now(), attempts: status.attempts.length };
            report.kills++;
            hosts.set(host.name, await startHost(host.name, restate.ingressUrl, effects.url));
          }
        }
        if (killed !== undefined && killed.resumedMs === undefined && status !== undefined && status.attempts.length > killed.attempts) {
          killed.resumedMs = Date.now() - killed.at;
          report.resumeMs.push(killed.resumedMs);
        }
        for (const request of await client.pending(planId).catch(() => [])) {
          const unknown = request.outcomeUnknown !== undefined;
          await client
            .answer(
              planId,
              unknown
                ? { requestId: request.requestId, decision: 'deny', reason: 'checked: it may have happened', sentBy: 'operator' }
                : { requestId: request.requestId, decision: 'approve', sentBy: 'operator' },
            )
            .then(
              () => (unknown ? report.outcomeUnknown++ : report.approvals++),
              () => undefined,
            );
        }
        if (status?.state === 'succeeded' || status?.state === 'failed') {
          output = await client.output(planId, { timeoutMs: 10_000 }).catch((error) => ({ error: error.code }));
          break;
        }
        await sleep(25);
      }
      if (output === undefined || output.error !== undefined) report.failedToEnd.push({ planId, output });
      else report.ended++;
      const mine = effects.effects.filter((effect) => effect.plan === planId);
      for (const kind of ['add', 'put', 'mail']) {
        // put: two keys (write-1/put/write-2 use three steps); add: two steps; each effect applied at most once per step.
        const appliedCount = mine.filter((effect) => effect.kind === kind && effect.applied).length;
        const most = kind === 'put' ? 3 : kind === 'add' ? 2 : 1;
        if (appliedCount > most) report.effectsTwice.push({ planId, kind, applied: appliedCount });
      }
      // A step that completed is not lost: every step the output calls ok had its effect applied.
      for (const step of output?.steps ?? []) {
        if (step.ok && step.step === 'mail' && !mine.some((effect) => effect.kind === 'mail')) report.resultsLost.push({ planId, step: step.step });
      }
    }
  } finally {
    for (const host of hosts.values()) host.child.kill('SIGKILL');
    await forwarder.close();
    effects.server.close();
    await restate.stop(2_000);
  }
  const { resumeMs, ...rest } = report;
  process.stdout.write(`${JSON.stringify({ ...rest, resumeMs: { count: resumeMs.length, p50: percentile(resumeMs, 50), p99: percentile(resumeMs, 99) } })}\n`);
  if (report.failedToEnd.length > 0 || report.effectsTwice.length > 0 || report.resultsLost.length > 0) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
