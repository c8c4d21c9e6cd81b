'use strict';
// Runs inside a loopback-only network namespace (see durable-cli.spec.ts): a restate-server, a forwarder in front of
// two `agents worker` processes, and the `agents` command in other processes: a durable plan file whose worker is
// SIGKILLed mid-plan and resumed by the second worker; list, approve and cancel from other processes. Prints a JSON report.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { startForwarder, startRestateServer } = require('@ca/plan-restate/testing');

const bin = path.resolve(__dirname, '..', '..', '..', 'dist', 'bin.js');
const config = path.join(__dirname, 'agents.config.json');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what, check, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A process of the command, its output collected. */
function start(args, env) {
  const child = spawn(process.execPath, [bin, '-c', config, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const run = { child, stdout: '', stderr: '', code: undefined };
  child.stdout.on('data', (chunk) => (run.stdout += chunk));
  child.stderr.on('data', (chunk) => (run.stderr += chunk));
  // 'close', not 'exit': the output is all read by then.
  run.exited = new Promise((resolve) => child.once('close', (code, signal) => resolve((run.code = code ?? signal))));
  return run;
}

/** A short command in another process: its exit code and output (never spawnSync: this process runs the forwarder). */
async function agents(args, env) {
  const run = start(args, env);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 60_000);
  await run.exited;
  clearTimeout(timer);
  return { code: run.code, stdout: run.stdout, stderr: run.stderr };
}

async function main() {
  const report = {};
  const restate = await startRestateServer();
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-durable-cli-'));
  const workers = [];
  let forwarder;
  let runner;
  let lastList;
  try {
    fs.writeFileSync(path.join(workspace, 'a.txt'), 'original');
    const env = (name) => ({
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      AGENTS_STATE_DIR: fs.mkdtempSync(path.join(workspace, `.state-${name}-`)),
      RESTATE_INGRESS: restate.ingressUrl,
      RESTATE_ADMIN: restate.adminUrl,
      TEST_WORKSPACE: workspace,
      PLAN_JOURNAL_KEY: 'a journal key of the test, 32 bytes or more',
      TEST_SECRET: 'never-in-the-journal-7f3a9c',
    });
    const ports = { a: await freePort(), b: await freePort() };
    forwarder = await startForwarder(() => workers.filter((worker) => worker.alive).map((worker) => ({ host: '127.0.0.1', port: worker.port })));
    const startWorker = async (name, register) => {
      const run = start(['worker', '--port', String(ports[name]), '--name', `worker-${name}`, ...(register ? ['--register', forwarder.url] : [])], env(name));
      const worker = { name: `worker-${name}`, port: ports[name], run, alive: true };
      run.exited.then(() => (worker.alive = false));
      workers.push(worker); // before it registers: registration reaches it through the forwarder
      await until(`worker ${name} to serve`, () => run.stdout.includes('serving durable plans') || run.code !== undefined);
      if (run.code !== undefined) throw new Error(`worker ${name} exited with ${run.code}: ${run.stderr}`);
      return worker;
    };

    // 1. A durable plan file, started by one process and followed to its end; its worker killed inside the gate.
    const a = await startWorker('a', true);
    const started = path.join(workspace, 'gate.started');
    runner = start(['plan', 'run', path.join(__dirname, 'resume.yaml'), '--durable'], env('runner'));
    await until('the gate to start on worker a', () => fs.existsSync(started) || runner.code !== undefined);
    if (runner.code !== undefined) throw new Error(`plan run exited with ${runner.code}: ${runner.stderr}`);
    a.run.child.kill('SIGKILL');
    await a.run.exited;
    fs.writeFileSync(path.join(workspace, 'gate.open'), '');
    await startWorker('b', false);

    // 2. From other processes: the plan waits for approval on worker b, resumed; approved from elsewhere.
    const listed = await until('the resumed plan to wait for approval', async () => {
      const list = await agents(['plan', 'list', '--json'], env('lister'));
      lastList = list;
      if (list.code !== 0) return undefined;
      const body = JSON.parse(list.stdout);
      const plan = (body.durable ?? []).find((entry) => entry.planId === 'resumed');
      return plan?.status?.state === 'waiting for approval' && plan.pending.length === 1 ? plan : undefined;
    });
    report.listed = { host: listed.status.host, state: listed.status.state, resumes: listed.status.resumes, pending: listed.pending.map((request) => request.requestId) };
    const table = await agents(['plan', 'list'], env('lister'));
    report.listTable = table.stdout;
    // What Restate holds while the plan waits: its journal and state, as its admin API shows them.
    const dump = await fetch(`${restate.adminUrl}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: 'SELECT * FROM sys_journal' }),
    }).then((response) => response.text());
    const state = await fetch(`${restate.adminUrl}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: 'SELECT * FROM state' }),
    }).then((response) => response.text());
    const invocations = await fetch(`${restate.adminUrl}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: 'SELECT * FROM sys_invocation' }),
    }).then((response) => response.text());
    const secret = 'never-in-the-journal-7f3a9c';
    // As text, as hex (the raw column) and as a list of byte values (entry_json's payloads).
    const forms = [secret, 'changed by the plan', 'a.txt'].flatMap((text) => [text, Buffer.from(text).toString('hex'), Buffer.from(text).join(',')]);
    report.journal = {
      entries: (JSON.parse(dump).rows ?? []).length,
      stateRows: (JSON.parse(state).rows ?? []).length,
      found: forms.filter((form) => dump.includes(form) || state.includes(form) || invocations.includes(form)),
      // The plan's journaled steps, by name: 'decide <step>' and 'call <step>' (or 'call <step>' alone for a retry-safe call).
      steps: (JSON.parse(dump).rows ?? [])
        .filter((row) => row.id === listed.invocationId && typeof row.name === 'string' && /^(decide|call|plan) /.test(row.name))
        .map((row) => row.name),
    };
    const approve = await agents(['plan', 'approve', 'resumed'], env('approver'));
    report.approve = { code: approve.code, stdout: approve.stdout.trim(), stderr: approve.stderr.trim() };
    await Promise.race([runner.exited, sleep(60_000)]);
    report.run = { code: runner.code, stdout: runner.stdout, stderr: runner.stderr };
    report.file = fs.readFileSync(path.join(workspace, 'a.txt'), 'utf8');
    report.counts = fs.readFileSync(path.join(workspace, 'counts'), 'utf8').trim().split('\n');
    report.gateStarts = fs.readFileSync(started, 'utf8').trim().split('\n');
    report.pids = { a: a.run.child.pid, b: workers[1].run.child.pid };

    // 3. A plan cancelled from another process: the tool sees its signal, the command that follows it exits 130.
    const cancelRun = start(['plan', 'run', path.join(__dirname, 'cancel.yaml')], env('runner2'));
    await until('the second plan to start', () => fs.existsSync(path.join(workspace, 'never.started')) || cancelRun.code !== undefined);
    const cancel = await agents(['plan', 'cancel', 'cancelled'], env('canceller'));
    report.cancel = { code: cancel.code, stdout: cancel.stdout.trim(), stderr: cancel.stderr.trim() };
    await Promise.race([cancelRun.exited, sleep(60_000)]);
    report.cancelled = {
      code: cancelRun.code,
      stdout: cancelRun.stdout,
      stderr: cancelRun.stderr,
      toolSawSignal: fs.existsSync(path.join(workspace, 'never.cancelled')),
    };
    const cancelAgain = await agents(['plan', 'cancel', 'cancelled'], env('canceller'));
    report.cancelAgain = { code: cancelAgain.code, stderr: cancelAgain.stderr.trim() };

    // 4. SIGTERM drains the worker: it exits on its own, with 0.
    const b = workers[1];
    b.run.child.kill('SIGTERM');
    await Promise.race([b.run.exited, sleep(30_000)]);
    report.drain = { code: b.run.code, stderr: b.run.stderr };
  } catch (error) {
    report.error = String(error && error.stack ? error.stack : error);
    report.debug = {
      lastList,
      runner: runner && { stdout: runner.stdout, stderr: runner.stderr.slice(-3_000) },
      workers: workers.map((worker) => ({ name: worker.name, stdout: worker.run.stdout, stderr: worker.run.stderr.slice(-3_000) })),
    };
  } finally {
    for (const worker of workers) if (worker.alive) worker.run.child.kill('SIGKILL');
    await forwarder?.close();
    await restate.stop(2_000);
    fs.rmSync(workspace, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stdout.write(`${JSON.stringify({ error: String(error) })}\n`);
    process.exit(1);
  },
);
