'use strict';
// The speed rows of search.bench.js, paired across two builds of the
// repository in one process: this tree's tool search against another
// checkout's (the tree before a change to the ranking), at 10,000 tools (the
// BFCL non-live catalog replicated), rounds alternating between the two so
// that the machine's drift and load hit both alike. Prints, for each tree,
// the p50 and p99 over the questions of each question's median CPU time per
// search (CPU time: on a shared machine the wall clock also counts the time
// another process held the core), the median CPU time of a build (update of
// every tool and the first search), and the heap and array buffers an index
// holds.
//
//   git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npx nx run-many -t build -p @ca/tool-lifecycle)
//   node --expose-gc tools/bench/compare-search-trees.js /tmp/before [rounds]
//
// Not a *.bench.js: `npm run bench` does not run it, since it needs the
// other tree built.
const fs = require('node:fs');
const path = require('node:path');
const { median, heapAfterGc } = require('./harness');

const FIXTURES = path.join(__dirname, '..', '..', 'packages', 'tool-lifecycle', 'src', 'search', '__fixtures__', 'bfcl-nonlive');
const TOOLS = 10_000;
const CAPABILITY = { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false };

function catalogOf(count) {
  const catalog = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'catalog.json'), 'utf8')).map((entry) => ({
    ...entry,
    source: 'custom',
    capability: CAPABILITY,
  }));
  const tools = [];
  for (let copy = 0; tools.length < count; copy++) {
    for (const tool of catalog) {
      if (tools.length >= count) break;
      tools.push(copy === 0 ? tool : { ...tool, name: `replica${copy}.${tool.name}` });
    }
  }
  return tools;
}

function cpuMicros(started) {
  const used = process.cpuUsage(started);
  return used.user + used.system;
}

async function main() {
  const other = process.argv[2];
  if (other === undefined) throw new Error('usage: node --expose-gc tools/bench/compare-search-trees.js <other tree> [rounds]');
  const rounds = Number(process.argv[3] ?? 11);
  const roots = { 'this tree': path.resolve(__dirname, '..', '..'), 'other tree': path.resolve(other) };
  const names = Object.keys(roots);
  const classes = Object.fromEntries(names.map((name) => [name, require(path.join(roots[name], 'packages/tool-lifecycle/dist/index.js')).ToolSearchIndex]));
  const tools = catalogOf(TOOLS);
  const questions = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'queries.json'), 'utf8'));
  const indexes = {};
  for (const name of names) {
    indexes[name] = new classes[name]();
    indexes[name].update(tools);
    for (const question of questions) await indexes[name].search(question.query, { k: 10 });
  }
  const times = Object.fromEntries(names.map((name) => [name, questions.map(() => [])]));
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      for (let at = 0; at < questions.length; at++) {
        const started = process.cpuUsage();
        await indexes[name].search(questions[at].query, { k: 10 });
        times[name][at].push(cpuMicros(started));
      }
    }
  }
  const builds = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < 7; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const started = process.cpuUsage();
      const fresh = new classes[name]();
      fresh.update(tools);
      await fresh.search('warm', { k: 1 });
      builds[name].push(cpuMicros(started) / 1000);
    }
  }
  // Every index made so far is dropped first; each measured one is kept until the end, so that none is collected during another's measurement.
  for (const name of names) delete indexes[name];
  const held = {};
  const kept = [];
  for (const name of names) {
    const before = heapAfterGc() + process.memoryUsage().arrayBuffers;
    const fresh = new classes[name]();
    fresh.update(tools);
    await fresh.search('warm', { k: 1 });
    held[name] = (heapAfterGc() + process.memoryUsage().arrayBuffers - before) / 1024 / 1024;
    kept.push(fresh);
  }
  if (kept.some((index) => index.size !== TOOLS)) throw new Error('an index lost tools');
  for (const name of names) {
    const perQuestion = times[name].map(median).sort((a, b) => a - b);
    const pick = (share) => perQuestion[Math.min(perQuestion.length - 1, Math.floor(share * perQuestion.length))];
    console.log(
      `${name}: CPU per search p50 ${pick(0.5).toFixed(0)} µs, p99 ${pick(0.99).toFixed(0)} µs; build ${median(builds[name]).toFixed(0)} ms CPU; ` +
        `held ${held[name].toFixed(1)} MB (heap and array buffers)`,
    );
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
