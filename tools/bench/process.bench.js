'use strict';
// Starting `true` through the process runner (runProcess of
// @ca/sandbox: built environment, own process group, output
// capture, group clean-up after the exit) against a plain
// child_process.spawn('true') awaited to its 'close', in the same run. The
// plain spawn is the baseline the sandbox (bubblewrap) will be measured
// against too: its cost is this row's ratio plus what bwrap adds.
const { spawn } = require('node:child_process');
const { runProcess } = require('../../packages/sandbox/dist/index.js');
const { comparePaired, runWhenMain } = require('./harness');

function plainSpawn() {
  return new Promise((resolve, reject) => {
    const child = spawn('true');
    child.once('error', reject);
    child.once('close', resolve);
  });
}

async function throughRunner() {
  const result = await runProcess({ command: 'true' });
  if (result.exitCode !== 0) throw new Error(`true exited with ${result.exitCode}`);
}

async function run() {
  // A spawn costs milliseconds and the machine's load moves it: many short
  // rounds, each paired with its neighbour (see comparePaired).
  const { medians, ratios } = await comparePaired(
    {
      'plain spawn': { fn: plainSpawn },
      runProcess: { fn: throughRunner },
    },
    { baseline: 'plain spawn', rounds: 100, iterations: 10, warmup: 30 },
  );
  const ratio = ratios.runProcess;
  return [
    {
      name: "runProcess({ command: 'true' }) to its end",
      baseline: "child_process.spawn('true') to 'close'",
      baselineNs: medians['plain spawn'],
      subjectNs: medians.runProcess,
      ratio,
      maxRatio: 1.25,
      target: 1.25,
      note: `median of per-round ratios; runner adds ${((medians.runProcess - medians['plain spawn']) / 1e6).toFixed(2)} ms per start (the baseline of a sandboxed start)`,
    },
  ];
}

module.exports = { run };
runWhenMain(module, run);
