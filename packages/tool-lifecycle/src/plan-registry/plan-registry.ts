import type { ApprovalScope, PendingApprovalSummary } from '../approval';

export type { PendingApprovalSummary } from '../approval';

/**
 * A plan as the runtime announces it to a {@link PlanRegistry}: who it is,
 * what it may do, and how far it has got.
 */
export interface PlanRegistration {
  /** The plan's id (unique across the registry: every host, every process). */
  readonly planId: string;
  /** The plan's policy, field by field (`readOnly`, `requireCheckpoint`, …): what an operator needs to judge it. */
  readonly policy: Readonly<Record<string, string | number | boolean>>;
  /** When the plan was created (ISO-8601). */
  readonly startedAt: string;
  /** Tools activated in the plan so far, in activation order (at most {@link MAX_LISTED_TOOLS}). */
  readonly tools: readonly string[];
  /** Executions settled so far (one per trace). */
  readonly stepsDone: number;
  /** What the service adds to tell its plans apart (`{ file: 'tidy.yaml' }`, a job id, a tenant). */
  readonly labels: Readonly<Record<string, string>>;
  /**
   * The plan's approval requests that wait for an answer the registry may
   * carry (a {@link PlanApprovalMessage}), oldest first, at most
   * {@link MAX_LISTED_APPROVALS}. Listed only by a runtime that takes answers
   * from its registry (`registryApprovals`); absent or empty when none waits.
   */
  readonly pendingApprovals?: readonly PendingApprovalSummary[];
}

/** What a heartbeat refreshes. */
export interface PlanProgress {
  readonly tools: readonly string[];
  readonly stepsDone: number;
  /** The approval requests waiting now (see {@link PlanRegistration.pendingApprovals}); an empty list clears them. */
  readonly pendingApprovals?: readonly PendingApprovalSummary[];
}

/** A running plan as the registry lists it: its registration plus where it runs. */
export interface RegisteredPlan extends PlanRegistration {
  /** The host the plan runs on (the registry's `host` setting, by default the machine's name). */
  readonly host: string;
  /** The id of the process that runs it. */
  readonly pid: number;
  /** The last time its process said it was alive (ISO-8601). */
  readonly heartbeatAt: string;
}

/**
 * Asks a plan to cancel itself. The runtime cancels the plan's token with
 * `reason`, so every tool running in it sees its `AbortSignal`.
 */
export interface PlanCancelMessage {
  readonly kind: 'cancel';
  readonly planId: string;
  /** Becomes the token's reason (`cancelled by 'agents plan cancel x'`); at most 1,000 characters. */
  readonly reason: string;
  /** When the request was made (ISO-8601). */
  readonly sentAt: string;
  /** Who asked, for the plan's logs (`ops-host pid 4242`); at most 200 characters. */
  readonly sentBy?: string;
}

/**
 * Answers an approval request of a running plan (`agents plan approve|deny`,
 * a control plane's dialog). The runtime applies it to the request with that
 * id when one is waiting and the runtime takes answers from its registry
 * (`registryApprovals`); otherwise it is ignored with a warning. The first
 * answer wins, whether it came from the registry or the runtime's
 * `ApprovalHandler`; the handler's question is then withdrawn.
 */
export interface PlanApprovalMessage {
  readonly kind: 'approval';
  readonly planId: string;
  /** The request answered: its id in the plan, as `pendingApprovals` lists it; at most 64 characters. */
  readonly requestId: string;
  readonly decision: 'approve' | 'deny';
  /** For `approve`: how far the approval reaches (`once` when absent, `tool`, `call`; see `ApprovalScope`). */
  readonly scope?: ApprovalScope;
  /** For `deny`: why, for the trace and the error; at most 1,000 characters. */
  readonly reason?: string;
  /** When the answer was given (ISO-8601). */
  readonly sentAt: string;
  /** Who answered, for the trace (`decidedBy`) and the plan's logs; at most 200 characters. */
  readonly sentBy?: string;
}

/**
 * Everything a registry carries to a running plan. Each message is idempotent
 * and has a key ({@link planControlMessageKey}: `cancel`, `approval:<requestId>`):
 * a registry keeps the last message of each key for a plan that cannot be
 * reached, and delivers it when the plan is back; delivering one twice does
 * no harm. Registries transport any kind unchanged; a runtime ignores, with a
 * warning, a kind it does not know.
 */
export type PlanControlMessage = PlanCancelMessage | PlanApprovalMessage;

/** Receives the control messages of one registered plan. Must not throw; is never awaited. */
export type PlanMessageHandler = (message: PlanControlMessage) => void;

/** How {@link PlanRegistry.send} reached the plan. */
export interface PlanSendResult {
  readonly planId: string;
  /**
   * `delivered`: handed to the process that runs the plan. `queued`: the plan
   * is registered but its process is not connected to the registry right now;
   * it gets the message when it reconnects (or never, if it has died — its
   * plan then leaves the list when its registration expires).
   */
  readonly delivery: 'delivered' | 'queued';
}

/** One plan's place in a registry, from `register` until `end`. */
export interface PlanRegistryEntry {
  /**
   * Says the plan is alive and how far it has got. Never rejects for a
   * registry that cannot be reached (that is logged; the plan is registered
   * again once it can be).
   */
  heartbeat(progress: PlanProgress): Promise<void>;
  /** Withdraws the plan and its queued messages. Idempotent; never rejects. */
  end(): Promise<void>;
}

/**
 * Where running plans are announced, listed and controlled: the seam between
 * the runtime and a shared store. The runtime registers every plan it
 * creates (when a registry is configured), refreshes each on a timer — per
 * plan, never per execution — and ends it with the plan. Operators and
 * control planes list plans and send them messages (cancellation) from any
 * process that reaches the same registry.
 *
 * Implementations: the CLI's state folder (one machine), `@ca/plan-registry-redis`
 * (every host that reaches one Redis), `InMemoryPlanRegistry` of
 * `@ca/tool-lifecycle/testing` (one process).
 */
export interface PlanRegistry {
  /** What the registry is, for messages and logs (`redis://10.0.0.5:6379/0`), never with credentials. */
  readonly description: string;
  /** How often the runtime refreshes each registered plan, in ms. */
  readonly heartbeatIntervalMs: number;
  /**
   * Announces a running plan and routes its control messages to `onMessage`,
   * including a message that was queued for it before (a cancel sent while
   * its process was not connected).
   * @throws PlanRegistryError `PLAN_REGISTRY_DUPLICATE_PLAN` when another live
   *   plan holds the id; `PLAN_REGISTRY_INVALID_ARGUMENT`; `PLAN_REGISTRY_CLOSED`.
   *   A registry that cannot be reached right now is not an error: the plan is
   *   registered as soon as it can be.
   */
  register(registration: PlanRegistration, onMessage: PlanMessageHandler): Promise<PlanRegistryEntry>;
  /**
   * The running plans of every process that uses this registry, oldest first.
   * @throws PlanRegistryError `PLAN_REGISTRY_UNAVAILABLE`, `PLAN_REGISTRY_CLOSED`.
   */
  list(): Promise<readonly RegisteredPlan[]>;
  /**
   * Sends a control message to a running plan, wherever it runs.
   * @throws PlanRegistryError `PLAN_REGISTRY_PLAN_NOT_FOUND` when no running
   *   plan has the id; `PLAN_REGISTRY_INVALID_ARGUMENT`; `PLAN_REGISTRY_UNAVAILABLE`.
   */
  send(message: PlanControlMessage): Promise<PlanSendResult>;
  /** Withdraws this process's plans and releases connections. Idempotent. */
  close(): Promise<void>;
}

/** Options of one plan's registration, given to `runtime.createPlan` / `runPlan` as `registry`. */
export interface PlanRegistryOptions {
  /** Shown with the plan by `list()`: at most 20 labels, keys of 1–64 characters, values of at most 1,000. */
  readonly labels?: Readonly<Record<string, string>>;
}

/** How many tool names a registration lists. */
export const MAX_LISTED_TOOLS = 100;

/** How many waiting approval requests a registration lists. */
export const MAX_LISTED_APPROVALS = 20;
