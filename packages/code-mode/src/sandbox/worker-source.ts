/**
 * The code of one sandbox worker thread (run with `new Worker(…, { eval: true })`):
 * it loads QuickJS once, then runs one program at a time, each in a fresh
 * runtime and context with the run's memory, stack and time limits. A call of
 * the program is posted to the host and answered by a message; the program's
 * promise is driven by the worker's own event loop, so the host's never waits
 * on it. The host terminates a worker that does not answer in time.
 *
 * Messages in: `run`, `reply`, `stop`. Out: `ready`, `call`, `done`.
 * `flags` (shared memory) lets the host stop a program that never yields:
 * the QuickJS interrupt handler reads it.
 */
export const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const flags = new Int32Array(workerData.flags);
let QuickJS;
let current;
let silent = false;

function post(message) { if (!silent) parentPort.postMessage(message); }

function fail(run, code, fields) {
  finish(run, { kind: 'failed', code, ...fields });
}

function finish(run, outcome) {
  if (run.done) return;
  run.done = true;
  if (current === run) current = undefined;
  const logs = run.logs;
  try { for (const deferred of run.pending.values()) deferred.dispose(); } catch (_) {}
  run.pending.clear();
  let tainted = false;
  try {
    if (run.configure !== undefined) run.configure.dispose();
    run.context.dispose();
    run.runtime.dispose();
  } catch (_) { tainted = true; }
  // An engine that could not free a run's memory is not used again: the host starts another worker.
  post({ t: 'done', id: run.id, outcome, logs, ms: run.ms, retire: tainted });
  if (tainted) process.exit(0);
  // The next run's context, made while the host reads this one's outcome.
  setImmediate(prepareNext);
}

/** What ended a program that stopped with an exception: a limit of the run, or the program's own error. */
function limitOf(run, fields) {
  if (run.fatal !== undefined) return run.fatal;
  if (Atomics.load(flags, 0) !== 0) return 'CODE_STOPPED';
  if (run.timedOut) return 'CODE_TIME_LIMIT';
  if (fields && typeof fields.message === 'string') {
    // The engine's own errors (JSON.parse reports its overflow as a SyntaxError).
    if (fields.message === 'stack overflow' || fields.message === 'Maximum call stack size exceeded') return 'CODE_STACK_LIMIT';
    if (fields.name === 'InternalError') {
      if (fields.message === 'out of memory' || fields.message === 'string too long' || fields.message === 'invalid array length') return 'CODE_MEMORY_LIMIT';
      if (fields.message === 'interrupted') return 'CODE_TIME_LIMIT';
    }
  }
  return undefined;
}

function readError(run, handle) {
  try {
    const dumped = run.context.dump(handle);
    if (dumped && typeof dumped === 'object') {
      const fields = {};
      for (const key of ['name', 'message']) if (typeof dumped[key] === 'string') fields[key] = dumped[key].slice(0, 4000);
      return fields;
    }
    return { name: 'NonError', message: String(dumped).slice(0, 4000) };
  } catch (_) {
    return { name: 'Error', message: 'an error the sandbox could not read' };
  }
}

/** Runs the program's pending jobs, counting the time, then decides: finished, waiting for the host, or stuck. */
function pump(run) {
  if (run.done) return;
  const start = performance.now();
  run.sliceStart = start;
  let result;
  try {
    result = run.runtime.executePendingJobs(-1);
  } catch (error) {
    run.ms += performance.now() - start;
    return crashed(run, error);
  }
  run.ms += performance.now() - start;
  run.sliceStart = undefined;
  if (run.done) return;
  if (result.error) {
    const fields = readError(run, result.error);
    try { result.error.dispose(); } catch (_) {}
    return fail(run, limitOf(run, fields) || 'CODE_PROGRAM_FAILED', { error: fields });
  }
  if (run.finished !== undefined) return settle(run);
  if (run.fatal !== undefined) return fail(run, run.fatal, {});
  // Stopped inside a promise job (its exception went to a promise nobody awaits): the limit that stopped it.
  const stopped = limitOf(run, undefined);
  if (stopped !== undefined) return fail(run, stopped, {});
  if (run.pending.size === 0) return fail(run, 'CODE_NEVER_SETTLED', {});
}

/** The program's outcome, as the prelude's runner handed it over. */
function settle(run) {
  const { kind, text } = run.finished;
  if (kind === 'returned') {
    if (text !== undefined && text.length > run.limits.outputChars - run.logChars) return fail(run, 'CODE_OUTPUT_LIMIT', {});
    return finish(run, { kind: 'returned', json: text });
  }
  let fields;
  try { fields = JSON.parse(text); } catch (_) { fields = { name: 'Error', message: String(text) }; }
  if (kind === 'syntax') return fail(run, 'CODE_SYNTAX_ERROR', { error: fields });
  if (kind === 'invalid') return fail(run, 'CODE_RESULT_INVALID', { error: fields });
  return fail(run, limitOf(run, fields) || 'CODE_PROGRAM_FAILED', { error: fields });
}

function crashed(run, error) {
  // The engine itself failed (V8's stack inside the wasm, a wasm trap): this worker is done.
  const message = error && error.message ? String(error.message) : String(error);
  const code = /call stack/i.test(message) ? 'CODE_STACK_LIMIT' : run.timedOut ? 'CODE_TIME_LIMIT' : 'CODE_SANDBOX_FAILED';
  run.done = false;
  fail(run, code, { error: { name: error && error.name ? String(error.name) : 'Error', message: message.slice(0, 2000) }, crashed: true });
  process.exit(1);
}

/**
 * A runtime and context with the prelude evaluated, made ahead of the run
 * that takes it (after each run, while the worker waits): a run starts by
 * configuring it. The host functions answer for whichever run holds it.
 */
let prepared;

function prepare() {
  const runtime = QuickJS.newRuntime();
  const context = runtime.newContext();
  const holder = { runtime, context, configure: undefined, run: undefined };
  const hostCall = context.newFunction('hostCall', (kindHandle, nameHandle, inputHandle) => {
    const run = holder.run;
    const kind = context.getString(kindHandle);
    const name = context.getString(nameHandle);
    const input = context.getString(inputHandle);
    const callId = ++run.nextCall;
    const deferred = context.newPromise();
    run.pending.set(callId, deferred);
    post({ t: 'call', id: run.id, callId, kind, name, input });
    return deferred.handle;
  });
  const hostLog = context.newFunction('hostLog', (levelHandle, textHandle) => {
    const run = holder.run;
    const level = context.getString(levelHandle);
    const text = context.getString(textHandle);
    run.logChars += text.length + level.length + 3;
    if (run.logChars > run.limits.outputChars) { run.fatal = 'CODE_OUTPUT_LIMIT'; return; }
    run.logs.push({ level, text });
  });
  const hostFinish = context.newFunction('hostFinish', (kindHandle, textHandle) => {
    const run = holder.run;
    if (run.finished !== undefined) return;
    const kind = context.getString(kindHandle);
    const text = context.typeof(textHandle) === 'string' ? context.getString(textHandle) : undefined;
    run.finished = { kind, text };
  });
  const prelude = context.unwrapResult(context.evalCode(workerData.prelude, 'prelude.js'));
  holder.configure = context.unwrapResult(context.callFunction(prelude, context.undefined, hostCall, hostLog, hostFinish));
  prelude.dispose();
  hostCall.dispose();
  hostLog.dispose();
  hostFinish.dispose();
  return holder;
}

function prepareNext() {
  if (prepared !== undefined || QuickJS === undefined) return;
  try { prepared = prepare(); } catch (_) { prepared = undefined; }
}

function start(message) {
  const { id, code, idents, names, seed, now, limits } = message;
  Atomics.store(flags, 0, 0);
  let holder = prepared;
  prepared = undefined;
  if (holder === undefined) holder = prepare();
  const { runtime, context } = holder;
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(limits.stackBytes);
  const run = { id, runtime, context, limits, logs: [], logChars: 0, pending: new Map(), nextCall: 0, ms: 0, sliceStart: undefined, done: false, finished: undefined, fatal: undefined, timedOut: false, configure: holder.configure };
  holder.run = run;
  current = run;
  runtime.setInterruptHandler(() => {
    if (Atomics.load(flags, 0) !== 0) return true;
    if (run.fatal !== undefined) return true;
    if (run.sliceStart !== undefined && run.ms + (performance.now() - run.sliceStart) > limits.timeMs) { run.timedOut = true; return true; }
    return false;
  });
  try {
    const args = [
      context.unwrapResult(context.evalCode(JSON.stringify(idents))),
      context.unwrapResult(context.evalCode(JSON.stringify(names))),
      context.newNumber(seed), context.newNumber(now), context.newNumber(limits.outputChars),
    ];
    const runner = context.unwrapResult(context.callFunction(holder.configure, context.undefined, ...args));
    for (const handle of args) handle.dispose();
    holder.configure.dispose();
    run.configure = undefined;
    const source = context.newString(code);
    run.sliceStart = performance.now();
    const started = context.callFunction(runner, context.undefined, source);
    run.ms += performance.now() - run.sliceStart;
    run.sliceStart = undefined;
    source.dispose();
    runner.dispose();
    if (started.error) {
      const fields = readError(run, started.error);
      started.error.dispose();
      return fail(run, limitOf(run, fields) || 'CODE_PROGRAM_FAILED', { error: fields });
    }
    started.value.dispose();
  } catch (error) {
    if (run.done) return;
    return crashed(run, error);
  }
  pump(run);
}

function reply(message) {
  const run = current;
  if (run === undefined || run.id !== message.id || run.done) return;
  const deferred = run.pending.get(message.callId);
  if (deferred === undefined) return;
  run.pending.delete(message.callId);
  try {
    if (message.fatal !== undefined) {
      run.fatal = message.fatal;
      deferred.dispose();
      return fail(run, message.fatal, message.fields || {});
    }
    const value = message.ok ? (message.json === undefined ? run.context.undefined : run.context.newString(message.json)) : run.context.newString(message.json);
    if (message.ok) deferred.resolve(value); else deferred.reject(value);
    value.dispose();
    deferred.dispose();
  } catch (error) {
    return crashed(run, error);
  }
  pump(run);
}

parentPort.on('message', (message) => {
  if (message.t === 'run') start(message);
  else if (message.t === 'reply') reply(message);
  else if (message.t === 'stop') { const run = current; if (run !== undefined && run.id === message.id) fail(run, message.code, {}); }
});

(async () => {
  const quickjs = require(workerData.quickjs);
  // The engine compiled once by the host and shared by every worker: a worker instantiates it, it does not compile it again.
  QuickJS = await quickjs.newQuickJSWASMModule(
    workerData.wasmModule === undefined ? undefined : quickjs.newVariant(quickjs.RELEASE_SYNC, { wasmModule: workerData.wasmModule }),
  );
  // A first run, not reported, warms the engine's code paths (the prelude, a call and its answer, the result): a run from the warm pool starts at once.
  silent = true;
  try {
    start({
      id: 0,
      code: 'const r = await tools.t({ a: [1, 2, 3].map((v) => v * 2) }); console.log("w", r, new Date(), Math.random()); try { null.x; } catch (e) {} return { r, s: JSON.stringify(r) };',
      idents: ['t'], names: ['t'], seed: 1, now: 0,
      limits: { memoryBytes: 8 * 1024 * 1024, stackBytes: 128 * 1024, timeMs: 60000, outputChars: 10000 },
    });
    reply({ id: 0, callId: 1, ok: true, json: '{"x":1}' });
  } finally {
    silent = false;
    current = undefined;
  }
  prepared = undefined;
  prepareNext();
  post({ t: 'ready' });
})().catch((error) => {
  post({ t: 'boot-failed', message: String(error && error.message || error) });
  process.exit(1);
});
`;
