#!/usr/bin/env node
'use strict';
// `npm run bench`: builds every package, runs each tools/bench/*.bench.js in
// its own process (with --expose-gc) and prints one table. Every row carries
// its baseline, measured in the same run. Exits non-zero when a row misses
// its target. `npm run bench -- runtime schema` runs only the named files.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');

const root = path.resolve(__dirname, '..', '..');
const benchDir = path.join(root, 'tools', 'bench');
const only = process.argv.slice(2);
// BENCH_SMOKE=1 (tools/bench/harness.js): tiny counts, to see that every benchmark runs; no target is checked.
const smoke = process.env.BENCH_SMOKE === '1';

if (!process.env.BENCH_SKIP_BUILD) {
  execFileSync('npx', ['nx', 'run-many', '-t', 'build', '--outputStyle=static'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' },
  });
}

const files = fs
  .readdirSync(benchDir)
  .filter((file) => file.endsWith('.bench.js'))
  .filter((file) => only.length === 0 || only.some((name) => file.startsWith(name)))
  .sort();

const runner = `
const file = process.argv[1];
Promise.resolve(require(file).run()).then(
  (rows) => process.stdout.write('\\n@@BENCH@@' + JSON.stringify(Array.isArray(rows) ? rows : [rows]) + '\\n'),
  (error) => { console.error(error); process.exit(1); },
);`;

function normalise(row) {
  const baselineNs = row.baselineNs ?? row.baselineNsPerOp;
  const subjectNs = row.subjectNs ?? row.subjectNsPerOp;
  const ratio = row.ratio ?? (baselineNs && subjectNs ? subjectNs / baselineNs : undefined);
  const pass = row.pass ?? (row.maxRatio !== undefined && ratio !== undefined ? ratio <= row.maxRatio : true);
  return {
    benchmark: row.name,
    baseline: row.baseline ?? '',
    'baseline figure': row.baselineValue ?? (baselineNs === undefined ? '' : formatNs(baselineNs)),
    'subject figure': row.subjectValue ?? (subjectNs === undefined ? '' : formatNs(subjectNs)),
    ratio: ratio === undefined ? '' : `${ratio.toFixed(ratio < 10 ? 3 : 1)}×`,
    target: typeof row.target === 'number' ? `≤ ${row.target}×` : (row.target ?? ''),
    result: pass ? 'ok' : 'MISSED',
    note: row.note ?? '',
  };
}

function formatNs(ns) {
  return ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`;
}

const rows = [];
let failed = false;
for (const file of files) {
  process.stderr.write(`running ${file} …\n`);
  const child = spawnSync(process.execPath, ['--expose-gc', '-e', runner, path.join(benchDir, file)], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const marker = child.stdout.lastIndexOf('@@BENCH@@');
  if (child.status !== 0 || marker < 0) {
    failed = true;
    rows.push({ benchmark: file, result: 'CRASHED', note: `exit ${child.status}` });
    continue;
  }
  for (const row of JSON.parse(child.stdout.slice(marker + '@@BENCH@@'.length))) rows.push(normalise(row));
}

console.log(`Benchmarks on ${os.cpus()[0]?.model ?? 'unknown CPU'} × ${os.cpus().length}, Node ${process.version}, ${new Date().toISOString()}`);
if (smoke) console.log('BENCH_SMOKE=1: tiny counts; these figures are not measurements, and targets are not checked.');
console.table(rows);
if (failed || (!smoke && rows.some((row) => row.result !== 'ok'))) {
  console.error('At least one benchmark missed its target or crashed.');
  process.exitCode = 1;
}
