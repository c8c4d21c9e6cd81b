import type { InjectionToken } from 'tsyringe';

/**
 * A remembered approval, as an `ApprovalStore` keeps it: a `tool` approval
 * (any arguments) or a `call` approval (these arguments), bound to the plan,
 * the tool's name and its definition fingerprint, and signed by the runtime
 * with the service's key. A record whose fields were edited — another tool,
 * other arguments, another plan — fails its signature and is ignored.
 */
export interface ApprovalRecord {
  /** Format of the record (1). */
  readonly version: 1;
  readonly planId: string;
  readonly toolName: string;
  /** The fingerprint of the tool's definition when it was approved. */
  readonly fingerprint: string;
  readonly scope: 'tool' | 'call';
  /** For `call`: SHA-256 (base64url) of the canonical JSON of the arguments. */
  readonly argumentsHash?: string;
  /** Who approved. */
  readonly decidedBy: string;
  /** When, ISO-8601. */
  readonly decidedAt: string;
  /** HMAC-SHA256 (base64url) of the canonical JSON of the other fields, with the service's approval key. */
  readonly signature: string;
}

/**
 * Where the runtime keeps the `tool` and `call` approvals of plans, so that a
 * plan restarted with the same id (a new process, a new runtime) does not ask
 * again for what was approved. The runtime reads a plan's records once, when
 * the plan first needs approval, and checks each record's signature; the
 * store only keeps what it is given.
 *
 * A store that outlives the runtime needs the runtime to have the same key
 * each time (`approvalKey`): records signed with another key are ignored.
 */
export interface ApprovalStore {
  /** Every record kept for the plan, in the order they were saved (anything the store holds: the runtime checks them). */
  load(planId: string): Promise<readonly unknown[]>;
  /** Keeps a record. */
  save(record: ApprovalRecord): Promise<void>;
  /** Forgets the plan's records (when a plan is done for good). */
  forget(planId: string): Promise<void>;
}

/** Options of {@link MemoryApprovalStore}. */
export interface MemoryApprovalStoreOptions {
  /** How many plans' records it keeps; beyond, the plan saved to least recently is forgotten. Default 10,000. */
  readonly maxPlans?: number;
}

/**
 * An {@link ApprovalStore} in memory: it lasts as long as the object, so it
 * carries approvals across runtimes of one process (share it, with the same
 * `approvalKey`), not across processes. Bounded by `maxPlans`.
 */
export class MemoryApprovalStore implements ApprovalStore {
  private readonly plans = new Map<string, unknown[]>();
  private readonly maxPlans: number;

  constructor(options: MemoryApprovalStoreOptions = {}) {
    const maxPlans = options.maxPlans ?? 10_000;
    if (!Number.isSafeInteger(maxPlans) || maxPlans < 1)
      throw new TypeError(`MemoryApprovalStore: maxPlans must be a whole number ≥ 1, got ${String(maxPlans)}.`);
    this.maxPlans = maxPlans;
  }

  async load(planId: string): Promise<readonly unknown[]> {
    return [...(this.plans.get(planId) ?? [])];
  }

  async save(record: ApprovalRecord): Promise<void> {
    const records = this.plans.get(record.planId) ?? [];
    // Most recently saved last, so the oldest plan is the first to go.
    this.plans.delete(record.planId);
    this.plans.set(record.planId, [...records, record]);
    if (this.plans.size > this.maxPlans) {
      const oldest = this.plans.keys().next().value;
      if (oldest !== undefined) this.plans.delete(oldest);
    }
  }

  async forget(planId: string): Promise<void> {
    this.plans.delete(planId);
  }
}

/** The service's {@link ApprovalStore}, when it registers one. */
export const APPROVAL_STORE: InjectionToken<ApprovalStore> = Symbol.for('ca.tool-lifecycle.ApprovalStore');
/** The key approval records are signed with (at least 32 bytes: a string or bytes), when the service registers one. */
export const APPROVAL_KEY: InjectionToken<string | Uint8Array> = Symbol.for('ca.tool-lifecycle.ApprovalKey');
