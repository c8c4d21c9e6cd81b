'use strict';
// What @ca/tool-context costs the runtime per execution, each against the
// platform primitive it stands for, measured in the same run:
// - a per-execution token, `child()` + `dispose()`, against an
//   AbortController following the plan's signal through addEventListener
//   (what the token's linked lists avoid);
// - a per-execution token with a deadline against a bare
//   setTimeout + clearTimeout pair;
// - `forExecution()` against an object literal with the view's fields;
// - `createExecutionId()` against `crypto.randomUUID()`;
// - `recordTrace()` of a frozen trace (validated and kept, as the runtime
//   records them) against pushing it unchecked, and of a plain trace
//   (validated, copied and frozen) against pushing a frozen copy unchecked.
// packages/tool-context/README.md quotes these figures.
const { randomUUID } = require('node:crypto');
const { CancellationToken, createExecutionContext, createExecutionId } = require('../../packages/tool-context/dist/index.js');
const { compare, runWhenMain } = require('./harness');

async function run() {
  const plan = new CancellationToken();
  const planSignal = plan.signal;
  const ctx = createExecutionContext({ planId: 'plan-bench', policy: { readOnly: true }, cancellationToken: plan });
  const noop = () => undefined;

  // Traces go into fresh records every round, so that they do not grow without bound.
  let frozenRecords = createExecutionContext({ planId: 'plan-bench' });
  let plainRecords = createExecutionContext({ planId: 'plan-bench' });
  let pushed = [];
  let pushedCopies = [];
  const plainTrace = {
    executionId: 'exec-5f2c9a0b1d3e4f60-1a',
    planId: 'plan-bench',
    toolName: 'builtin.fs.read',
    startedAt: '2026-12-02T16:17:46.937Z',
    endedAt: '2026-12-02T16:17:46.938Z',
    durationMs: 1.25,
    resultSizeBytes: 512,
    success: true,
  };
  const frozenTrace = Object.freeze({ ...plainTrace });
  let sink = 0;

  const medians = await compare(
    {
      'AbortController following the plan signal': {
        fn: () => {
          const controller = new AbortController();
          const follow = () => controller.abort(planSignal.reason);
          planSignal.addEventListener('abort', follow);
          planSignal.removeEventListener('abort', follow);
          sink += controller.signal.aborted ? 1 : 0;
        },
      },
      'child() + dispose()': {
        fn: () => {
          const token = plan.child();
          sink += token.isCancelled ? 1 : 0;
          token.dispose();
        },
      },
      'setTimeout + clearTimeout': {
        fn: () => clearTimeout(setTimeout(noop, 30_000)),
      },
      'child({ timeoutMs }) + dispose()': {
        fn: () => plan.child({ timeoutMs: 30_000 }).dispose(),
      },
      'object literal with the view fields': {
        fn: (index) => {
          const view = {
            planId: ctx.planId,
            policy: ctx.policy,
            resources: ctx.resources,
            cancellationToken: plan,
            executionId: 'exec-1',
            toolName: 'builtin.fs.read',
            metadata: ctx.metadata,
            changes: ctx.changes,
            traces: ctx.traces,
          };
          sink += view.toolName.length + index;
        },
      },
      'forExecution()': {
        fn: (index) => {
          const view = ctx.forExecution({ executionId: 'exec-1', toolName: 'builtin.fs.read', cancellationToken: plan });
          sink += view.toolName.length + index;
        },
      },
      'crypto.randomUUID()': { fn: () => (sink += randomUUID().length) },
      'createExecutionId()': { fn: () => (sink += createExecutionId().length) },
      'push the trace': {
        setup: () => {
          pushed = [];
        },
        fn: () => pushed.push(frozenTrace),
      },
      'recordTrace(), frozen trace': {
        setup: () => {
          frozenRecords = createExecutionContext({ planId: 'plan-bench' });
        },
        fn: () => frozenRecords.recordTrace(frozenTrace),
      },
      'push a frozen copy': {
        setup: () => {
          pushedCopies = [];
        },
        fn: () => pushedCopies.push(Object.freeze({ ...plainTrace })),
      },
      'recordTrace(), plain trace': {
        setup: () => {
          plainRecords = createExecutionContext({ planId: 'plan-bench' });
        },
        fn: () => plainRecords.recordTrace(plainTrace),
      },
    },
    { rounds: 11, iterations: 50_000, warmup: 50_000 },
  );
  if (sink < 0) throw new Error('unreachable: keeps the results alive');
  plan.dispose();

  const row = (name, baseline, baselineCase, subjectCase, note) => ({
    name,
    baseline,
    baselineNs: medians[baselineCase],
    subjectNs: medians[subjectCase],
    target: 'report',
    pass: true,
    ...(note === undefined ? {} : { note }),
  });
  return [
    row(
      'CancellationToken: child() + dispose(), no deadline',
      'new AbortController() following the plan signal (addEventListener + removeEventListener)',
      'AbortController following the plan signal',
      'child() + dispose()',
      'the child adds no listener to the plan signal',
    ),
    row('CancellationToken: child({ timeoutMs }) + dispose()', 'setTimeout + clearTimeout', 'setTimeout + clearTimeout', 'child({ timeoutMs }) + dispose()'),
    row(
      'ctx.forExecution() (a view with its own token)',
      'an object literal with the same nine fields',
      'object literal with the view fields',
      'forExecution()',
    ),
    row('createExecutionId()', 'crypto.randomUUID()', 'crypto.randomUUID()', 'createExecutionId()'),
    row(
      'ctx.recordTrace() of a frozen trace (validate, keep)',
      'push the trace, no validation',
      'push the trace',
      'recordTrace(), frozen trace',
      'what the runtime does',
    ),
    row('ctx.recordTrace() of a plain trace (validate, copy, freeze)', 'push a frozen copy, no validation', 'push a frozen copy', 'recordTrace(), plain trace'),
  ];
}

module.exports = { run };
runWhenMain(module, run);
