// The fault matrix: each fault a tool can have, against tools of each source.
// For every cell: the fault is reported clearly (the documented error type,
// the tool and plan in the message, the cause kept, the trace attached and
// recorded), the plan still ends (endPlan resolves, never throws), and the
// other tools are unaffected (a healthy sibling of the same source runs
// before and after, and is deactivated exactly once).
//
// MCP faults are covered in packages/adapters-mcp, not here.
import { defineTool, createCustomAdapter } from '@ca/adapters-custom';
import { createWrappedAdapter, fromFunction, wrapTool } from '@ca/adapters-wrapped';
import { ToolCancelledError, type PlanContext, type ToolExecutionContext } from '@ca/tool-context';
import {
  ToolActivationError,
  ToolDeactivationError,
  ToolExecutionError,
  ToolPlanEndedError,
  ToolRuntime,
  type ExecutionResult,
  type ToolSource,
} from '@ca/tool-lifecycle';
import { InMemoryToolSource, RecordingLogger, TestTool } from '@ca/tool-lifecycle/testing';
import { settle, withinHangGuard } from './support/guards';

/** What a faulty (or healthy) tool does, independent of its source. */
interface ToolSpec {
  readonly name: string;
  readonly activate?: (ctx: ToolExecutionContext) => Promise<void>;
  readonly execute: (input: unknown, ctx: ToolExecutionContext) => unknown;
  readonly deactivate?: (ctx: ToolExecutionContext) => Promise<void>;
}

/** A source kind the matrix can build tools of. */
interface ProgrammableSource {
  readonly label: string;
  readonly prefix: string;
  /** Whether tools of this source have activate/deactivate steps at all. */
  readonly lifecycle: boolean;
  build(specs: readonly ToolSpec[]): ToolSource;
}

const readOnly = { writes: false, checkpointable: true, openWorld: false } as const;

const sources: readonly ProgrammableSource[] = [
  {
    label: 'TestTool (in-memory source)',
    prefix: 'memory',
    lifecycle: true,
    build: (specs) =>
      new InMemoryToolSource(
        specs.map(
          (spec) => new TestTool({ name: spec.name, capability: readOnly, activate: spec.activate, deactivate: spec.deactivate, execute: spec.execute }),
        ),
      ),
  },
  {
    label: 'defineTool (@ca/adapters-custom)',
    prefix: 'custom',
    lifecycle: true,
    build: (specs) =>
      createCustomAdapter({
        tools: specs.map((spec) =>
          defineTool({
            name: spec.name,
            description: `Custom tool ${spec.name}.`,
            inputSchema: { type: 'object' },
            capability: readOnly,
            ...(spec.activate === undefined ? {} : { activate: spec.activate }),
            ...(spec.deactivate === undefined ? {} : { deactivate: spec.deactivate }),
            execute: (input: unknown, ctx: ToolExecutionContext) => spec.execute(input, ctx) as never,
          } as never),
        ),
      }),
  },
  {
    label: 'wrapTool around a faulty tool (@ca/adapters-wrapped)',
    prefix: 'wrapped',
    lifecycle: true,
    build: (specs) =>
      createWrappedAdapter({
        tools: specs.map((spec) =>
          wrapTool(
            new TestTool({ name: `inner.${spec.name}`, capability: readOnly, activate: spec.activate, deactivate: spec.deactivate, execute: spec.execute }),
            { name: spec.name, wrapExecute: (next, input, ctx, options) => next(input, ctx, options) },
          ),
        ),
      }),
  },
  {
    // Foreign functions have no activate/deactivate: the lifecycle faults do not apply to them.
    label: 'foreign plain function (fromFunction)',
    prefix: 'function',
    lifecycle: false,
    build: (specs) =>
      createWrappedAdapter({
        tools: specs.map((spec) =>
          fromFunction((input: unknown, { context }) => spec.execute(input, context), {
            name: spec.name,
            description: `Foreign function ${spec.name}.`,
            capability: readOnly,
          }),
        ),
      }),
  },
];

/** A gate a tool can wait on, opened by the test. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

interface Cell {
  readonly runtime: ToolRuntime;
  readonly logger: RecordingLogger;
  readonly faulty: string;
  readonly healthy: string;
  readonly healthyCounts: { activations: number; deactivations: number; executions: number };
}

/** A runtime holding the faulty tool and a healthy sibling, both of `source`. */
function cell(source: ProgrammableSource, fault: Omit<ToolSpec, 'name'>, options: { endPlanGraceMs?: number } = {}): Cell {
  const faulty = `${source.prefix}.faulty`;
  const healthy = `${source.prefix}.healthy`;
  const healthyCounts = { activations: 0, deactivations: 0, executions: 0 };
  const healthySpec: ToolSpec = {
    name: healthy,
    ...(source.lifecycle
      ? {
          activate: async () => {
            healthyCounts.activations++;
          },
          deactivate: async () => {
            healthyCounts.deactivations++;
          },
        }
      : {}),
    execute: () => {
      healthyCounts.executions++;
      return { fine: true };
    },
  };
  const logger = new RecordingLogger();
  const runtime = new ToolRuntime({ sources: [source.build([{ name: faulty, ...fault }, healthySpec])], logger, options });
  return { runtime, logger, faulty, healthy, healthyCounts };
}

async function expectHealthy(target: Cell, ctx: PlanContext): Promise<void> {
  const result = await target.runtime.execute(target.healthy, {}, ctx);
  expect(result).toMatchObject({ ok: true, output: { fine: true } });
}

/** The rejection of `promise`, checked to carry its trace, the one recorded last in `ctx`. */
async function rejectionOf(promise: Promise<unknown>, ctx: PlanContext): Promise<Error & { code?: string; cause?: unknown; trace?: unknown }> {
  const outcome = await withinHangGuard(settle(promise), 'execute');
  if (outcome.status === 'fulfilled') throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`);
  const error = outcome.reason as Error & { code?: string; trace?: unknown };
  expect(error.trace).toBeDefined();
  expect(error.trace).toBe(ctx.traces[ctx.traces.length - 1]);
  expect(ctx.traces[ctx.traces.length - 1]).toMatchObject({ success: false, error: { code: error.code, message: error.message } });
  return error;
}

function expectNamesToolAndPlan(error: { message: string }, tool: string, ctx: PlanContext): void {
  expect(error.message).toContain(tool);
  expect(error.message).toContain(ctx.planId);
}

const NON_ERRORS: readonly [string, unknown][] = [
  ['a string', 'plain string failure'],
  ['a number', 42],
  ['null', null],
  ['undefined', undefined],
  ['a plain object', { reason: 'object failure' }],
  ['a symbol', Symbol('failure')],
];

const HUNDRED_MB = 100 * 1024 * 1024;

describe.each(sources)('fault matrix: $label', (source) => {
  if (source.lifecycle) {
    it('activation throws → ToolActivationError (cause kept, not kept active, retried next time); plan ends; sibling unaffected', async () => {
      let attempts = 0;
      const target = cell(source, {
        activate: async () => {
          attempts++;
          throw new Error('cannot open the session');
        },
        deactivate: async () => {
          throw new Error('must never run: the tool was never active');
        },
        execute: () => ({ unreachable: true }),
      });
      const ctx = target.runtime.createPlan();
      await expectHealthy(target, ctx);
      const error = await rejectionOf(target.runtime.execute(target.faulty, {}, ctx), ctx);
      expect(ToolActivationError.isInstance(error)).toBe(true);
      expect(error.code).toBe('TOOL_ACTIVATION_FAILED');
      expect((error.cause as Error).message).toBe('cannot open the session');
      expectNamesToolAndPlan(error, target.faulty, ctx);
      expect(target.runtime.isActive(target.faulty, ctx)).toBe(false);
      expect(
        ToolActivationError.isInstance(
          await settle(target.runtime.execute(target.faulty, {}, ctx)).then((outcome) => (outcome.status === 'rejected' ? outcome.reason : undefined)),
        ),
      ).toBe(true);
      expect(attempts).toBe(2);
      await expectHealthy(target, ctx);
      const report = await target.runtime.endPlan(ctx);
      expect(report).toMatchObject({ deactivated: [target.healthy], failures: [], abandonedExecutions: 0, alreadyEnded: false });
      expect(target.healthyCounts).toEqual({ activations: 1, deactivations: 1, executions: 2 });
      expect(ctx.traces).toHaveLength(4);
    });

    it('deactivation throws → endPlan resolves and reports a ToolDeactivationError (logged); the sibling is still deactivated', async () => {
      const target = cell(source, {
        activate: async () => undefined,
        deactivate: async () => {
          throw new Error('session close failed');
        },
        execute: () => ({ done: true }),
      });
      const ctx = target.runtime.createPlan();
      await expectHealthy(target, ctx);
      expect(await target.runtime.execute(target.faulty, {}, ctx)).toMatchObject({ ok: true });
      const report = await withinHangGuard(target.runtime.endPlan(ctx), 'endPlan');
      expect(report.deactivated).toEqual([target.healthy]);
      expect(report.failures).toHaveLength(1);
      const failure = report.failures[0];
      expect(ToolDeactivationError.isInstance(failure)).toBe(true);
      expect(failure).toMatchObject({ code: 'TOOL_DEACTIVATION_FAILED', toolName: target.faulty, planId: ctx.planId });
      expect((failure.cause as Error).message).toBe('session close failed');
      expectNamesToolAndPlan(failure, target.faulty, ctx);
      expect(target.logger.at('error').map((entry) => entry.message)).toEqual([failure.message]);
      expect(target.healthyCounts).toEqual({ activations: 1, deactivations: 1, executions: 1 });
      expect(await target.runtime.endPlan(ctx)).toMatchObject({ alreadyEnded: true, failures: [] });
    });

    it('activation outlasts the grace period → endPlan returns, and the tool is deactivated once as soon as its activation succeeds', async () => {
      const slow = gate();
      const started = gate();
      let deactivations = 0;
      const deactivated = gate();
      const target = cell(
        source,
        {
          activate: () => {
            started.open();
            return slow.wait;
          },
          deactivate: async () => {
            deactivations++;
            deactivated.open();
          },
          execute: () => ({ late: true }),
        },
        { endPlanGraceMs: 20 },
      );
      const ctx = target.runtime.createPlan();
      await expectHealthy(target, ctx);
      const execution = settle(target.runtime.execute(target.faulty, {}, ctx));
      await withinHangGuard(started.wait, 'the activation to start');
      const report = await withinHangGuard(target.runtime.endPlan(ctx), 'endPlan');
      expect(report.deactivated).toEqual([target.healthy]);
      expect(report.abandonedExecutions).toBe(1);
      slow.open();
      const outcome = await withinHangGuard(execution, 'the late execution');
      expect(outcome.status === 'rejected' && ToolPlanEndedError.isInstance(outcome.reason)).toBe(true);
      await withinHangGuard(deactivated.wait, 'the late deactivation');
      expect(deactivations).toBe(1);
      expect(target.healthyCounts.deactivations).toBe(1);
    });
  }

  it('execution throws an Error → ToolExecutionError with the cause and its trace; plan ends; sibling unaffected', async () => {
    const thrown = new TypeError('cannot read the record');
    const target = cell(source, {
      execute: () => {
        throw thrown;
      },
    });
    const ctx = target.runtime.createPlan();
    await expectHealthy(target, ctx);
    const error = await rejectionOf(target.runtime.execute(target.faulty, {}, ctx), ctx);
    expect(ToolExecutionError.isInstance(error)).toBe(true);
    expect(error.cause).toBe(thrown);
    expect(error.message).toContain('cannot read the record');
    expectNamesToolAndPlan(error, target.faulty, ctx);
    await expectHealthy(target, ctx);
    const report = await target.runtime.endPlan(ctx);
    expect(report.failures).toEqual([]);
    expect(report.deactivated).toContain(target.healthy);
    if (source.lifecycle) expect(target.healthyCounts.deactivations).toBe(1);
  });

  it.each(NON_ERRORS)('execution rejects with a non-Error (%s) → ToolExecutionError, the value kept as cause', async (_label, value) => {
    const target = cell(source, { execute: () => Promise.reject(value) });
    const ctx = target.runtime.createPlan();
    const error = await rejectionOf(target.runtime.execute(target.faulty, {}, ctx), ctx);
    expect(ToolExecutionError.isInstance(error)).toBe(true);
    expect(Object.is(error.cause, value)).toBe(true);
    expectNamesToolAndPlan(error, target.faulty, ctx);
    expect(typeof ctx.traces[0].error?.message).toBe('string');
    await expectHealthy(target, ctx);
    expect((await target.runtime.endPlan(ctx)).failures).toEqual([]);
  });

  it('a tool that ignores cancellation → the caller gets ToolCancelledError at once; endPlan gives up after the grace period; other plans run', async () => {
    const stuck = gate();
    let finished = 0;
    let markStarted!: () => void;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const target = cell(source, {
      execute: async () => {
        markStarted();
        await stuck.wait; // never looks at its signal
        finished++;
        return { finally: true };
      },
    });
    const ctx = target.runtime.createPlan();
    await expectHealthy(target, ctx);
    const running = target.runtime.execute(target.faulty, {}, ctx);
    await started; // cancel while the tool runs (a plan cancelled earlier never starts it)
    ctx.cancellationToken.cancel('user pressed stop');
    const error = await rejectionOf(running, ctx);
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'TOOL_CANCELLED', reason: 'user pressed stop' });
    // A per-execution deadline the tool also ignores, in another plan.
    const other = target.runtime.createPlan();
    const late = await rejectionOf(target.runtime.execute(target.faulty, {}, other, { timeoutMs: 10 }), other);
    expect(ToolCancelledError.isInstance(late)).toBe(true);
    expect((late as unknown as { reason: string }).reason).toMatch(/timed out after 10 ms/);
    expect(other.cancellationToken.isCancelled).toBe(false);
    await expectHealthy(target, other);

    const report = await withinHangGuard(target.runtime.endPlan(ctx, { graceMs: 20 }), 'endPlan');
    expect(report.abandonedExecutions).toBe(1);
    expect(report.failures).toEqual([]);
    expect(report.deactivated).toContain(target.healthy);
    stuck.open();
    const otherReport = await withinHangGuard(target.runtime.endPlan(other), 'endPlan of the other plan');
    expect(otherReport.abandonedExecutions).toBe(0);
    expect(finished).toBe(2);
    if (source.lifecycle) expect(target.healthyCounts.deactivations).toBe(2);
  });

  it.each([
    [
      'a circular output',
      () => {
        const node: Record<string, unknown> = { name: 'loop' };
        node.self = node;
        return node;
      },
    ],
    ['an output holding a BigInt', () => ({ size: 10n })],
  ])('returns %s → a failed result with ToolExecutionError, traced; plan ends; sibling unaffected', async (_label, produce) => {
    const target = cell(source, { execute: produce });
    const ctx = target.runtime.createPlan();
    const result: ExecutionResult = await withinHangGuard(target.runtime.execute(target.faulty, {}, ctx), 'execute');
    expect(result.ok).toBe(false);
    const error = result.ok ? undefined : result.error;
    expect(ToolExecutionError.isInstance(error)).toBe(true);
    expect(error?.message).toMatch(/cannot be serialised to JSON/);
    expectNamesToolAndPlan(error!, target.faulty, ctx);
    expect(result.trace).toBe(ctx.traces[0]);
    expect(ctx.traces[0]).toMatchObject({ success: false, resultSizeBytes: 0, error: { code: 'TOOL_EXECUTION_FAILED' } });
    await expectHealthy(target, ctx);
    expect((await target.runtime.endPlan(ctx)).failures).toEqual([]);
  });

  it('returns an output of 100 MB → a successful result whose trace reports its size; plan ends; sibling unaffected', async () => {
    const target = cell(source, { execute: () => 'x'.repeat(HUNDRED_MB) });
    const ctx = target.runtime.createPlan();
    let result: ExecutionResult | undefined = await withinHangGuard(target.runtime.execute(target.faulty, {}, ctx), 'execute', 60_000);
    expect(result.ok).toBe(true);
    expect(typeof result.output === 'string' && result.output.length).toBe(HUNDRED_MB);
    expect(ctx.traces[0]).toMatchObject({ success: true, resultSizeBytes: HUNDRED_MB + 2 });
    result = undefined;
    await expectHealthy(target, ctx);
    expect((await target.runtime.endPlan(ctx)).failures).toEqual([]);
  });
});
