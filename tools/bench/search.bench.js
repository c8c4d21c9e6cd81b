'use strict';
// Tool search (`ToolSearchIndex`, what runtime.searchTools runs) against a
// plain BM25 (`PlainBm25` of @ca/tool-lifecycle/testing: one bag of words per
// tool, no stemming, k1 1.2, b 0.75), both in this run:
// - recall@1/5/10 on BFCL non-live (769 tools, 1,000 questions; a question
//   counts at k when all its expected tools are in the top k), on the tuning
//   part and on the held-out part of split.json (groups of tools; never tuned on);
// - the same on BFCL's live questions (user-written; 1,351 questions over the
//   769 tools and the 518 more the live files offer), an outside measurement:
//   the data is not in the repository, the bench reads it from the folder
//   bfcl_eval/data of BFCL's repository given as BFCL_LIVE_DIR (or
//   --bfcl-live <folder>), and says so when it is not given;
// - at 10,000 tools (the BFCL catalog replicated with renamed copies): p99
//   time per query (each question's median over the rounds, so that a
//   preempted round on a shared machine does not count as the query's cost),
//   index build (read every tool, lay out the postings) and heap held.
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { ToolSearchIndex } = require('../../packages/tool-lifecycle/dist/index.js');
const { PlainBm25 } = require('../../packages/tool-lifecycle/dist/testing/index.js');
const { SMOKE, scaled, median, heapAfterGc, runWhenMain } = require('./harness');

const FIXTURES = path.join(__dirname, '..', '..', 'packages', 'tool-lifecycle', 'src', 'search', '__fixtures__', 'bfcl-nonlive');
const TOOLS = scaled(10_000, 1_000);
const LIVE_CATEGORIES = ['simple', 'multiple', 'parallel', 'parallel_multiple'];
const ROUNDS = scaled(7, 1);
const BUILDS = scaled(7, 1);

const CAPABILITY = { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false };

function load() {
  const catalog = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'catalog.json'), 'utf8')).map((entry) => ({
    ...entry,
    source: 'custom',
    capability: CAPABILITY,
  }));
  const questions = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'queries.json'), 'utf8'));
  // The fixed split (SOURCE.md): the ranking may be tuned on the tuning part only.
  const split = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'split.json'), 'utf8'));
  const byId = new Map(questions.map((question) => [question.id, question]));
  const part = (ids) => (SMOKE ? ids.slice(0, 30) : ids).map((id) => byId.get(id));
  return { catalog, questions: SMOKE ? questions.slice(0, 60) : questions, tuning: part(split.tuning), heldOut: part(split.heldOut) };
}

/** The folder of BFCL's live files, from --bfcl-live <folder> or BFCL_LIVE_DIR; undefined when neither is given. */
function liveFolder() {
  const flag = process.argv.indexOf('--bfcl-live');
  return flag >= 0 ? process.argv[flag + 1] : process.env.BFCL_LIVE_DIR || undefined;
}

function jsonLines(file) {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line));
}

/** BFCL's parameter types as JSON Schema (dict→object, float→number, tuple→array, any→no type), as the committed catalog has them. */
function jsonSchemaOf(node) {
  if (Array.isArray(node)) return node.map(jsonSchemaOf);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'type' && typeof value === 'string') {
      if (value !== 'any') out.type = { dict: 'object', float: 'number', tuple: 'array' }[value] ?? value;
    } else if (key === 'properties' && value !== null && typeof value === 'object') {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, jsonSchemaOf(property)]));
    } else {
      out[key] = jsonSchemaOf(value);
    }
  }
  return out;
}

/**
 * BFCL's live questions with answers (simple, multiple, parallel, parallel
 * multiple) and a catalog of the committed non-live tools plus every function
 * the live files offer (one entry per name, the longest description kept). A
 * question is its user turns; its expected tools, the functions of its
 * possible answer.
 */
function loadLive(folder, nonLive) {
  const byName = new Map(nonLive.map((tool) => [tool.name, tool]));
  const questions = [];
  for (const category of LIVE_CATEGORIES) {
    const answers = new Map(jsonLines(path.join(folder, 'possible_answer', `BFCL_v4_live_${category}.json`)).map((answer) => [answer.id, answer]));
    for (const entry of jsonLines(path.join(folder, `BFCL_v4_live_${category}.json`))) {
      for (const offered of entry.function) {
        const description = offered.description ?? '';
        const known = byName.get(offered.name);
        if (known === undefined || (known.description ?? '').length < description.length) {
          byName.set(offered.name, {
            name: offered.name,
            description,
            inputSchema: jsonSchemaOf(offered.parameters ?? {}),
            source: 'custom',
            capability: CAPABILITY,
          });
        }
      }
      const answer = answers.get(entry.id);
      if (answer === undefined) continue;
      const expected = [...new Set(answer.ground_truth.map((call) => Object.keys(call)[0]))];
      const query = entry.question
        .flat()
        .filter((message) => message.role === 'user')
        .map((message) => message.content)
        .join('\n');
      questions.push({ id: entry.id, query, expected });
    }
  }
  return { catalog: [...byName.values()], questions: SMOKE ? questions.slice(0, 60) : questions };
}

/** The catalog replicated to `count` tools: copy n of a tool is `replica<n>.<name>`. */
function replicate(catalog, count) {
  const tools = [];
  for (let copy = 0; tools.length < count; copy++) {
    for (const tool of catalog) {
      if (tools.length >= count) break;
      tools.push(copy === 0 ? tool : { ...tool, name: `replica${copy}.${tool.name}` });
    }
  }
  return tools;
}

async function recall(search, questions) {
  const found = { 1: 0, 5: 0, 10: 0 };
  for (const question of questions) {
    const top = await search(question.query);
    for (const k of [1, 5, 10]) if (question.expected.every((name) => top.slice(0, k).includes(name))) found[k]++;
  }
  return [1, 5, 10].map((k) => (100 * found[k]) / questions.length);
}

/** Each question's median time over the rounds (ns), then the 50th and 99th percentiles over the questions. */
async function percentiles(search, questions) {
  const times = questions.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (let at = 0; at < questions.length; at++) {
      const started = performance.now();
      await search(questions[at].query);
      times[at].push((performance.now() - started) * 1e6);
    }
  }
  const perQuestion = times.map(median).sort((a, b) => a - b);
  const pick = (share) => perQuestion[Math.min(perQuestion.length - 1, Math.floor(share * perQuestion.length))];
  return { p50: pick(0.5), p99: pick(0.99) };
}

/** Median time (ns) to build an index of `tools` and answer one query (the postings are laid out on the first search). */
async function buildTimes(build) {
  const times = [];
  for (let round = 0; round < BUILDS; round++) {
    const started = performance.now();
    await build();
    times.push((performance.now() - started) * 1e6);
  }
  return { median: median(times), first: times[0] };
}

/** Heap and array buffers (typed arrays of more than a few bytes keep their contents outside the heap) held by what `build` returns. */
function heapOf(build) {
  const before = heapAfterGc() + process.memoryUsage().arrayBuffers;
  const kept = build();
  const after = heapAfterGc() + process.memoryUsage().arrayBuffers;
  // Keep the index alive until after the measurement.
  if (kept === undefined) throw new Error('nothing built');
  return after - before;
}

async function run() {
  const { catalog, questions, tuning, heldOut } = load();

  const index = new ToolSearchIndex();
  index.update(catalog);
  const plain = new PlainBm25(catalog);
  const ours = async (query) => (await index.search(query, { k: 10 })).map((hit) => hit.name);
  const baseline = async (query) => plain.search(query, 10);
  const recallRows = [];
  const format = (values) => values.map((value) => `${value.toFixed(1)}%`).join(' / ');
  const recallRow = async (label, set, tools, search, plainSearch, target) => {
    const subject = await recall(search, set);
    const base = await recall(plainSearch, set);
    recallRows.push({
      name: `tool search recall@1/5/10, ${label} (${set.length} questions, ${tools.length} tools)`,
      baseline: 'plain BM25 (no stemming, k1 1.2, b 0.75)',
      baselineValue: format(base),
      subjectValue: format(subject),
      target,
      pass: true,
      note: `at 5: +${(subject[1] - base[1]).toFixed(1)} points`,
    });
  };
  await recallRow('BFCL non-live, tuning part', tuning, catalog, ours, baseline, 'report (floors in recall.spec.ts)');
  await recallRow('BFCL non-live, held-out part, never tuned on', heldOut, catalog, ours, baseline, 'report (floors in recall.spec.ts)');
  const folder = liveFolder();
  if (folder === undefined || !fs.existsSync(path.join(folder, 'BFCL_v4_live_simple.json'))) {
    recallRows.push({
      name: 'tool search recall@1/5/10, BFCL live (outside measurement)',
      baseline: 'plain BM25 (no stemming, k1 1.2, b 0.75)',
      // Not measured in this run: the row says so in its figures rather than
      // claiming a pass (the live questions are not in this repository).
      baselineValue: 'not measured',
      subjectValue: 'not measured',
      target: '≥ 85% at 5',
      note:
        folder === undefined
          ? 'not measured: set BFCL_LIVE_DIR to the bfcl_eval/data folder of BFCL (not in this repository)'
          : `not measured: no BFCL_v4_live_simple.json in ${folder}`,
    });
  } else {
    const live = loadLive(folder, catalog);
    const liveIndex = new ToolSearchIndex();
    liveIndex.update(live.catalog);
    const livePlain = new PlainBm25(live.catalog);
    await recallRow(
      'BFCL live, user-written, never tuned on (outside measurement, read from BFCL_LIVE_DIR)',
      live.questions,
      live.catalog,
      async (query) => (await liveIndex.search(query, { k: 10 })).map((hit) => hit.name),
      async (query) => livePlain.search(query, 10),
      '≥ 85% at 5',
    );
    const last = recallRows[recallRows.length - 1];
    last.pass = SMOKE || Number.parseFloat(last.subjectValue.split(' / ')[1]) >= 85;
  }

  const tools = replicate(catalog, TOOLS);
  const big = new ToolSearchIndex();
  big.update(tools);
  const bigPlain = new PlainBm25(tools);
  const speedQuestions = SMOKE ? questions.slice(0, 20) : questions;
  // The plain baseline scans every tool per query: a fifth of the questions tell its time well enough.
  const plainQuestions = speedQuestions.filter((_, position) => position % 5 === 0);
  await percentiles((query) => big.search(query, { k: 10 }), speedQuestions.slice(0, 50));
  const subject = await percentiles((query) => big.search(query, { k: 10 }), speedQuestions);
  const base = await percentiles(async (query) => bigPlain.search(query, 10), plainQuestions);
  const build = await buildTimes(async () => {
    const fresh = new ToolSearchIndex();
    fresh.update(tools);
    await fresh.search('warm', { k: 1 });
  });
  const plainBuild = await buildTimes(async () => new PlainBm25(tools));
  const heap = heapOf(() => {
    const fresh = new ToolSearchIndex();
    fresh.update(tools);
    fresh.search('warm', { k: 1 });
    return fresh;
  });
  const plainHeap = heapOf(() => new PlainBm25(tools));
  const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

  return [
    ...recallRows,
    {
      name: `tool search at ${TOOLS.toLocaleString('en-US')} tools: p99 time per query (k = 10, ${speedQuestions.length} BFCL questions)`,
      baseline: `plain BM25, same tools (${plainQuestions.length} questions)`,
      baselineNs: base.p99,
      subjectNs: subject.p99,
      target: '≤ 1 ms',
      pass: subject.p99 <= 1e6,
      note: `p50 ${(subject.p50 / 1e3).toFixed(0)} µs (plain ${(base.p50 / 1e3).toFixed(0)} µs); each question's median of ${ROUNDS} rounds`,
    },
    {
      name: `tool search at ${TOOLS.toLocaleString('en-US')} tools: index build (read every tool, lay out the postings)`,
      baseline: 'plain BM25, same tools',
      baselineNs: plainBuild.median,
      subjectNs: build.median,
      target: '≤ 200 ms',
      pass: build.median <= 200e6,
      note: `median of ${BUILDS}; the first, with the process's stem cache cold, ${(build.first / 1e6).toFixed(0)} ms`,
    },
    {
      name: `tool search at ${TOOLS.toLocaleString('en-US')} tools: memory held by the index (heap and array buffers, after GC)`,
      baseline: 'plain BM25, same tools',
      baselineValue: mb(plainHeap),
      subjectValue: mb(heap),
      target: '≤ 30 MB',
      pass: heap <= 30 * 1024 * 1024,
      note: 'the descriptors themselves not counted (the catalog holds them)',
    },
  ];
}

module.exports = { run };
runWhenMain(module, run);
