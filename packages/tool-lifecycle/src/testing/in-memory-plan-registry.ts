import {
  type PlanControlMessage,
  type PlanMessageHandler,
  type PlanProgress,
  type PlanRegistration,
  type PlanRegistry,
  type PlanRegistryEntry,
  type PlanSendResult,
  type RegisteredPlan,
  PlanRegistryError,
  checkPlanControlMessage,
  checkPlanProgress,
  checkPlanRegistration,
} from '../plan-registry';

interface StoredPlan {
  record: RegisteredPlan;
  readonly onMessage: PlanMessageHandler;
  heartbeats: number;
}

/**
 * A {@link PlanRegistry} held in memory: every runtime of one process that is
 * given the same instance sees the same plans. A real implementation of the
 * contract (duplicate ids refused, messages delivered asynchronously, ended
 * plans gone), for tests of code that uses a registry.
 */
export class InMemoryPlanRegistry implements PlanRegistry {
  readonly description = 'memory';
  readonly heartbeatIntervalMs: number;
  private readonly host: string;
  private readonly plans = new Map<string, StoredPlan>();
  private closed = false;

  constructor(options: { readonly heartbeatIntervalMs?: number; readonly host?: string } = {}) {
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 1_000;
    this.host = options.host ?? 'memory';
  }

  async register(registration: PlanRegistration, onMessage: PlanMessageHandler): Promise<PlanRegistryEntry> {
    this.checkOpen();
    const checked = checkPlanRegistration(registration, this.description);
    const planId = checked.planId;
    if (this.plans.has(planId)) throw new PlanRegistryError({ code: 'PLAN_REGISTRY_DUPLICATE_PLAN', registry: this.description, planId });
    const stored: StoredPlan = { record: { ...checked, host: this.host, pid: process.pid, heartbeatAt: new Date().toISOString() }, onMessage, heartbeats: 0 };
    this.plans.set(planId, stored);
    return {
      heartbeat: async (progress: PlanProgress) => {
        if (this.plans.get(planId) !== stored) return;
        const checked = checkPlanProgress(progress, this.description, planId);
        stored.heartbeats++;
        const { pendingApprovals: _previous, ...record } = stored.record;
        stored.record = { ...record, ...checked, heartbeatAt: new Date().toISOString() };
      },
      end: async () => {
        if (this.plans.get(planId) === stored) this.plans.delete(planId);
      },
    };
  }

  async list(): Promise<readonly RegisteredPlan[]> {
    this.checkOpen();
    return [...this.plans.values()].map((stored) => stored.record).sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  }

  async send(message: PlanControlMessage): Promise<PlanSendResult> {
    this.checkOpen();
    const checked = checkPlanControlMessage(message, this.description);
    const stored = this.plans.get(checked.planId);
    if (stored === undefined) throw new PlanRegistryError({ code: 'PLAN_REGISTRY_PLAN_NOT_FOUND', registry: this.description, planId: checked.planId });
    // Delivered later, as over a network: the sender never runs the plan's code.
    setImmediate(() => stored.onMessage(checked));
    return { planId: checked.planId, delivery: 'delivered' };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.plans.clear();
  }

  /** How many heartbeats the plan has sent (0 for an unknown plan). */
  heartbeatsOf(planId: string): number {
    return this.plans.get(planId)?.heartbeats ?? 0;
  }

  private checkOpen(): void {
    if (this.closed) throw new PlanRegistryError({ code: 'PLAN_REGISTRY_CLOSED', registry: this.description });
  }
}
