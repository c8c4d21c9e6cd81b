import type { CancellationToken, PlanContext, ToolExecutionContext } from '@ca/tool-context';
import { ToolActivationError, ToolDeactivationError, ToolNotActivatedError, ToolPlanEndedError } from '../errors';
import { createRedactingLogger, type RuntimeLogger } from '../observability';
import type { ToolInstance } from '../tool';

/** Settings of a {@link ToolLifecycleCache}. */
export interface ToolLifecycleCacheOptions {
  /**
   * How long `release` waits for a plan's in-flight executions and
   * activations before deactivating anyway, in milliseconds. Default 5,000.
   */
  readonly graceMs?: number;
  /** How long one `deactivate` may take before it is reported as failed. Default 10,000. */
  readonly deactivateTimeoutMs?: number;
  /**
   * How long one `activate` may take before it fails with
   * `ToolActivationError`, in milliseconds. Default 60,000. A tool that
   * finishes activating after its deadline is deactivated at once.
   */
  readonly activateTimeoutMs?: number;
  /**
   * How many ended plan ids are remembered so that late calls in an ended
   * plan are refused (oldest forgotten first). Default 10,000.
   */
  readonly endedPlanMemory?: number;
}

/** What ending a plan did. */
export interface PlanEndReport {
  readonly planId: string;
  /** Tools deactivated successfully, in the order they were activated. */
  readonly deactivated: readonly string[];
  /** Tools whose deactivation failed (each also logged). */
  readonly failures: readonly ToolDeactivationError[];
  /** Executions still running when the grace period ran out (0 when all settled). */
  readonly abandonedExecutions: number;
  /** True when the plan had already ended: nothing was done again. */
  readonly alreadyEnded: boolean;
}

type ActivationState = 'activating' | 'active';

interface ActivationEntry {
  readonly tool: ToolInstance;
  state: ActivationState;
  promise: Promise<void> | undefined;
  /** The tool's view of the plan, made for `activate` and used again for `deactivate`. */
  view: ToolExecutionContext | undefined;
}

/** Everything the runtime holds about one plan: its context (which keeps the records), activations, in-flight work and the tokens it owns. */
interface PlanRecord {
  readonly planId: string;
  readonly context: PlanContext;
  readonly activations: Map<string, ActivationEntry>;
  /** Executions and activations not yet settled. */
  pending: number;
  drained: (() => void) | undefined;
  /** Tokens made for the plan (a deadline, a followed signal), disposed when it ends. */
  readonly ownedTokens: CancellationToken[];
}

const NOTHING_PENDING = Promise.resolve();

/**
 * Remembers which tools are active in which plan. Activation happens at most
 * once per (plan, tool) with single flight: concurrent callers share one
 * in-flight activation; a failed activation is not recorded, so a later call
 * tries again. `release(planId)` deactivates each successfully activated tool
 * exactly once, after the plan's in-flight work settled or the grace period
 * ran out, and never throws.
 */
export class ToolLifecycleCache {
  private readonly plans = new Map<string, PlanRecord>();
  private readonly ended = new Set<string>();
  private readonly graceMs: number;
  private readonly deactivateTimeoutMs: number;
  private readonly activateTimeoutMs: number;
  private readonly endedPlanMemory: number;

  private readonly logger: RuntimeLogger;

  constructor(logger: RuntimeLogger, options: ToolLifecycleCacheOptions = {}) {
    this.logger = createRedactingLogger(logger);
    this.graceMs = options.graceMs ?? 5_000;
    this.deactivateTimeoutMs = options.deactivateTimeoutMs ?? 10_000;
    this.activateTimeoutMs = options.activateTimeoutMs ?? 60_000;
    this.endedPlanMemory = options.endedPlanMemory ?? 10_000;
  }

  /** True while the plan has started work and not ended. */
  hasPlan(planId: string): boolean {
    return this.plans.has(planId);
  }

  /** True once `release(planId)` was called (within the remembered window). */
  hasEnded(planId: string): boolean {
    return this.ended.has(planId);
  }

  /** True when the tool finished activating in the plan. */
  isActive(planId: string, toolName: string): boolean {
    return this.plans.get(planId)?.activations.get(toolName)?.state === 'active';
  }

  /** Names of the tools active in the plan, in activation order. */
  activeTools(planId: string): string[] {
    const plan = this.plans.get(planId);
    if (plan === undefined) return [];
    return [...plan.activations].filter(([, entry]) => entry.state === 'active').map(([name]) => name);
  }

  /**
   * Starts holding state for a plan before its first execution, and takes
   * ownership of `ownedTokens`: they are disposed when the plan is released.
   * @throws ToolPlanEndedError when the plan has ended.
   */
  open(ctx: PlanContext, ownedTokens: readonly CancellationToken[] = []): void {
    this.planOf(ctx, undefined).ownedTokens.push(...ownedTokens);
  }

  /** Number of plans currently holding state. */
  get planCount(): number {
    return this.plans.size;
  }

  /**
   * Makes sure `tool`, known to the runtime as `name`, is active in the plan
   * of `ctx`. Returns `undefined`
   * when it already is (the common case, no promise allocated), otherwise a
   * promise of the (shared) activation.
   * @throws ToolPlanEndedError when the plan has ended.
   * @throws ToolActivationError (through the promise) when `activate` fails.
   */
  ensureActive(name: string, tool: ToolInstance, ctx: PlanContext): Promise<void> | undefined {
    const plan = this.planOf(ctx, name);
    const entry = plan.activations.get(name);
    if (entry !== undefined) return entry.state === 'active' ? undefined : entry.promise;
    const activate = tool.activate;
    if (activate === undefined) {
      plan.activations.set(name, { tool, state: 'active', promise: undefined, view: undefined });
      return undefined;
    }
    const created: ActivationEntry = { tool, state: 'activating', promise: undefined, view: undefined };
    plan.activations.set(name, created);
    plan.pending++;
    created.promise = this.activate(plan, created, name, activate).finally(() => this.settle(plan));
    return created.promise;
  }

  /**
   * For a runtime that does not activate on first use: the tool must be
   * active in the plan already.
   * @throws ToolNotActivatedError otherwise.
   */
  requireActive(name: string, ctx: PlanContext): undefined {
    if (!this.isActive(ctx.planId, name)) throw new ToolNotActivatedError({ toolName: name, planId: ctx.planId });
    return undefined;
  }

  /**
   * Counts an execution as in flight in the plan of `ctx`, so `release`
   * waits for it. Call {@link endExecution} exactly once afterwards.
   * @throws ToolPlanEndedError when the plan has ended.
   */
  beginExecution(ctx: PlanContext, toolName: string): void {
    this.planOf(ctx, toolName).pending++;
  }

  /** Marks one execution begun with {@link beginExecution} as settled. */
  endExecution(planId: string): void {
    const plan = this.plans.get(planId) ?? this.releasing.get(planId);
    if (plan !== undefined) this.settle(plan);
  }

  /** Plans being released: still counted so late settlements reach them. */
  private readonly releasing = new Map<string, PlanRecord>();

  /**
   * Ends a plan: refuses further work in it, waits for its in-flight work
   * (at most `graceMs`), then deactivates every tool activated in it, each
   * exactly once. Idempotent and never throws; failures are logged and
   * reported.
   */
  async release(planId: string, options: { readonly graceMs?: number } = {}): Promise<PlanEndReport> {
    const inProgress = this.releases.get(planId);
    if (inProgress !== undefined) {
      // A second call while the first is still deactivating: answer once the
      // tools are released, without doing anything twice.
      await inProgress;
      return { planId, deactivated: [], failures: [], abandonedExecutions: 0, alreadyEnded: true };
    }
    const release = this.releaseOnce(planId, options);
    this.releases.set(planId, release);
    try {
      return await release;
    } finally {
      this.releases.delete(planId);
    }
  }

  private readonly releases = new Map<string, Promise<PlanEndReport>>();

  private async releaseOnce(planId: string, options: { readonly graceMs?: number }): Promise<PlanEndReport> {
    const plan = this.plans.get(planId);
    const alreadyEnded = this.ended.has(planId);
    this.markEnded(planId);
    if (plan === undefined) {
      return { planId, deactivated: [], failures: [], abandonedExecutions: 0, alreadyEnded };
    }
    try {
      return await this.releasePlan(plan, options);
    } finally {
      for (const token of plan.ownedTokens.splice(0)) token.dispose();
    }
  }

  private async releasePlan(plan: PlanRecord, options: { readonly graceMs?: number }): Promise<PlanEndReport> {
    const planId = plan.planId;
    this.plans.delete(planId);
    this.releasing.set(planId, plan);
    try {
      const abandonedExecutions = await this.waitForPending(plan, options.graceMs ?? this.graceMs);
      const deactivated: string[] = [];
      const failures: ToolDeactivationError[] = [];
      const outcomes = await Promise.all(
        [...plan.activations].map(async ([name, entry]) => {
          if (entry.state === 'activating') {
            // Still activating after the grace period: deactivate it if and
            // when the activation succeeds, so it is matched all the same.
            void entry.promise?.then(
              () => this.deactivate(plan, name, entry).then((failure) => failure && this.logFailure(failure)),
              () => undefined,
            );
            return { name, failure: undefined, skipped: true };
          }
          return { name, failure: await this.deactivate(plan, name, entry), skipped: false };
        }),
      );
      for (const outcome of outcomes) {
        if (outcome.skipped) continue;
        if (outcome.failure === undefined) deactivated.push(outcome.name);
        else failures.push(outcome.failure);
      }
      return { planId, deactivated, failures, abandonedExecutions, alreadyEnded: false };
    } finally {
      plan.activations.clear();
      if (plan.pending === 0) this.releasing.delete(planId);
    }
  }

  private planOf(ctx: PlanContext, toolName: string | undefined): PlanRecord {
    const planId = ctx.planId;
    const plan = this.plans.get(planId);
    if (plan !== undefined) return plan;
    if (this.ended.has(planId) || this.releasing.has(planId)) throw new ToolPlanEndedError({ planId, ...(toolName === undefined ? {} : { toolName }) });
    const created: PlanRecord = { planId, context: ctx, activations: new Map(), pending: 0, drained: undefined, ownedTokens: [] };
    this.plans.set(planId, created);
    return created;
  }

  private async activate(plan: PlanRecord, entry: ActivationEntry, name: string, activate: (ctx: ToolExecutionContext) => Promise<void>): Promise<void> {
    const view = plan.context.forExecution({ toolName: name });
    entry.view = view;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const running = Promise.resolve().then(() => activate.call(entry.tool, view));
    try {
      await Promise.race([
        running,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            timedOut = true;
            reject(new Error(`activate did not finish within ${this.activateTimeoutMs} ms`));
          }, this.activateTimeoutMs);
        }),
      ]);
      entry.state = 'active';
      entry.promise = undefined;
    } catch (error) {
      plan.activations.delete(name);
      // Every successful activation is matched by a deactivation: one that
      // succeeds after its deadline is undone at once.
      if (timedOut)
        void running.then(
          () => this.deactivate(plan, name, entry).then((failure) => failure && this.logFailure(failure)),
          () => undefined,
        );
      throw new ToolActivationError({ toolName: name, planId: plan.planId, cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  private settle(plan: PlanRecord): void {
    plan.pending--;
    if (plan.pending === 0) {
      const drained = plan.drained;
      plan.drained = undefined;
      drained?.();
      if (plan.activations.size === 0 && this.releasing.get(plan.planId) === plan) this.releasing.delete(plan.planId);
    }
  }

  private waitForPending(plan: PlanRecord, graceMs: number): Promise<number> {
    if (plan.pending === 0) return NOTHING_PENDING.then(() => 0);
    return new Promise<number>((resolve) => {
      const timer = setTimeout(() => {
        plan.drained = undefined;
        resolve(plan.pending);
      }, graceMs);
      plan.drained = () => {
        clearTimeout(timer);
        resolve(0);
      };
    });
  }

  private async deactivate(plan: PlanRecord, name: string, entry: ActivationEntry): Promise<ToolDeactivationError | undefined> {
    const tool = entry.tool;
    if (tool.deactivate === undefined) return undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        tool.deactivate(entry.view ?? plan.context.forExecution({ toolName: name })),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`deactivate did not finish within ${this.deactivateTimeoutMs} ms`)), this.deactivateTimeoutMs);
        }),
      ]);
      return undefined;
    } catch (error) {
      const failure = new ToolDeactivationError({ toolName: name, planId: plan.planId, cause: error });
      this.logFailure(failure);
      return failure;
    } finally {
      clearTimeout(timer);
    }
  }

  private logFailure(failure: ToolDeactivationError): void {
    this.logger.error(failure.message, { code: failure.code, toolName: failure.toolName, planId: failure.planId });
  }

  private markEnded(planId: string): void {
    if (this.ended.has(planId)) return;
    this.ended.add(planId);
    if (this.ended.size > this.endedPlanMemory) {
      const oldest = this.ended.values().next().value;
      if (oldest !== undefined) this.ended.delete(oldest);
    }
  }
}
