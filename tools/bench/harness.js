'use strict';
// Small, dependency-free measurement helpers shared by the benchmarks.
// Every benchmark measures its baseline in the same process and the same
// run, interleaving rounds of baseline and subject so that drift (CPU
// frequency, GC, the other core's load) hits both alike, and reports medians.

const { performance } = require('node:perf_hooks');

/**
 * BENCH_SMOKE=1 runs every benchmark with tiny counts, to prove that it still
 * runs (`npm test` does, through tools/bench/src/smoke.spec.ts), not to
 * measure: its figures mean nothing and its targets are not checked.
 */
const SMOKE = process.env.BENCH_SMOKE === '1';

/** `full` in a real run; `smoke` (never more than `full`) in a smoke run. */
function scaled(full, smoke) {
  return SMOKE ? Math.min(full, smoke) : full;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** ns per call of a synchronous function, over one batch. */
function timeSync(fn, iterations) {
  const start = performance.now();
  for (let index = 0; index < iterations; index++) fn(index);
  return ((performance.now() - start) * 1e6) / iterations;
}

/** ns per call of an async function awaited sequentially, over one batch. */
async function timeAsync(fn, iterations) {
  const start = performance.now();
  for (let index = 0; index < iterations; index++) await fn(index);
  return ((performance.now() - start) * 1e6) / iterations;
}

/**
 * Runs each named case `rounds` times, interleaved (alternating the order),
 * `iterations` calls per round, after `warmup` calls each, and returns the
 * ns/op of every round: name -> [ns/op per round]. `cases` is an object of
 * name -> { fn, async?, setup?(round), teardown?(round) }; `allAsync` awaits
 * every case.
 */
async function sampleRounds(cases, { rounds, iterations, warmup, allAsync = false }) {
  rounds = scaled(rounds, 2);
  iterations = scaled(iterations, 20);
  warmup = scaled(warmup, 20);
  const names = Object.keys(cases);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  // A synchronous case is timed without an await, as it would run.
  const isAsync = (entry) => allAsync || entry.async === true;
  for (const name of names) {
    const entry = cases[name];
    if (entry.setup) await entry.setup(-1);
    if (isAsync(entry)) await timeAsync(entry.fn, warmup);
    else timeSync(entry.fn, warmup);
    if (entry.teardown) await entry.teardown(-1);
  }
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const entry = cases[name];
      if (entry.setup) await entry.setup(round);
      samples[name].push(isAsync(entry) ? await timeAsync(entry.fn, iterations) : timeSync(entry.fn, iterations));
      if (entry.teardown) await entry.teardown(round);
    }
  }
  return samples;
}

/**
 * Runs each named case `rounds` times, interleaved, `iterations` calls per
 * round (after `warmup` calls each), and returns the median ns/op per case.
 * `cases` is an object of name -> { fn, async?, setup?(round), teardown?(round) }.
 */
async function compare(cases, { rounds = 15, iterations = 20_000, warmup = 20_000 } = {}) {
  const samples = await sampleRounds(cases, { rounds, iterations, warmup });
  return Object.fromEntries(Object.keys(cases).map((name) => [name, median(samples[name])]));
}

/**
 * Like {@link compare}, for cases whose cost is dominated by another process
 * (a server answering over a pipe): many short rounds, interleaved, and for
 * each case the median of its per-round ratio to the `baseline` case of the
 * same round. Pairing each round with its neighbour cancels the drift that
 * dwarfs a few-percent difference on a shared machine. Every case is awaited.
 * Returns `{ medians: name -> ns/op, ratios: name -> median ratio to baseline,
 * ratioTo(name, other) }`.
 */
async function comparePaired(cases, { baseline, rounds = 200, iterations = 50, warmup = 1_000 } = {}) {
  const names = Object.keys(cases);
  if (!names.includes(baseline)) throw new Error(`comparePaired: no case named '${baseline}'`);
  const samples = await sampleRounds(cases, { rounds, iterations, warmup, allAsync: true });
  const base = samples[baseline];
  return {
    medians: Object.fromEntries(names.map((name) => [name, median(samples[name])])),
    ratios: Object.fromEntries(names.map((name) => [name, median(samples[name].map((value, round) => value / base[round]))])),
    /** The median per-round ratio of case `name` to case `other` (another pairing of the same rounds). */
    ratioTo: (name, other) => median(samples[name].map((value, round) => value / samples[other][round])),
  };
}

/** Heap used after a full collection (needs node --expose-gc). */
function heapAfterGc() {
  if (typeof global.gc !== 'function') throw new Error('Run the benchmark with node --expose-gc (npm run bench does).');
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

/** Formats a number of nanoseconds for a table. */
function formatNs(ns) {
  return ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`;
}

/**
 * Runs a benchmark file's `run()` when the file is executed directly
 * (`node --expose-gc tools/bench/x.bench.js`) and prints its rows as JSON.
 */
function runWhenMain(module, run) {
  if (require.main !== module) return;
  Promise.resolve()
    .then(run)
    .then(
      (rows) => console.log(JSON.stringify(rows, null, 2)),
      (error) => {
        console.error(error);
        process.exitCode = 1;
      },
    );
}

/**
 * The schemas of the trivial tool the execute rows share (runtime, approval,
 * hooks, compare-trees): an object of a name and a count in, a greeting out.
 */
const GREET_SCHEMAS = Object.freeze({
  inputSchema: {
    type: 'object',
    properties: { name: { type: 'string' }, count: { type: 'integer' } },
    required: ['name', 'count'],
    additionalProperties: false,
  },
  outputSchema: { type: 'object', properties: { greeting: { type: 'string' } }, required: ['greeting'] },
});

module.exports = { GREET_SCHEMAS, SMOKE, scaled, median, timeSync, timeAsync, compare, comparePaired, heapAfterGc, formatNs, runWhenMain };
