import type { PlanContext } from '@ca/tool-context';
import type { ApprovalDecision } from './approval-handler';

/** An approval given for the rest of a plan. */
export interface RememberedApproval {
  readonly scope: 'tool' | 'call';
  readonly decidedBy: string;
}

/** An approval request waiting for an answer, as a plan's registration lists it. */
export interface PendingApprovalSummary {
  /** The request's id in its plan (`1`, `2`, …): what an answer names. */
  readonly requestId: string;
  /** The tool whose call waits. */
  readonly toolName: string;
  /** When the request was asked (ISO-8601). */
  readonly askedAt: string;
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

/**
 * What the approval step keeps about one plan: the approvals remembered for
 * the rest of it, whether the store's records of it were read, and the
 * requests waiting for an answer. Made when a plan first needs approval and
 * dropped with the plan's context.
 */
export class PlanApprovals {
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
}

/** The approval state of every plan, by context: a plan that never needs approval costs nothing. */
export class PlanApprovalRecords {
  private readonly plans = new WeakMap<PlanContext, PlanApprovals>();

  /** The plan's approval state, made on first need. */
  of(ctx: PlanContext): PlanApprovals {
    let plan = this.plans.get(ctx);
    if (plan === undefined) {
      plan = new PlanApprovals();
      this.plans.set(ctx, plan);
    }
    return plan;
  }

  /** The plan's approval state when it has some. */
  existing(ctx: PlanContext): PlanApprovals | undefined {
    return this.plans.get(ctx);
  }
}
