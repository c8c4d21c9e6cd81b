import type { PlanContext, ToolExecutionTrace } from '@ca/tool-context';
import { ToolRuntime, silentLogger, type ApprovalHandler } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { ModelTools } from '../calls/model-tools';

/**
 * The tools every framework's loop test runs: one that reads (called with
 * repairable arguments), one that reaches the network (refused by a plan
 * that denies it) and one that writes (approved through the framework).
 */
export function loopTools(): { search: TestTool; fetch: TestTool; write: TestTool } {
  const search = new TestTool({
    name: 'docs.search',
    description: 'Searches the docs.',
    inputSchema: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } }, required: ['query'] },
    capability: { writes: false, openWorld: false },
    execute: (input) => {
      const { query, limit } = input as { query: string; limit?: number };
      return { hits: [`${query} (${limit ?? 'all'})`] };
    },
  });
  const fetch = new TestTool({ name: 'web.fetch', description: 'Fetches a URL.', capability: { writes: false, openWorld: true }, execute: () => 'page' });
  const write = new TestTool({
    name: 'notes.write',
    description: 'Writes a note.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    capability: { writes: true, checkpointable: true, openWorld: false },
    execute: () => 'written',
  });
  return { search, fetch, write };
}

/** The executions a test tool saw. */
export function executed(tool: TestTool): TestTool['events'] {
  return tool.events.filter((event) => event.type === 'execute');
}

/** A slow tool: waits on a real timer (30 s) until its call is cancelled, and tells when it started and when it saw the cancellation. */
export function slowTool(name = 'reports.build'): { tool: TestTool; started: Promise<void>; cancelled: Promise<unknown> } {
  let markStarted!: () => void;
  let markCancelled!: (reason: unknown) => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const cancelled = new Promise<unknown>((resolve) => (markCancelled = resolve));
  const tool = new TestTool({
    name,
    description: 'Builds a report (slowly).',
    inputSchema: { type: 'object', properties: { month: { type: 'string' } } },
    capability: { writes: false, openWorld: false },
    execute: (_input, ctx) =>
      new Promise((resolve, reject) => {
        const signal = ctx.cancellationToken.signal;
        const timer = setTimeout(() => resolve('report'), 30_000);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            markCancelled(signal.reason);
            reject(new Error('stopped'));
          },
          { once: true },
        );
        markStarted();
      }),
  });
  return { tool, started, cancelled };
}

/** Resolves with the promise's value, or rejects saying what did not happen within `ms` (a generous bound: the machine is shared). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** A runtime over the {@link loopTools}, with an approval handler when given one. */
export function loopRuntime(approvalHandler?: ApprovalHandler): ReturnType<typeof loopTools> & { runtime: ToolRuntime } {
  const tools = loopTools();
  const runtime = new ToolRuntime({
    sources: [new InMemoryToolSource([tools.search, tools.fetch, tools.write])],
    logger: silentLogger,
    ...(approvalHandler === undefined ? {} : { approvalHandler }),
  });
  return { ...tools, runtime };
}

/**
 * A framework's run stopped by its user while a slow tool runs: `startRun`
 * starts the framework's loop over the plan's tools (made with
 * `cancelPlanOnAbort`), with `signal` as the run's abort signal; the tool must
 * see its cancellation within 5 s. Returns whether the plan was left cancelled,
 * and its traces.
 */
export async function abortMidCall(
  cancelPlanOnAbort: boolean,
  startRun: (modelTools: ModelTools, plan: PlanContext, signal: AbortSignal) => Promise<unknown>,
): Promise<{ planCancelled: boolean; traces: readonly ToolExecutionTrace[] }> {
  const { tool, started, cancelled } = slowTool();
  const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger: silentLogger });
  const plan = runtime.createPlan();
  const stop = new AbortController();
  const running = startRun(new ModelTools(runtime), plan, stop.signal);
  running.catch(() => undefined);
  try {
    await within(started, 5_000, 'the tool starting');
    stop.abort(new Error('the user pressed stop'));
    await within(cancelled, 5_000, 'the tool seeing its cancellation');
    await running.catch(() => undefined);
    return { planCancelled: plan.cancellationToken.isCancelled, traces: [...plan.traces] };
  } finally {
    await runtime.endPlan(plan, { graceMs: 100 });
  }
}
