#!/usr/bin/env node
'use strict';
// The demo behind `npm start`: runs the plans of examples/plans through the
// `agents` command against a temporary workspace, with nothing but what the
// repository ships (no network, no keys), and prints the traces at the end.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { main, processIo } = require('../packages/cli/dist/index.js');
const { probeSandbox } = require('../packages/sandbox/dist/index.js');

const root = path.resolve(__dirname, '..');

function snapshot(dir) {
  const out = {};
  const walk = (current) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(current, entry.name);
      const key = path.relative(dir, full);
      const mode = (fs.lstatSync(full).mode & 0o7777).toString(8);
      if (entry.isDirectory()) {
        out[`${key}/`] = `dir ${mode}`;
        walk(full);
      } else out[key] = `${mode} ${crypto.createHash('sha256').update(fs.readFileSync(full)).digest('hex')}`;
    }
  };
  walk(dir);
  return JSON.stringify(out);
}

/** What the demo is doing, for the message of an error that ends it. */
let running = 'the setup';
/**
 * Set by Ctrl-C or SIGTERM. The `agents` command cancels the plan that is
 * running (it listens too); the demo then stops instead of going on with
 * the next plan, so the plan's MCP servers are ended, not left behind.
 */
let stopRequested;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopRequested = signal;
  });
}

function stopIfRequested() {
  if (stopRequested !== undefined) throw new Error(`stopped by ${stopRequested}`);
}

async function run() {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'agents-demo-'));
  const tracesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agents-demo-traces-'));
  const stateDir = path.join(tracesDir, 'state');
  fs.writeFileSync(path.join(workspace, 'README.md'), '# Demo workspace\n\nHello from the agents demo.\n');
  fs.writeFileSync(path.join(workspace, 'data.json'), `${JSON.stringify({ answer: 42 }, null, 2)}\n`);
  const io = { ...processIo(), cwd: __dirname, env: { ...process.env, DEMO_WORKSPACE: workspace, DEMO_ROOT: root } };
  // [file, title, the exit code the plan is expected to end with]
  const plans = [
    ['01-edit-and-rollback.yaml', 'Built-in file tools write, edit and delete; a rollback restores the tree.', 0],
    ['02-every-source.yaml', 'A skill, an MCP server over stdio, a custom tool and wrapped tools.', 0],
    ['03-read-only.yaml', 'A read-only plan refuses a writing tool.', 0],
    ['04-checkpoint-required.yaml', 'A checkpoint-required plan refuses a tool that cannot be undone.', 0],
    ['05-checked-before-running.yaml', 'A typo in step 2 is found before step 1 runs: nothing is written.', 2],
    ['06-sandbox-read-only.yaml', 'The kernel sandbox: a command in a read-only plan reads the workspace and fails to write it.', 0],
    ['07-sandbox-checkpoint.yaml', 'The kernel sandbox: sed -i in a checkpoint plan, rolled back byte-identical.', 0],
    ['08-mcp-resources-and-tasks.yaml', 'An MCP resource read, a prompt, and a tool that runs as an MCP task.', 0],
  ];
  // Plans 6 and 7 need the kernel sandbox (bubblewrap on Linux); the configuration's "sandbox": "auto" uses it where it works.
  const sandbox = await probeSandbox();
  let failures = 0;
  try {
    const before = snapshot(workspace);
    for (const [index, [file, title, expectedCode]] of plans.entries()) {
      stopIfRequested();
      running = `plan examples/plans/${file}`;
      io.stdout(`\n=== ${index + 1}. ${title}\n$ agents plan run examples/plans/${file}\n\n`);
      if (file.startsWith('06-') || file.startsWith('07-')) {
        if (!sandbox.available) {
          io.stdout(
            `skipped: the kernel sandbox does not work here (${sandbox.reason}). Install bubblewrap (apt-get install bubblewrap) on Linux to see it.\n`,
          );
          continue;
        }
      }
      const beforePlan = snapshot(workspace);
      const tracesFile = path.join(tracesDir, `${path.basename(file, '.yaml')}.jsonl`);
      const code = await main(['--state-dir', stateDir, 'plan', 'run', path.join('plans', file), '--traces', tracesFile], io);
      if (code !== expectedCode) {
        failures++;
        io.stderr(`plan ${file} exited with ${code}, not ${expectedCode}\n`);
      } else if (expectedCode !== 0) {
        io.stdout(`\n(exit code ${code}, as expected)\n`);
      }
      if (file.startsWith('05-') && fs.existsSync(path.join(workspace, 'written-before-the-typo.txt'))) {
        failures++;
        io.stderr('step 1 of the plan with a typo wrote its file: the plan was not checked before it ran\n');
      }
      if (index === 0) {
        const identical = snapshot(workspace) === before;
        io.stdout(`\nWorkspace after rollback is ${identical ? 'byte-identical to before' : 'DIFFERENT from before'}.\n`);
        if (!identical) failures++;
      }
      if (file.startsWith('06-') || file.startsWith('07-')) {
        const identical = snapshot(workspace) === beforePlan;
        const what = file.startsWith('06-') ? 'the read-only plan' : 'the rollback of sed -i';
        io.stdout(`\nWorkspace after ${what} is ${identical ? 'byte-identical to before' : 'DIFFERENT from before'}.\n`);
        if (!identical) failures++;
      }
    }
    stopIfRequested();
    running = "the model's tool loop (examples/model-loop.mjs)";
    io.stdout(`\n=== ${plans.length + 1}. A model's tool loop (the AI SDK's, a scripted model) over all five sources: repairs, a refusal, an approval\n\n`);
    const { runModelLoop } = await import('./model-loop.mjs');
    failures += await runModelLoop({ env: io.env, stdout: io.stdout });
    io.stdout(
      `\n=== ${plans.length + 2}. A model finds its tools among all five sources (tools.search, deferred loading) and reads a large output by parts\n\n`,
    );
    stopIfRequested();
    running = 'the tool search (examples/tool-search.mjs)';
    const { runToolSearch } = await import('./tool-search.mjs');
    failures += await runToolSearch({ env: io.env, stdout: io.stdout, stateDir });
    stopIfRequested();
    running = 'the traces';
    io.stdout('\n=== Traces (JSON Lines, one per execution)\n');
    for (const file of fs
      .readdirSync(tracesDir)
      .filter((name) => name.endsWith('.jsonl'))
      .sort()) {
      const lines = fs.readFileSync(path.join(tracesDir, file), 'utf8').trim().split('\n').filter(Boolean);
      io.stdout(`\n${file} — ${lines.length} trace(s)\n`);
      for (const line of lines) {
        const trace = JSON.parse(line);
        io.stdout(
          `  ${trace.startedAt}  ${trace.toolName.padEnd(24)} ${trace.success ? 'ok    ' : 'failed'} ${trace.durationMs.toFixed(1).padStart(7)} ms ${String(trace.resultSizeBytes).padStart(6)} B${trace.error ? `  ${trace.error.code}` : ''}\n`,
        );
      }
    }
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(tracesDir, { recursive: true, force: true });
  }
  io.stdout(`\n${failures === 0 ? 'Demo finished: every plan behaved as expected.' : `Demo finished with ${failures} unexpected result(s).`}\n`);
  return failures === 0 ? 0 : 1;
}

run().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    console.error(`The demo failed while running ${running}:`, error);
    process.exitCode = 1;
  },
);
