/**
 * The JavaScript the sandbox evaluates in each new context, before the
 * program: a function of the host's three functions and the run's facts that
 * builds the API the program sees (`tools`, `search`, `describe`, `console`),
 * makes the clock and randomness the host's, and returns the runner. The host
 * functions live only in its closure: nothing named `__host*` is left on the
 * global object.
 *
 * Everything here runs inside QuickJS under the run's limits, so a hostile
 * value (a getter, a `toJSON`, a Proxy) runs there too, never in the host.
 */
export const PRELUDE = String.raw`(function (hostCall, hostLog, hostFinish) {
  'use strict';
  const G = globalThis;
  const JSONs = JSON.stringify, JSONp = JSON.parse, Str = String, ObjectFreeze = Object.freeze, defineProperty = Object.defineProperty;
  const ErrorCtor = Error, PromiseCtor = Promise, then = Promise.prototype.then, keys = Object.keys, reject = Promise.reject.bind(Promise);
  const AsyncFunction = (async function () {}).constructor;

  // Randomness: a PRNG seeded by the host (the same sequence when the run is replayed).
  let state = 0, now = 0, maxLogChars = 0;
  const random = function random() {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  defineProperty(Math, 'random', { value: random, writable: false, configurable: false });

  // The clock: the host's time of the run, fixed while it runs (the same when replayed).
  const RealDate = Date;
  const HostDate = function Date(...args) {
    if (new.target === undefined) return new RealDate(now).toString();
    return args.length === 0 ? new RealDate(now) : new RealDate(...args);
  };
  defineProperty(HostDate, 'prototype', { value: RealDate.prototype, writable: false });
  HostDate.now = function now_() { return now; };
  HostDate.parse = RealDate.parse;
  HostDate.UTC = RealDate.UTC;
  defineProperty(RealDate.prototype, 'constructor', { value: HostDate, writable: false, configurable: false });
  defineProperty(G, 'Date', { value: HostDate, writable: false, configurable: false, enumerable: false });

  // Values cross as JSON text; a failure of the host arrives as the JSON of its fields.
  const toError = function (text) {
    let fields;
    try { fields = JSONp(text); } catch (_) { fields = { name: 'Error', code: 'CODE_SANDBOX_FAILED', message: Str(text) }; }
    const error = new ErrorCtor(Str(fields.message));
    for (const key of keys(fields)) if (key !== 'message' && key !== 'stack') defineProperty(error, key, { value: fields[key], enumerable: true, writable: true, configurable: true });
    return error;
  };
  const call = function (kind, name, input) {
    let text;
    try {
      text = JSONs(input === undefined ? {} : input);
    } catch (error) {
      return reject(toError(JSONs({ name: 'TypeError', code: 'CODE_INPUT_INVALID', toolName: name, message: 'The input of ' + name + ' is not JSON: ' + Str(error && error.message) })));
    }
    if (typeof text !== 'string') text = '{}';
    return then.call(hostCall(kind, name, text), function (reply) { return reply === undefined ? undefined : JSONp(reply); }, function (reason) { throw toError(reason); });
  };

  defineProperty(G, 'search', { value: ObjectFreeze(function search(query, options) { return call('search', 'search', { query: query, ...(options || {}) }); }), writable: false, configurable: false });
  defineProperty(G, 'describe', { value: ObjectFreeze(function describe(name) { return call('describe', 'describe', { name: name }); }), writable: false, configurable: false });

  // console: each argument as text (JSON for values), cut at the log budget.
  const show = function (value) {
    if (typeof value === 'string') return value;
    try { const text = JSONs(value); return text === undefined ? Str(value) : text; } catch (_) { try { return Str(value); } catch (_) { return '[unprintable]'; } }
  };
  const logger = function (level) {
    return function () {
      let line = '';
      for (let i = 0; i < arguments.length; i++) {
        line += (i === 0 ? '' : ' ') + show(arguments[i]);
        if (line.length > maxLogChars) break;
      }
      hostLog(level, line.length > maxLogChars ? line.slice(0, maxLogChars + 1) : line);
    };
  };
  const consoleObject = ObjectFreeze({ log: logger('log'), info: logger('info'), warn: logger('warn'), error: logger('error'), debug: logger('debug') });
  defineProperty(G, 'console', { value: consoleObject, writable: false, configurable: false });

  // A thrown value as fields the host can read: strings, numbers and booleans only, capped.
  const describeError = function (error) {
    const fields = {};
    try {
      if (error !== null && (typeof error === 'object' || typeof error === 'function')) {
        for (const key of ['name', 'message', 'code', 'toolName', 'planId', 'denial', 'limit', 'reason']) {
          const value = error[key];
          if (typeof value === 'string') fields[key] = value.slice(0, 4000);
          else if (typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
        }
      } else {
        fields.name = 'NonError';
        fields.message = Str(error).slice(0, 4000);
      }
    } catch (_) {
      fields.name = 'NonError';
      fields.message = 'the program threw a value that could not be read';
    }
    return JSONs(fields);
  };

  // Set for one run (the context is made ahead of it): the tools, the seed, the clock, the log budget; returns the runner.
  return function configure(idents, names, seed, runNow, logChars) {
    state = seed >>> 0;
    now = runNow;
    maxLogChars = logChars;
    const tools = Object.create(null);
    for (let i = 0; i < idents.length; i++) {
      const name = names[i];
      defineProperty(tools, idents[i], { value: function (input) { return call('tool', name, input); }, enumerable: true });
    }
    ObjectFreeze(tools);
    defineProperty(G, 'tools', { value: tools, writable: false, configurable: false, enumerable: true });
    return run;
  };

  // The runner: compiles the program as the body of an async function, runs it, and hands the host its outcome as JSON text.
  function run(source) {
    let program;
    try {
      program = new AsyncFunction(source);
    } catch (error) {
      hostFinish('syntax', describeError(error));
      return;
    }
    let running;
    try { running = program.call(undefined); } catch (error) { hostFinish('threw', describeError(error)); return; }
    then.call(running, function (value) {
      let text;
      try { text = value === undefined ? undefined : JSONs(value); } catch (error) { hostFinish('invalid', describeError(error)); return; }
      hostFinish('returned', text);
    }, function (error) { hostFinish('threw', describeError(error)); });
  }
})`;
