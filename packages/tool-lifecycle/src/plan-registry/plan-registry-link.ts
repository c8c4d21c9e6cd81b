import { describeValue, messageOf } from '@ca/domain';
import type { PlanContext } from '@ca/tool-context';
import { ToolInvalidArgumentError } from '../errors';
import type { RuntimeLogger } from '../observability';
import {
  MAX_LISTED_APPROVALS,
  MAX_LISTED_TOOLS,
  type PendingApprovalSummary,
  type PlanApprovalMessage,
  type PlanCancelMessage,
  type PlanControlMessage,
  type PlanRegistry,
  type PlanRegistryEntry,
  type PlanRegistryOptions,
} from './plan-registry';

/** One plan of this runtime in the registry. */
interface LinkedPlan {
  readonly ctx: PlanContext;
  /** Settles once the registry answered; never rejects (the error is kept in `error`). */
  registration: Promise<void>;
  entry: PlanRegistryEntry | undefined;
  error: unknown;
  /** A heartbeat is in flight: the next tick skips the plan instead of piling up calls. */
  beating: boolean;
  /** Something the registration shows changed while a heartbeat was in flight: send another once it settles. */
  beatAgain: boolean;
  ended: boolean;
  /** Someone waits for the registration (runPlan): its failure is theirs to report, not the log's. */
  awaited: boolean;
}

/** What the link asks of the runtime about its plans. */
export interface PlanRegistryHooks {
  /** The tools active in the plan, in activation order. */
  activeTools(planId: string): readonly string[];
  /** The plan's approval requests that wait for an answer the registry may carry, oldest first. */
  pendingApprovals(ctx: PlanContext): readonly PendingApprovalSummary[];
  /** Applies an answer to an approval request that came through the registry. Must not throw. */
  answerApproval(ctx: PlanContext, message: PlanApprovalMessage): void;
}

/** Longest an ended plan waits for the registry to withdraw it. */
const END_WAIT_MS = 5_000;
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Checks the `registry` option of a plan: `false` (keep the plan out of the
 * registry), `undefined`, or `{ labels }`.
 * @throws ToolInvalidArgumentError naming the option.
 */
export function checkRegistryOption(value: unknown, planId: string | undefined): PlanRegistryOptions | false | undefined {
  if (value === undefined || value === false) return value;
  const fail = (argument: string, expected: string, received: unknown): never => {
    throw new ToolInvalidArgumentError({ argument, expected, received, ...(planId === undefined ? {} : { planId }) });
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('registry', 'false or { labels: { name: "value" } }', value);
  const { labels, ...rest } = value as { labels?: unknown };
  const unknown = Object.keys(rest);
  if (unknown.length > 0) return fail(`registry.${unknown[0]}`, 'left out (a plan registration takes only labels)', rest[unknown[0] as keyof typeof rest]);
  if (labels === undefined) return {};
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) return fail('registry.labels', 'an object of strings', labels);
  const entries = Object.entries(labels);
  if (entries.length > 20) return fail('registry.labels', 'at most 20 labels', labels);
  for (const [key, label] of entries) {
    if (key.length === 0 || key.length > 64) fail('registry.labels', 'label names of 1–64 characters', key);
    if (typeof label !== 'string' || label.length > 1_000) fail(`registry.labels.${key}`, 'a string of at most 1,000 characters', label);
  }
  return { labels: Object.freeze({ ...(labels as Record<string, string>) }) };
}

/**
 * The policy's fields as a registry stores them: the plain values, and the
 * approval policy as one line of what it asks before (`writes, openWorld,
 * mcp.github.*`, or `always`).
 */
function policyOf(ctx: PlanContext): Record<string, string | number | boolean> {
  const summary: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(ctx.policy)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') summary[key] = value;
  }
  const approval = ctx.policy.approval;
  if (approval !== undefined) {
    const asks = approval.always === true ? 'always' : [...(approval.capabilities ?? []), ...(approval.tools ?? [])].join(', ');
    summary['approval'] = asks.length > 200 ? `${asks.slice(0, 199)}…` : asks;
  }
  return summary;
}

/**
 * Keeps a runtime's plans in a {@link PlanRegistry}: registers each plan the
 * runtime creates, refreshes them all on one unref'd timer (per plan, never
 * per execution: `execute` does not touch the registry), turns a cancel
 * message into the plan's token being cancelled, and withdraws each plan
 * when it ends.
 */
export class PlanRegistryLink {
  private readonly plans = new Map<string, LinkedPlan>();
  private readonly intervalMs: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  /** Set while heartbeats fail, so a long outage is logged once, not on every tick. */
  private heartbeatsFailing = false;

  constructor(
    readonly registry: PlanRegistry,
    private readonly logger: RuntimeLogger,
    private readonly hooks: PlanRegistryHooks,
  ) {
    const candidate = registry as Partial<PlanRegistry> | null;
    if (
      typeof candidate !== 'object' ||
      candidate === null ||
      typeof candidate.register !== 'function' ||
      typeof candidate.list !== 'function' ||
      typeof candidate.send !== 'function' ||
      typeof candidate.close !== 'function'
    ) {
      throw new ToolInvalidArgumentError({ argument: 'planRegistry', expected: 'a PlanRegistry (register, list, send, close)', received: registry });
    }
    const interval = candidate.heartbeatIntervalMs;
    if (typeof interval !== 'number' || !Number.isFinite(interval) || interval < 1 || interval > MAX_TIMER_MS) {
      throw new ToolInvalidArgumentError({ argument: 'planRegistry.heartbeatIntervalMs', expected: 'a positive number of milliseconds', received: interval });
    }
    this.intervalMs = interval;
  }

  /** Registers a plan the runtime has just created; the registration runs in the background. */
  attach(ctx: PlanContext, options: PlanRegistryOptions | undefined): void {
    const planId = ctx.planId;
    const linked: LinkedPlan = {
      ctx,
      registration: Promise.resolve(),
      entry: undefined,
      error: undefined,
      beating: false,
      beatAgain: false,
      ended: false,
      awaited: false,
    };
    let registering: Promise<PlanRegistryEntry>;
    try {
      registering = Promise.resolve(
        this.registry.register(
          {
            planId,
            policy: policyOf(ctx),
            startedAt: new Date().toISOString(),
            tools: [],
            stepsDone: 0,
            labels: options?.labels ?? {},
          },
          (message) => this.deliver(linked, message),
        ),
      );
    } catch (error) {
      registering = Promise.reject(error);
    }
    linked.registration = registering.then(
      (entry) => {
        if (linked.ended) return this.withdraw(linked, entry);
        linked.entry = entry;
        return undefined;
      },
      (error: unknown) => {
        linked.error = error;
        if (linked.awaited) return;
        this.logger.error(
          `Plan '${planId}' could not be registered in plan registry ${this.registry.description}; it runs, but cannot be listed or cancelled from elsewhere: ${messageOf(error)}`,
          {
            planId,
            code: (error as { code?: unknown })?.code,
          },
        );
      },
    );
    this.plans.set(planId, linked);
    this.startTimer();
  }

  /**
   * Resolves once the plan is registered; rejects with the registry's error
   * when it refused the plan (a duplicate id). Resolves at once for a plan
   * kept out of the registry.
   */
  async whenRegistered(planId: string): Promise<void> {
    const linked = this.plans.get(planId);
    if (linked === undefined) return;
    linked.awaited = true;
    await linked.registration;
    if (linked.error !== undefined) throw linked.error;
  }

  /** Withdraws an ended plan (waiting for its registration first). Never throws. */
  async detach(planId: string): Promise<void> {
    const linked = this.plans.get(planId);
    if (linked === undefined) return;
    this.plans.delete(planId);
    if (this.plans.size === 0) this.stopTimer();
    linked.ended = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const cap = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.logger.warn(
          `Plan registry ${this.registry.description} did not withdraw plan '${planId}' within ${END_WAIT_MS} ms; its entry expires on its own.`,
          { planId },
        );
        resolve();
      }, END_WAIT_MS);
      timer.unref?.();
    });
    try {
      await Promise.race([linked.registration.then(() => (linked.entry === undefined ? undefined : this.withdraw(linked, linked.entry))), cap]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Number of plans in the registry through this link (for tests and leak checks). */
  get planCount(): number {
    return this.plans.size;
  }

  private async withdraw(linked: LinkedPlan, entry: PlanRegistryEntry): Promise<void> {
    linked.entry = undefined;
    try {
      await entry.end();
    } catch (error) {
      this.logger.warn(
        `Plan registry ${this.registry.description} could not withdraw plan '${linked.ctx.planId}'; its entry expires on its own: ${messageOf(error)}`,
        {
          planId: linked.ctx.planId,
        },
      );
    }
  }

  /**
   * Refreshes one plan's registration now, instead of at the next tick: its
   * waiting approval requests changed, and whoever answers them reads the list.
   */
  refresh(planId: string): void {
    const linked = this.plans.get(planId);
    if (linked === undefined) return;
    if (linked.beating) linked.beatAgain = true;
    else this.beatOne(linked);
  }

  private deliver(linked: LinkedPlan, message: PlanControlMessage): void {
    const planId = linked.ctx.planId;
    if (linked.ended) return;
    const kind = (message as { kind?: unknown } | null)?.kind;
    if (kind === 'approval') {
      try {
        this.hooks.answerApproval(linked.ctx, message as PlanApprovalMessage);
      } catch (error) {
        this.logger.error(`An answer to an approval request of plan '${planId}' could not be applied: ${messageOf(error)}`, { planId });
      }
      return;
    }
    if (kind === 'cancel') {
      const cancel = message as PlanCancelMessage;
      const from = cancel.sentBy === undefined ? '' : ` (from ${cancel.sentBy})`;
      this.logger.info(`Plan '${planId}' is cancelled through plan registry ${this.registry.description}${from}: ${cancel.reason}`, { planId });
      try {
        linked.ctx.cancellationToken.cancel(cancel.reason);
      } catch (error) {
        this.logger.error(`Cancelling plan '${planId}' failed: ${messageOf(error)}`, { planId });
      }
      return;
    }
    this.logger.warn(`Plan '${planId}' received a control message of kind ${describeValue(kind)}, which this runtime does not know; it was ignored.`, {
      planId,
    });
  }

  private startTimer(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.beat(), this.intervalMs);
    // Heartbeats must never keep a process alive that has nothing else to do.
    this.timer.unref?.();
  }

  private stopTimer(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private beat(): void {
    for (const linked of this.plans.values()) {
      if (!linked.beating) this.beatOne(linked);
    }
  }

  private beatOne(linked: LinkedPlan): void {
    const entry = linked.entry;
    if (entry === undefined || linked.ended) return;
    linked.beating = true;
    linked.beatAgain = false;
    let beating: Promise<void>;
    try {
      const tools = this.hooks.activeTools(linked.ctx.planId);
      const pending = this.hooks.pendingApprovals(linked.ctx);
      beating = Promise.resolve(
        entry.heartbeat({
          tools: tools.length > MAX_LISTED_TOOLS ? tools.slice(0, MAX_LISTED_TOOLS) : tools,
          stepsDone: linked.ctx.traces.length,
          pendingApprovals: pending.length > MAX_LISTED_APPROVALS ? pending.slice(0, MAX_LISTED_APPROVALS) : pending,
        }),
      );
    } catch (error) {
      beating = Promise.reject(error);
    }
    beating.then(
      () => {
        linked.beating = false;
        this.heartbeatsFailing = false;
        if (linked.beatAgain) this.beatOne(linked);
      },
      (error: unknown) => {
        linked.beating = false;
        if (this.heartbeatsFailing) return;
        this.heartbeatsFailing = true;
        this.logger.warn(`Plan registry ${this.registry.description} refused a heartbeat; plans may leave its list until it works again: ${messageOf(error)}`, {
          planId: linked.ctx.planId,
        });
      },
    );
  }
}
