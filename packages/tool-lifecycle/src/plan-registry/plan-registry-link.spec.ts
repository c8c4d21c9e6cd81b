import { ToolCancelledError } from '@ca/tool-context';
import {
  PLAN_REGISTRY,
  PlanRegistryError,
  TOOL_RUNTIME,
  ToolInvalidArgumentError,
  ToolRuntime,
  createCancelMessage,
  registerToolRuntime,
  type PlanMessageHandler,
  type PlanProgress,
  type PlanRegistration,
  type PlanRegistry,
  type PlanRegistryEntry,
} from '../index';
// After the package entry, which loads reflect-metadata for tsyringe.
import { container } from 'tsyringe';
import { InMemoryPlanRegistry, InMemoryToolSource, RecordingLogger, TestTool } from '../testing/index';

/** Waits until `condition` holds, polling on the event loop; fails after `timeoutMs`. */
async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A tool that waits for its plan's cancellation and reports the reason it saw. */
function waitingTool(seen: string[]): TestTool {
  return new TestTool({
    name: 'test.wait',
    stateless: true,
    execute: (_input, ctx) =>
      new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => {
          seen.push(ctx.cancellationToken.reason ?? '');
          reject(new Error('aborted'));
        });
      }),
  });
}

/**
 * A registry that records every call it gets and hands each plan's message
 * handler to the test: the runtime's side of the contract, observed.
 */
class RecordingRegistry implements PlanRegistry {
  readonly description = 'recording';
  readonly calls: string[] = [];
  readonly handlers = new Map<string, PlanMessageHandler>();
  readonly progress: PlanProgress[] = [];
  registerError: unknown = undefined;
  constructor(readonly heartbeatIntervalMs: number) {}
  async register(registration: PlanRegistration, onMessage: PlanMessageHandler): Promise<PlanRegistryEntry> {
    this.calls.push(`register ${registration.planId}`);
    if (this.registerError !== undefined) throw this.registerError;
    this.handlers.set(registration.planId, onMessage);
    return {
      heartbeat: async (progress) => {
        this.calls.push(`heartbeat ${registration.planId}`);
        this.progress.push(progress);
      },
      end: async () => {
        this.calls.push(`end ${registration.planId}`);
      },
    };
  }
  async list() {
    return [];
  }
  async send(): Promise<never> {
    throw new Error('not used');
  }
  async close(): Promise<void> {
    this.calls.push('close');
  }
}

describe('a runtime with a plan registry', () => {
  it('registers a plan before runPlan runs its function, with policy, labels, host and process, and withdraws it when the plan ends', async () => {
    const registry = new InMemoryPlanRegistry({ host: 'host-a' });
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([new TestTool({ name: 'test.echo' })])], planRegistry: registry });
    const listed = await runtime.runPlan({ planId: 'plan-1', policy: { readOnly: true }, registry: { labels: { file: 'tidy.yaml' } } }, async (ctx) => {
      await runtime.execute('test.echo', { text: 'hi' }, ctx);
      return registry.list();
    });
    expect(listed).toEqual([
      expect.objectContaining({
        planId: 'plan-1',
        host: 'host-a',
        pid: process.pid,
        policy: { readOnly: true, requireCheckpoint: false, network: 'allow' },
        labels: { file: 'tidy.yaml' },
        stepsDone: 0,
      }),
    ]);
    expect(Date.parse(listed[0]!.startedAt)).not.toBeNaN();
    expect(await registry.list()).toEqual([]);
  });

  it('refreshes each plan on a timer with the tools activated and the executions done', async () => {
    const registry = new InMemoryPlanRegistry({ heartbeatIntervalMs: 5 });
    const tools = [new TestTool({ name: 'test.a' }), new TestTool({ name: 'test.b' })];
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource(tools)], planRegistry: registry });
    const ctx = runtime.createPlan({ planId: 'progress' });
    await runtime.execute('test.a', {}, ctx);
    await runtime.execute('test.b', {}, ctx);
    await runtime.execute('test.a', {}, ctx);
    await waitFor(async () => (await registry.list())[0]?.stepsDone === 3);
    expect((await registry.list())[0]?.tools).toEqual(['test.a', 'test.b']);
    await runtime.endPlan(ctx);
    expect(await registry.list()).toEqual([]);
  });

  it('cancels the plan when a cancel message arrives: the running tool sees its signal and the reason', async () => {
    const registry = new InMemoryPlanRegistry();
    const seen: string[] = [];
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([waitingTool(seen)])], planRegistry: registry, logger: new RecordingLogger() });
    const running = runtime.runPlan({ planId: 'to-cancel' }, (ctx) => runtime.execute('test.wait', {}, ctx));
    await waitFor(async () => (await registry.list()).length === 1);
    await expect(registry.send(createCancelMessage('to-cancel', 'stopped by an operator', 'ops pid 1'))).resolves.toEqual({
      planId: 'to-cancel',
      delivery: 'delivered',
    });
    const error = await running.catch((thrown: unknown) => thrown);
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect((error as ToolCancelledError).reason).toBe('stopped by an operator');
    expect(seen).toEqual(['stopped by an operator']);
    expect(await registry.list()).toEqual([]);
  });

  it('refuses, in runPlan, a plan whose id a plan of another runtime holds: the function never runs', async () => {
    const registry = new InMemoryPlanRegistry();
    const first = new ToolRuntime({ planRegistry: registry, logger: new RecordingLogger() });
    const held = first.createPlan({ planId: 'shared' });
    await first.whenRegistered(held);
    const fn = jest.fn();
    const secondLogger = new RecordingLogger();
    const error = await new ToolRuntime({ planRegistry: registry, logger: secondLogger }).runPlan({ planId: 'shared' }, fn).catch((thrown: unknown) => thrown);
    // runPlan throws the refusal; it is not also logged as a plan that "runs, unlisted".
    expect(secondLogger.entries).toEqual([]);
    expect(PlanRegistryError.isInstance(error)).toBe(true);
    expect((error as PlanRegistryError).code).toBe('PLAN_REGISTRY_DUPLICATE_PLAN');
    expect((error as PlanRegistryError).message).toMatch(/A running plan already has id 'shared' in plan registry memory\. Plan ids must be unique/);
    expect(fn).not.toHaveBeenCalled();
    // The first plan is still the registered one, and still cancellable.
    expect((await registry.list()).map((plan) => plan.planId)).toEqual(['shared']);
    await registry.send(createCancelMessage('shared', 'done'));
    await waitFor(() => held.cancellationToken.isCancelled);
    await first.endPlan(held);
    expect(await registry.list()).toEqual([]);
  });

  it('keeps a plan out of the registry with registry: false', async () => {
    const registry = new InMemoryPlanRegistry();
    const runtime = new ToolRuntime({ planRegistry: registry });
    await runtime.runPlan({ registry: false }, async () => expect(await registry.list()).toEqual([]));
  });

  it('refuses an invalid registry option before the plan exists', () => {
    const runtime = new ToolRuntime({ planRegistry: new InMemoryPlanRegistry() });
    expect(() => runtime.createPlan({ planId: 'bad', registry: { labels: { file: 42 } } as never })).toThrow(ToolInvalidArgumentError);
    expect(() => runtime.createPlan({ planId: 'bad', registry: { label: {} } as never })).toThrow(/registry\.label must be left out/);
    expect(() => runtime.createPlan({ planId: 'bad', registry: 'yes' as never })).toThrow(/registry must be false or \{ labels/);
    // Nothing was created: the id is still free.
    expect(runtime.createPlan({ planId: 'bad' }).planId).toBe('bad');
  });

  it('refuses something that is not a registry when it is built', () => {
    expect(() => new ToolRuntime({ planRegistry: { register: () => undefined } as never })).toThrow(/planRegistry must be a PlanRegistry/);
    const registry = new RecordingRegistry(Number.NaN);
    expect(() => new ToolRuntime({ planRegistry: registry })).toThrow(/planRegistry\.heartbeatIntervalMs must be a positive number/);
  });

  it('touches the registry per plan, never per execution', async () => {
    const registry = new RecordingRegistry(60_000);
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([new TestTool({ name: 'test.echo', stateless: true })])], planRegistry: registry });
    await runtime.runPlan({ planId: 'busy' }, async (ctx) => {
      for (let index = 0; index < 1_000; index++) await runtime.execute('test.echo', { index }, ctx);
    });
    expect(registry.calls).toEqual(['register busy', 'end busy']);
  });

  it('runs a plan whose registration failed, logs why when nobody waits for it, and reports it through whenRegistered', async () => {
    const registry = new RecordingRegistry(60_000);
    registry.registerError = new Error('store is read-only');
    const logger = new RecordingLogger();
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([new TestTool({ name: 'test.echo' })])], planRegistry: registry, logger });
    const ctx = runtime.createPlan({ planId: 'unlisted' });
    await waitFor(() => logger.at('error').length > 0);
    await expect(runtime.whenRegistered(ctx)).rejects.toThrow('store is read-only');
    expect((await runtime.execute('test.echo', {}, ctx)).ok).toBe(true);
    await runtime.endPlan(ctx);
    expect(logger.at('error').map((entry) => entry.message)).toEqual([
      "Plan 'unlisted' could not be registered in plan registry recording; it runs, but cannot be listed or cancelled from elsewhere: store is read-only",
    ]);
    expect(registry.calls).toEqual(['register unlisted']);
  });

  it('ignores, with a warning, a control message of a kind it does not know', async () => {
    const registry = new RecordingRegistry(60_000);
    const logger = new RecordingLogger();
    const runtime = new ToolRuntime({ planRegistry: registry, logger });
    const ctx = runtime.createPlan({ planId: 'newer-sender' });
    await runtime.whenRegistered(ctx);
    registry.handlers.get('newer-sender')!({ kind: 'pause', planId: 'newer-sender' } as never);
    expect(ctx.cancellationToken.isCancelled).toBe(false);
    expect(logger.at('warn').map((entry) => entry.message)).toEqual([
      "Plan 'newer-sender' received a control message of kind 'pause', which this runtime does not know; it was ignored.",
    ]);
    await runtime.endPlan(ctx);
    // After the end, a late message changes nothing.
    registry.handlers.get('newer-sender')!(createCancelMessage('newer-sender', 'late'));
    expect(ctx.cancellationToken.isCancelled).toBe(false);
  });

  it('withdraws a plan that ended while its registration was still in flight', async () => {
    let finishRegistration: (() => void) | undefined;
    const registry = new RecordingRegistry(60_000);
    const register = registry.register.bind(registry);
    registry.register = (registration, onMessage) =>
      new Promise<PlanRegistryEntry>((resolve) => {
        finishRegistration = () => resolve(register(registration, onMessage));
      });
    const runtime = new ToolRuntime({ planRegistry: registry });
    const ctx = runtime.createPlan({ planId: 'quick' });
    const ending = runtime.endPlan(ctx);
    finishRegistration!();
    await ending;
    expect(registry.calls).toEqual(['register quick', 'end quick']);
  });

  it('beats on a timer that keeps no process alive, and stops once every plan has ended', async () => {
    // The link's timers, as it makes them: counting the process's active
    // timers instead would count those of whatever else runs in this worker.
    const realSetInterval = global.setInterval;
    const intervals: NodeJS.Timeout[] = [];
    const spy = jest.spyOn(global, 'setInterval').mockImplementation(((...args: Parameters<typeof setInterval>) => {
      const timer = realSetInterval(...args);
      intervals.push(timer);
      return timer;
    }) as typeof setInterval);
    const registry = new RecordingRegistry(5);
    const runtime = new ToolRuntime({ planRegistry: registry });
    const beatsOf = (planId: string) => registry.calls.filter((call) => call === `heartbeat ${planId}`).length;
    const plans = [runtime.createPlan({ planId: 'p1' }), runtime.createPlan({ planId: 'p2' })];
    try {
      await waitFor(() => beatsOf('p1') >= 2 && beatsOf('p2') >= 2);
    } finally {
      spy.mockRestore();
    }
    // One timer beats for both plans, and it is unref'd: it does not keep the event loop alive.
    expect(intervals).toHaveLength(1);
    expect(intervals[0]!.hasRef()).toBe(false);
    await runtime.endPlan(plans[0]!);
    const third = runtime.createPlan({ planId: 'p3' });
    await waitFor(() => beatsOf('p3') >= 1);
    await runtime.endPlan(plans[1]!);
    await runtime.endPlan(third);
    const calls = registry.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(registry.calls.length).toBe(calls);
    expect(registry.calls.slice(-1)).toEqual(['end p3']);
  });

  it('is taken from the container under PLAN_REGISTRY', async () => {
    const registry = new InMemoryPlanRegistry();
    const services = container.createChildContainer();
    services.register(PLAN_REGISTRY, { useValue: registry });
    registerToolRuntime(services);
    const runtime = services.resolve(TOOL_RUNTIME);
    await runtime.runPlan({ planId: 'from-di' }, async () => expect((await registry.list()).map((plan) => plan.planId)).toEqual(['from-di']));
  });
});
