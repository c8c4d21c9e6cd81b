'use strict';
// Code mode (@ca/code-mode) side by side with the AI SDK's (@ai-sdk/code-mode,
// QuickJS too), on the same programs, in the same run:
// 1. a warm run of a program without calls (`return 1 + 1`), through
//    runtime.execute('code.run') in a plan, against runCodeMode of the peer.
//    Target: half the peer's time or less.
// 2. the cost of one inner call over a direct call: (a program of 20 calls −
//    the same program without calls) / 20, minus a direct runtime.execute of
//    the same tool (for the peer: minus a direct call of the tool's execute).
//    Target: half the peer's or less.
// 3. memory per running program: 4 programs running at once, each holding a
//    1 MB string and waiting on a call, measured in a child process of its own
//    (RSS at the peak minus RSS before). Target: half the peer's or less.
// 4. a cold start from a warm pool: the first run of a new code mode whose
//    workers are loaded (a fresh engine runtime and context, the prelude, the
//    program). Target: ≤ 50 ms; the peer's first run is reported beside it.
const { spawnSync } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const { SMOKE, scaled, median, runWhenMain } = require('./harness');

const MAX_RATIO = 0.5;
const MAX_COLD_MS = 50;
const CALLS = 20;

function load() {
  const { ToolRuntime, ToolSet, silentLogger, toolSuccess } = require('../../packages/tool-lifecycle/dist/index.js');
  const { createCodeMode } = require('../../packages/code-mode/dist/index.js');
  return { ToolRuntime, ToolSet, silentLogger, toolSuccess, createCodeMode };
}

/** Our runtime with one trivial tool and the code mode over it. */
function ours(poolSize = 1, hold) {
  const { ToolRuntime, ToolSet, silentLogger, toolSuccess, createCodeMode } = load();
  const codeMode = createCodeMode({ runtime: () => runtime, pool: { size: poolSize } });
  const tools = new ToolSet({
    id: 'bench',
    kind: 'custom',
    schemaTrust: 'trusted',
    tools: [
      {
        descriptor: {
          name: 'bench.echo',
          description: 'Echoes its input.',
          source: 'custom',
          capability: { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false },
          inputSchema: { type: 'object', properties: { i: { type: 'number' } } },
        },
        execute: async (input) => (hold === undefined ? toolSuccess(input) : hold().then(() => toolSuccess(input))),
      },
    ],
  });
  const runtime = new ToolRuntime({ sources: [tools, codeMode.source], logger: silentLogger });
  return { runtime, codeMode };
}

async function peer(hold) {
  const { experimental_runCodeMode: runCodeMode } = await import('@ai-sdk/code-mode');
  const { tool, jsonSchema } = await import('ai');
  const echo = tool({
    description: 'Echoes its input.',
    inputSchema: jsonSchema({ type: 'object', properties: { i: { type: 'number' } } }),
    execute: async (input) => (hold === undefined ? input : hold().then(() => input)),
  });
  return { runCodeMode, tools: { echo }, echo };
}

const PROGRAM_EMPTY = 'return 1 + 1;';
const programCalls = (ident) => `let s = 0; for (let i = 0; i < ${CALLS}; i++) s += (await tools.${ident}({ i })).i; return s;`;

async function timeRuns(fn, count) {
  const samples = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

/** Memory of 4 programs running at once, in this process (run as a child: `node code-mode.bench.js --memory ours|peer`). */
async function memoryChild(which) {
  const PROGRAMS = 4;
  let release;
  const held = new Promise((resolve) => (release = resolve));
  let started = 0;
  let allStarted;
  const everyoneIn = new Promise((resolve) => (allStarted = resolve));
  const hold = () => {
    if (++started === PROGRAMS) allStarted();
    return held;
  };
  const program = 'const big = "m".repeat(1 << 20); const r = await tools.IDENT({ i: 1 }); return big.length + r.i;';
  global.gc?.();
  const before = process.memoryUsage().rss;
  let runs;
  let close = () => Promise.resolve();
  if (which === 'ours') {
    const { runtime, codeMode } = ours(PROGRAMS, hold);
    await codeMode.warm();
    close = () => codeMode.close();
    runs = Array.from({ length: PROGRAMS }, () => runtime.runPlan({}, (plan) => codeMode.run(program.replace('IDENT', 'bench_echo'), plan)));
  } else {
    const { runCodeMode, tools } = await peer(hold);
    runs = Array.from({ length: PROGRAMS }, () => runCodeMode({ js: program.replace('IDENT', 'echo'), tools }));
  }
  await everyoneIn;
  const peak = process.memoryUsage().rss;
  release();
  await Promise.all(runs);
  await close();
  process.stdout.write(`@@MEM@@${JSON.stringify({ perProgram: (peak - before) / PROGRAMS })}\n`);
  process.exit(0);
}

function measureMemory(which) {
  const child = spawnSync(process.execPath, ['--expose-gc', __filename, '--memory', which], { cwd: process.cwd(), encoding: 'utf8', timeout: 120_000 });
  const line = (child.stdout ?? '').split('\n').find((text) => text.startsWith('@@MEM@@'));
  if (line === undefined) throw new Error(`memory of ${which}: no figure (${child.stderr?.slice(0, 500)})`);
  return JSON.parse(line.slice('@@MEM@@'.length)).perProgram;
}

async function run() {
  const rows = [];
  const count = scaled(30, 3);

  // 4. Cold start from a warm pool (first: a fresh code mode).
  const cold = [];
  for (let round = 0; round < scaled(5, 1); round++) {
    const { runtime, codeMode } = ours(1);
    await Promise.all([codeMode.warm(), runtime.discover()]);
    const plan = runtime.createPlan({});
    const start = performance.now();
    const result = await codeMode.run(PROGRAM_EMPTY, plan);
    cold.push(performance.now() - start);
    if (!result.ok) throw new Error(`code.run failed: ${result.error.message}`);
    await runtime.endPlan(plan);
    await codeMode.close();
  }
  const peerCold = await (async () => {
    const { runCodeMode, tools } = await peer();
    const start = performance.now();
    await runCodeMode({ js: PROGRAM_EMPTY, tools });
    return performance.now() - start;
  })();

  const { runtime, codeMode } = ours(1);
  await codeMode.warm();
  const plan = runtime.createPlan({});
  const { runCodeMode, tools, echo } = await peer();
  const ourRun = (code) => codeMode.run(code, plan);
  const peerRun = (js) => runCodeMode({ js, tools });
  // Warm both.
  for (let i = 0; i < scaled(5, 1); i++) {
    await ourRun(PROGRAM_EMPTY);
    await ourRun(programCalls('bench_echo'));
    await peerRun(PROGRAM_EMPTY);
    await peerRun(programCalls('echo'));
  }
  const check = await ourRun(programCalls('bench_echo'));
  if (!check.ok || check.output.result !== (CALLS * (CALLS - 1)) / 2) throw new Error('the program of calls did not return its sum');

  // 1. and 2., interleaved.
  const ourEmpty = [];
  const ourCalls = [];
  const peerEmpty = [];
  const peerCalls = [];
  const direct = [];
  const peerDirect = [];
  for (let round = 0; round < count; round++) {
    ourEmpty.push(await timeRuns(() => ourRun(PROGRAM_EMPTY), 1));
    peerEmpty.push(await timeRuns(() => peerRun(PROGRAM_EMPTY), 1));
    ourCalls.push(await timeRuns(() => ourRun(programCalls('bench_echo')), 1));
    peerCalls.push(await timeRuns(() => peerRun(programCalls('echo')), 1));
  }
  for (let round = 0; round < scaled(10, 2); round++) {
    const start = performance.now();
    for (let i = 0; i < 200; i++) await runtime.execute('bench.echo', { i }, plan);
    direct.push((performance.now() - start) / 200);
    const peerStart = performance.now();
    for (let i = 0; i < 200; i++) await echo.execute({ i }, { toolCallId: 'x', messages: [] });
    peerDirect.push((performance.now() - peerStart) / 200);
  }
  await runtime.endPlan(plan);
  await codeMode.close();

  const warmOurs = median(ourEmpty);
  const warmPeer = median(peerEmpty);
  rows.push({
    name: 'code mode: a warm run of `return 1 + 1` (runtime.execute of code.run in a plan)',
    baseline: '@ai-sdk/code-mode runCodeMode of the same program',
    baselineNs: warmPeer * 1e6,
    subjectNs: warmOurs * 1e6,
    target: `≤ ${MAX_RATIO} × the peer`,
    pass: SMOKE || warmOurs <= warmPeer * MAX_RATIO,
    note: `ours ${warmOurs.toFixed(2)} ms, peer ${warmPeer.toFixed(2)} ms (median of ${count})`,
  });
  const perCallOurs = (median(ourCalls) - warmOurs) / CALLS - median(direct);
  const perCallPeer = (median(peerCalls) - warmPeer) / CALLS - median(peerDirect);
  rows.push({
    name: 'code mode: one inner call over a direct call (20 calls in a program)',
    baseline: '@ai-sdk/code-mode, the same program, over a direct call of the tool',
    baselineNs: Math.max(perCallPeer, 0) * 1e6,
    subjectNs: Math.max(perCallOurs, 0) * 1e6,
    target: `≤ ${MAX_RATIO} × the peer`,
    pass: SMOKE || perCallOurs <= perCallPeer * MAX_RATIO,
    note: `ours +${(perCallOurs * 1000).toFixed(0)} µs over runtime.execute (${(median(direct) * 1000).toFixed(0)} µs), peer +${(perCallPeer * 1000).toFixed(0)} µs over tool.execute`,
  });

  // 3. Memory per running program, each in a process of its own.
  const memoryOurs = measureMemory('ours');
  const memoryPeer = measureMemory('peer');
  rows.push({
    name: 'code mode: memory per running program (4 at once, each holding 1 MB and waiting on a call; RSS)',
    baseline: '@ai-sdk/code-mode, the same programs',
    baselineNs: memoryPeer,
    subjectNs: memoryOurs,
    target: `≤ ${MAX_RATIO} × the peer`,
    pass: SMOKE || memoryOurs <= memoryPeer * MAX_RATIO,
    note: `ours ${(memoryOurs / 2 ** 20).toFixed(1)} MB, peer ${(memoryPeer / 2 ** 20).toFixed(1)} MB per program (figures in bytes, not ns)`,
  });

  const coldMs = median(cold);
  rows.push({
    name: 'code mode: cold start from a warm pool (first run of a new code mode, workers loaded)',
    baseline: "@ai-sdk/code-mode's first run in the process",
    baselineNs: peerCold * 1e6,
    subjectNs: coldMs * 1e6,
    target: `≤ ${MAX_COLD_MS} ms`,
    pass: SMOKE || coldMs <= MAX_COLD_MS,
    note: `ours ${coldMs.toFixed(2)} ms (median of ${cold.length}), peer ${peerCold.toFixed(1)} ms`,
  });
  return rows;
}

if (process.argv[2] === '--memory') {
  memoryChild(process.argv[3]).catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else {
  module.exports = { run };
  runWhenMain(module, run);
}
