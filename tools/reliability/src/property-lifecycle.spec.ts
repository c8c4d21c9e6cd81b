// Property: under any interleaving of execute / activate / cancel / endPlan
// across several plans — with activations, executions and deactivations that
// fail, and tools that ignore cancellation — the lifecycle invariants hold:
// at most one activation per (plan, tool), exactly one deactivation per
// activation, after the plan's work settled; one trace per execute call;
// only documented errors; nothing left listening.
import fc from 'fast-check';
import { ToolCancelledError } from '@ca/tool-context';
import {
  ToolActivationError,
  ToolExecutionError,
  ToolPlanEndedError,
  ToolRuntime,
  type PlanEndReport,
  type ToolDescriptor,
  type ToolInstance,
} from '@ca/tool-lifecycle';
import { InMemoryToolSource, RecordingLogger } from '@ca/tool-lifecycle/testing';
import type { PlanContext } from '@ca/tool-context';
import { abortListenerCount, settle, withinHangGuard, type Settled } from './support/guards';
import { propertyParameters } from './support/property-parameters';

const PLANS = 3;
const TOOLS = 3;

type Failure = 'none' | 'throw' | 'reject-non-error' | 'failed-result';

type Command =
  | { readonly kind: 'execute'; readonly plan: number; readonly tool: number; readonly failure: Failure; readonly ignoresCancellation: boolean }
  | { readonly kind: 'activate'; readonly plan: number; readonly tool: number }
  | { readonly kind: 'cancel'; readonly plan: number }
  | { readonly kind: 'endPlan'; readonly plan: number };

const planIndex = fc.nat(PLANS - 1);
const toolIndex = fc.nat(TOOLS - 1);
const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('execute' as const),
      plan: planIndex,
      tool: toolIndex,
      failure: fc.constantFrom<Failure>('none', 'none', 'none', 'throw', 'reject-non-error', 'failed-result'),
      ignoresCancellation: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('activate' as const), plan: planIndex, tool: toolIndex }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), plan: planIndex }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('endPlan' as const), plan: planIndex }) },
);

interface LogEvent {
  readonly type:
    'execute-call' | 'execute-start' | 'execute-end' | 'activate-start' | 'activate-ok' | 'activate-failed' | 'deactivate' | 'cancel' | 'endPlan-call';
  readonly plan: string;
  readonly tool?: string;
}

interface ExecuteInput {
  readonly failure: Failure;
  readonly ignoresCancellation: boolean;
}

/** A tool whose every lifecycle step waits for the scheduler, and which logs each step. */
function scheduledTool(
  name: string,
  scheduler: fc.Scheduler,
  log: LogEvent[],
  nextActivationFails: () => boolean,
  nextDeactivationFails: () => boolean,
): ToolInstance<ExecuteInput> {
  const descriptor: ToolDescriptor = {
    name,
    description: `Scheduled tool ${name}`,
    source: 'custom',
    capability: { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false },
  };
  return {
    descriptor,
    async activate(ctx) {
      log.push({ type: 'activate-start', plan: ctx.planId, tool: name });
      await scheduler.schedule(Promise.resolve(), `activate ${name} in ${ctx.planId}`);
      if (nextActivationFails()) {
        log.push({ type: 'activate-failed', plan: ctx.planId, tool: name });
        throw new Error(`activation of ${name} failed`);
      }
      log.push({ type: 'activate-ok', plan: ctx.planId, tool: name });
    },
    async execute(input, ctx) {
      log.push({ type: 'execute-start', plan: ctx.planId, tool: name });
      try {
        await scheduler.schedule(Promise.resolve(), `execute ${name} in ${ctx.planId}`);
        if (!input.ignoresCancellation) ctx.cancellationToken.check();
        if (input.failure === 'throw') throw new Error(`${name} broke`);
        if (input.failure === 'reject-non-error') throw { reason: `${name} rejected with a plain object` };
        if (input.failure === 'failed-result') return { ok: false, error: Object.assign(new Error('expected failure'), { code: 'EXPECTED' }) };
        return { ok: true, output: { tool: name } };
      } finally {
        log.push({ type: 'execute-end', plan: ctx.planId, tool: name });
      }
    },
    async deactivate(ctx) {
      log.push({ type: 'deactivate', plan: ctx.planId, tool: name });
      await scheduler.schedule(Promise.resolve(), `deactivate ${name} in ${ctx.planId}`);
      if (nextDeactivationFails()) throw new Error(`deactivation of ${name} failed`);
    },
  };
}

function cycle(values: readonly boolean[]): () => boolean {
  let index = 0;
  return () => values[index++ % values.length];
}

function isDocumentedExecuteError(error: unknown): boolean {
  return (
    ToolCancelledError.isInstance(error) ||
    ToolPlanEndedError.isInstance(error) ||
    ToolActivationError.isInstance(error) ||
    ToolExecutionError.isInstance(error)
  );
}

const rarely = fc.array(fc.constantFrom(false, false, false, true), { minLength: 1, maxLength: 8 });

describe('random interleavings of execute / activate / cancel / endPlan across plans', () => {
  it('keep the lifecycle invariants', async () => {
    const seen = { activations: 0, deactivationFailures: 0, cancelled: 0, planEnded: 0, activationFailed: 0, executionFailed: 0, ok: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(commandArbitrary, { minLength: 1, maxLength: 30 }),
        rarely,
        rarely,
        async (scheduler, commands, activationFailures, deactivationFailures) => {
          const log: LogEvent[] = [];
          const nextActivationFails = cycle(activationFailures);
          const nextDeactivationFails = cycle(deactivationFailures);
          const tools = Array.from({ length: TOOLS }, (_, index) => scheduledTool(`tool-${index}`, scheduler, log, nextActivationFails, nextDeactivationFails));
          const logger = new RecordingLogger();
          // A grace period no healthy run reaches: every step is released by the scheduler.
          const runtime = new ToolRuntime({ sources: [new InMemoryToolSource(tools)], logger, options: { endPlanGraceMs: 60_000 } });
          await runtime.listTools();
          const plans: PlanContext[] = Array.from({ length: PLANS }, (_, index) => runtime.createPlan({ planId: `plan-${index}` }));
          const executeCalls = new Map<string, number>();
          const executeOutcomes: { command: Command; seq: number; outcome: Settled<unknown> }[] = [];
          const activateOutcomes: Settled<unknown>[] = [];
          const endReports = new Map<string, PlanEndReport[]>();

          const run = async (command: Command): Promise<void> => {
            const ctx = plans[command.plan];
            const planId = ctx.planId;
            switch (command.kind) {
              case 'execute': {
                executeCalls.set(planId, (executeCalls.get(planId) ?? 0) + 1);
                const seq = log.push({ type: 'execute-call', plan: planId, tool: `tool-${command.tool}` }) - 1;
                const input: ExecuteInput = { failure: command.failure, ignoresCancellation: command.ignoresCancellation };
                executeOutcomes.push({ command, seq, outcome: await settle(runtime.execute(`tool-${command.tool}`, input, ctx)) });
                return;
              }
              case 'activate':
                activateOutcomes.push(await settle(runtime.activate(`tool-${command.tool}`, ctx)));
                return;
              case 'cancel':
                log.push({ type: 'cancel', plan: planId });
                ctx.cancellationToken.cancel('cancelled by the property');
                return;
              case 'endPlan': {
                log.push({ type: 'endPlan-call', plan: planId });
                // Reports are kept in call order (a later call may resolve first).
                const reports = endReports.get(planId) ?? [];
                endReports.set(planId, reports);
                const slot = reports.push(undefined as never) - 1;
                reports[slot] = await runtime.endPlan(ctx);
                return;
              }
            }
          };

          // Every command starts when the scheduler releases it, interleaved with the tools' steps.
          const running = commands.map((command, index) =>
            scheduler.schedule(Promise.resolve(), `command ${index}: ${JSON.stringify(command)}`).then(() => run(command)),
          );
          await withinHangGuard(scheduler.waitIdle(), 'the interleaving');
          // Then every plan ends (again, for those already ended: idempotent).
          for (const ctx of plans) {
            log.push({ type: 'endPlan-call', plan: ctx.planId });
            const reports = endReports.get(ctx.planId) ?? [];
            endReports.set(ctx.planId, reports);
            const slot = reports.push(undefined as never) - 1;
            const ending = runtime.endPlan(ctx);
            await withinHangGuard(scheduler.waitFor(ending), `endPlan of ${ctx.planId}`);
            reports[slot] = await ending;
          }
          await withinHangGuard(scheduler.waitIdle(), 'the end of every plan');
          await withinHangGuard(Promise.all(running), 'the commands');

          for (const ctx of plans) {
            const planId = ctx.planId;
            const events = log.map((event, seq) => ({ ...event, seq })).filter((event) => event.plan === planId);
            const firstEnd = events.find((event) => event.type === 'endPlan-call')!.seq;
            const firstCancel = events.find((event) => event.type === 'cancel')?.seq ?? Number.POSITIVE_INFINITY;
            const lastExecuteEnd = Math.max(-1, ...events.filter((event) => event.type === 'execute-end').map((event) => event.seq));
            const activatedOk = new Set<string>();
            for (let index = 0; index < TOOLS; index++) {
              const tool = `tool-${index}`;
              const of = (type: LogEvent['type']) => events.filter((event) => event.tool === tool && event.type === type);
              // At most one activation per (plan, tool); exactly one deactivation per activation.
              expect([planId, tool, of('activate-ok').length <= 1]).toEqual([planId, tool, true]);
              expect([planId, tool, of('deactivate').length]).toEqual([planId, tool, of('activate-ok').length]);
              if (of('activate-ok').length === 1) activatedOk.add(tool);
              // Deactivation comes after the activation and after every execution of the plan settled.
              for (const deactivation of of('deactivate')) {
                expect(deactivation.seq).toBeGreaterThan(of('activate-ok')[0].seq);
                expect(deactivation.seq).toBeGreaterThan(lastExecuteEnd);
                expect(deactivation.seq).toBeGreaterThan(firstEnd);
              }
              // Single flight: no second activation starts while one is in flight or done.
              expect(of('activate-start').length).toBe(of('activate-ok').length + of('activate-failed').length);
            }
            // Nothing of a tool runs in a plan once its end was asked for.
            for (const event of events) {
              if (event.type === 'execute-start' || event.type === 'activate-start') expect(event.seq).toBeLessThan(firstEnd);
            }
            // One trace per execute call, whatever happened.
            expect(ctx.traces).toHaveLength(executeCalls.get(planId) ?? 0);
            // endPlan: never throws, the first ending deactivates what was activated, later ones are no-ops.
            const [first, ...later] = endReports.get(planId)!;
            expect(first.alreadyEnded).toBe(false);
            expect(first.abandonedExecutions).toBe(0);
            expect([...first.deactivated, ...first.failures.map((failure) => failure.toolName)].sort()).toEqual([...activatedOk].sort());
            for (const report of later) expect(report).toMatchObject({ alreadyEnded: true, deactivated: [], failures: [] });
            for (let index = 0; index < TOOLS; index++) expect(runtime.isActive(`tool-${index}`, ctx)).toBe(false);
            // Nothing left listening on the plan's signal.
            expect(abortListenerCount(ctx.cancellationToken.signal)).toBe(0);
            // Calls after a cancellation are refused as cancelled; after the end (not cancelled) as ended.
            for (const { command, seq, outcome } of executeOutcomes) {
              if (command.plan !== Number(planId.slice('plan-'.length))) continue;
              const reason = outcome.status === 'rejected' ? outcome.reason : undefined;
              if (seq > firstCancel) expect(ToolCancelledError.isInstance(reason)).toBe(true);
              else if (seq > firstEnd) expect(ToolPlanEndedError.isInstance(reason)).toBe(true);
            }
          }
          seen.activations += log.filter((event) => event.type === 'activate-ok').length;
          for (const reports of endReports.values()) seen.deactivationFailures += reports[0].failures.length;
          for (const { outcome } of executeOutcomes) {
            if (outcome.status === 'fulfilled') seen.ok++;
            else if (ToolCancelledError.isInstance(outcome.reason)) seen.cancelled++;
            else if (ToolPlanEndedError.isInstance(outcome.reason)) seen.planEnded++;
            else if (ToolActivationError.isInstance(outcome.reason)) seen.activationFailed++;
            else if (ToolExecutionError.isInstance(outcome.reason)) seen.executionFailed++;
            if (outcome.status === 'rejected') {
              expect(isDocumentedExecuteError(outcome.reason) ? 'documented' : outcome.reason).toBe('documented');
              expect((outcome.reason as { trace?: unknown }).trace).toBeDefined();
            }
          }
          for (const outcome of activateOutcomes) {
            if (outcome.status === 'rejected') {
              const documented = ToolActivationError.isInstance(outcome.reason) || ToolPlanEndedError.isInstance(outcome.reason);
              expect(documented ? 'documented' : outcome.reason).toBe('documented');
            }
          }
        },
      ),
      propertyParameters(250),
    );
    // The runs reached every kind of outcome, not only the happy path.
    for (const [what, count] of Object.entries(seen)) expect([what, count > 0]).toEqual([what, true]);
  });
});
