import type { PlanContext } from '@ca/tool-context';
import type { ApprovalDecision } from '../approval';
import type { CallLimiter } from './call-limiter';
import type { PendingApprovalSummary } from '../plan-registry';
import type { ToolResult } from '../tool';

/** An approval given for the rest of a plan. */
export interface RememberedApproval {
  readonly scope: 'tool' | 'call';
  readonly decidedBy: string;
}

/** A result kept for an idempotency key, returned instead of calling again. */
export interface RecordedResult {
  readonly executionId: string;
  readonly result: ToolResult;
  readonly sizeBytes: number;
}

/** A request waiting for an answer, linked into its plan's list. */
export interface PendingRequest {
  previousPending: PendingRequest | undefined;
  nextPending: PendingRequest | undefined;
  /** The request's id in its plan. */
  readonly requestId: string;
  /** The request as a plan registry lists it. */
  summary(): PendingApprovalSummary;
  /** Answers the request from elsewhere than its handler (the plan registry); the handler's question is withdrawn. */
  answerElsewhere(decision: ApprovalDecision, why: string): void;
  /** Withdraws the request: the plan ended. */
  end(): void;
}

/** How many results a plan keeps for explicit steps; beyond, the oldest is forgotten. */
export const RECORDED_RESULTS_PER_PLAN = 10_000;

/**
 * What the runtime keeps about the calls of one plan beyond its context:
 * remembered approvals, pending approval requests, idempotency ordinals and
 * recorded results, and the plan's call limiters. Made when a plan first
 * needs one of them and dropped with the plan's context.
 */
export class PlanCalls {
  /** `tool` approvals by `tool\0fingerprint`, `call` approvals by `tool\0fingerprint\0argumentsHash`. */
  readonly approvals = new Map<string, RememberedApproval>();
  /** `tool\0fingerprint` of the tools that have `call` approvals (so that only they hash arguments). */
  readonly callApprovedTools = new Set<string>();
  /** The reading of the store's records of the plan, once started. */
  approvalsLoaded: Promise<void> | undefined;
  /** True once the store's records of the plan were read. */
  storeRead = false;
  /** Requests asked in the plan, for their ids. */
  requests = 0;
  /** The requests waiting for an answer, a list through their own links (a Set's add and delete cost more on every request). */
  firstPending: PendingRequest | undefined;
  ended = false;

  /** How many times each call (tool and canonical arguments) received its idempotency key. */
  readonly ordinals = new Map<string, number>();
  /** Results of calls made with an explicit step, by idempotency key. */
  readonly results = new Map<string, RecordedResult>();
  /** Calls with an explicit step in flight, by idempotency key. */
  readonly inFlight = new Map<string, Promise<void>>();

  /** The plan's call limiters, by settings entry and tool. */
  readonly limiters = new Map<string, CallLimiter>();

  /** The plan ended: pending requests are withdrawn and no new one is asked. */
  end(): void {
    this.ended = true;
    const pending: PendingRequest[] = [];
    for (let request = this.firstPending; request !== undefined; request = request.nextPending) pending.push(request);
    for (const request of pending) request.end();
  }

  /** The waiting request with this id, if any. */
  pendingRequest(requestId: string): PendingRequest | undefined {
    for (let request = this.firstPending; request !== undefined; request = request.nextPending) {
      if (request.requestId === requestId) return request;
    }
    return undefined;
  }

  /** The waiting requests, oldest first (the list holds the newest first). */
  pendingSummaries(): PendingApprovalSummary[] {
    const summaries: PendingApprovalSummary[] = [];
    for (let request = this.firstPending; request !== undefined; request = request.nextPending) summaries.push(request.summary());
    return summaries.reverse();
  }

  addPending(request: PendingRequest): void {
    request.nextPending = this.firstPending;
    if (this.firstPending !== undefined) this.firstPending.previousPending = request;
    this.firstPending = request;
  }

  removePending(request: PendingRequest): void {
    if (request.previousPending !== undefined) request.previousPending.nextPending = request.nextPending;
    else if (this.firstPending === request) this.firstPending = request.nextPending;
    else return;
    if (request.nextPending !== undefined) request.nextPending.previousPending = request.previousPending;
    request.previousPending = request.nextPending = undefined;
  }

  record(key: string, recorded: RecordedResult): void {
    this.results.set(key, recorded);
    if (this.results.size > RECORDED_RESULTS_PER_PLAN) {
      const oldest = this.results.keys().next().value;
      if (oldest !== undefined) this.results.delete(oldest);
    }
  }
}

/**
 * What the runtime keeps per plan beyond its context, by context: made on a
 * plan's first need and dropped with its context (a `WeakMap`), so a plan that
 * never needs it costs nothing.
 */
export class PlanCallRecords {
  private readonly plans = new WeakMap<PlanContext, PlanCalls>();

  /** The plan's records, made on first need. */
  planCalls(ctx: PlanContext): PlanCalls {
    let plan = this.plans.get(ctx);
    if (plan === undefined) {
      plan = new PlanCalls();
      this.plans.set(ctx, plan);
    }
    return plan;
  }

  /** The plan's records when it has some. */
  existing(ctx: PlanContext): PlanCalls | undefined {
    return this.plans.get(ctx);
  }
}
