'use strict';
// The kernel sandbox (@ca/sandbox, bubblewrap), in the same run
// as its baselines:
// 1. starting `true` in the sandbox through runProcess, against a plain
//    child_process.spawn('true') awaited to 'close' (the baseline of
//    process.bench.js): with the network, without it (a network namespace of
//    its own), and on the overlay of a checkpoint plan. Target: at most 15 ms
//    more than the plain spawn.
//    And the launcher's own share: the same sandboxed 'true' against bwrap
//    started by hand with the same options (`bwrap <options> -- true`), both
//    through runProcess and with child_process.spawn, in the same run. Target:
//    the launcher adds at most 3 ms to runProcess of bwrap by hand.
// 2. turning an overlay with 1,000 changed files into changes: the sandbox's
//    reading of the upper layer, then the application to the real tree with
//    the previous content of every file captured (as builtin.command.run
//    keeps it for rollback), against copying the same 1,000 files with
//    fs.copyFile.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { buildProcessEnvironment, createSandbox, probeSandbox, runProcess } = require('../../packages/sandbox/dist/index.js');
// The options the launcher builds, to start bubblewrap by hand with the same ones (an internal module of the package).
const { bubblewrapArguments } = require('../../packages/sandbox/dist/sandbox/bubblewrap-arguments.js');
const { resourceFromPath } = require('../../packages/tool-context/dist/index.js');
const { comparePaired, median, runWhenMain } = require('./harness');

const MAX_ADDED_MS = 15;
const MAX_LAUNCHER_SHARE_MS = 3;
const FILES = 1_000;

function plainSpawn() {
  return new Promise((resolve, reject) => {
    const child = spawn('true');
    child.once('error', reject);
    child.once('close', resolve);
  });
}

function spawnToClose(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, options);
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`))));
  });
}

async function sandboxedTrue(sandbox, launch, cwd) {
  const launcher = await sandbox.launcher(launch);
  const result = await runProcess({ command: 'true', cwd, launcher });
  if (result.exitCode !== 0) throw new Error(`sandboxed true exited with ${result.exitCode}: ${result.stderr.text}`);
  launcher.overlay()?.discard();
}

/** A tree of 10 folders of 100 files each, 1 KiB per file. */
function makeTree(root) {
  for (let folder = 0; folder < 10; folder++) {
    fs.mkdirSync(path.join(root, `d${folder}`));
    for (let file = 0; file < FILES / 10; file++) fs.writeFileSync(path.join(root, `d${folder}`, `f${file}.txt`), `${'original line\n'.repeat(73)}`);
  }
}

async function overlayRound(sandbox, root) {
  const resources = [resourceFromPath({ id: 'tree', path: root, access: 'write' })];
  const launcher = await sandbox.launcher({ resources, writes: 'overlay', network: false });
  const result = await runProcess({ command: 'sh', args: ['-c', 'for f in d*/f*.txt; do echo changed >> "$f"; done'], cwd: root, launcher });
  if (result.exitCode !== 0) throw new Error(`the overlay command failed: ${result.stderr.text}`);
  // Reading the upper layer happens in the launcher's release: the part of the total after the program's exit.
  const readMs = result.durations.totalMs - result.durations.startMs - result.durations.runMs;
  const overlay = launcher.overlay();
  if (overlay.changes.length !== FILES) throw new Error(`expected ${FILES} changes, got ${overlay.changes.length}`);
  const applyStart = performance.now();
  await overlay.apply({
    capture: async (_change, target) => {
      const file = await target.directory.openFile(target.name);
      try {
        return (await file.handle.readFile()).toString('base64');
      } finally {
        await file.close();
      }
    },
  });
  return { readMs, applyMs: performance.now() - applyStart };
}

async function copyRound(source, target) {
  const start = performance.now();
  for (let folder = 0; folder < 10; folder++) {
    fs.mkdirSync(path.join(target, `d${folder}`), { recursive: true });
    for (let file = 0; file < FILES / 10; file++) {
      await fs.promises.copyFile(path.join(source, `d${folder}`, `f${file}.txt`), path.join(target, `d${folder}`, `f${file}.txt`));
    }
  }
  return performance.now() - start;
}

async function run() {
  const support = await probeSandbox();
  if (!support.available) {
    return [{ name: 'kernel sandbox', pass: false, note: `not measured: ${support.reason}. Install bubblewrap (apt-get install bubblewrap).` }];
  }
  const sandbox = createSandbox('required');
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ca-sandbox-bench-')));
  const rows = [];
  try {
    const resources = [resourceFromPath({ id: 'work', path: work, access: 'write' })];
    // bwrap as a person would start it, with the options the launcher gives it for the same run.
    const env = buildProcessEnvironment({});
    const byHand = [...bubblewrapArguments({ mounts: [{ source: work, target: work, writable: true }], network: true, cwd: work, env }), '--', 'true'];
    const { medians } = await comparePaired(
      {
        'plain spawn': { fn: plainSpawn },
        'bwrap by hand, spawn': { fn: () => spawnToClose(support.bwrapPath, byHand, { cwd: work, env: {} }) },
        'bwrap by hand, runProcess': {
          fn: async () => {
            const result = await runProcess({ command: support.bwrapPath, args: byHand, cwd: work, inheritEnv: [] });
            if (result.exitCode !== 0) throw new Error(`bwrap by hand exited with ${result.exitCode}: ${result.stderr.text}`);
          },
        },
        'sandbox, network allowed': { fn: () => sandboxedTrue(sandbox, { resources, writes: 'in-place', network: true }, work) },
        'sandbox, no network': { fn: () => sandboxedTrue(sandbox, { resources, writes: 'in-place', network: false }, work) },
        'sandbox, checkpoint overlay': { fn: () => sandboxedTrue(sandbox, { resources, writes: 'overlay', network: false }, work) },
      },
      { baseline: 'plain spawn', rounds: 30, iterations: 5, warmup: 10 },
    );
    const base = medians['plain spawn'];
    const launcherShareMs = (medians['sandbox, network allowed'] - medians['bwrap by hand, runProcess']) / 1e6;
    rows.push({
      name: "the launcher's own share: a sandboxed 'true' through runProcess, against bwrap started by hand with the same options through runProcess",
      baseline: "runProcess of 'bwrap <options> -- true'",
      baselineNs: medians['bwrap by hand, runProcess'],
      subjectNs: medians['sandbox, network allowed'],
      target: `≤ +${MAX_LAUNCHER_SHARE_MS} ms`,
      pass: launcherShareMs <= MAX_LAUNCHER_SHARE_MS,
      note: `adds ${launcherShareMs.toFixed(2)} ms (the options through a pipe, the program looked up, the namespace's end awaited); bwrap by hand with child_process.spawn: ${(medians['bwrap by hand, spawn'] / 1e6).toFixed(2)} ms, runProcess of it: ${(medians['bwrap by hand, runProcess'] / 1e6).toFixed(2)} ms`,
    });
    for (const [name, label] of [
      ['sandbox, network allowed', "a sandboxed 'true' (read-only root, own /tmp, /proc, /dev, PID namespace; network allowed)"],
      ['sandbox, no network', "a sandboxed 'true' without the network (own network namespace)"],
      ['sandbox, checkpoint overlay', "a sandboxed 'true' on the overlay of a checkpoint plan (unshare + mount + bwrap, upper layer read back)"],
    ]) {
      const addedMs = (medians[name] - base) / 1e6;
      const gated = name !== 'sandbox, checkpoint overlay';
      rows.push({
        name: label,
        baseline: "child_process.spawn('true') to 'close'",
        baselineNs: base,
        subjectNs: medians[name],
        target: gated ? `≤ +${MAX_ADDED_MS} ms` : 'reported',
        pass: gated ? addedMs <= MAX_ADDED_MS : true,
        note: `adds ${addedMs.toFixed(2)} ms per start (median of ${30 * 5} starts)`,
      });
    }

    const reads = [];
    const applies = [];
    const copies = [];
    for (let round = 0; round < 5; round++) {
      const tree = path.join(work, `tree-${round}`);
      const copy = path.join(work, `copy-${round}`);
      fs.mkdirSync(tree);
      makeTree(tree);
      const { readMs, applyMs } = await overlayRound(sandbox, tree);
      reads.push(readMs);
      applies.push(applyMs);
      copies.push(await copyRound(tree, copy));
      fs.rmSync(tree, { recursive: true, force: true });
      fs.rmSync(copy, { recursive: true, force: true });
    }
    const readMs = median(reads);
    const applyMs = median(applies);
    const copyMs = median(copies);
    rows.push({
      name: `an overlay with ${FILES} changed files turned into changes: upper layer read, previous contents captured, applied`,
      baseline: `fs.copyFile of the same ${FILES} files`,
      baselineNs: copyMs * 1e6,
      subjectNs: (readMs + applyMs) * 1e6,
      target: 'reported',
      pass: true,
      note: `reading ${readMs.toFixed(0)} ms, capture + apply ${applyMs.toFixed(0)} ms (median of 5)`,
    });
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

module.exports = { run };
runWhenMain(module, run);
