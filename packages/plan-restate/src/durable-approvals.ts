import * as restate from '@restatedev/restate-sdk';
import type { ApprovalContext, ApprovalDecision, ApprovalHandler, ApprovalRequest } from '@ca/tool-lifecycle';
import { untilSettled } from './restate-call-journal';

/** An approval request a durable plan waits for, as its workflow's state lists it (no arguments: they may hold secrets). */
export interface DurableApprovalRequest {
  /** The name of the durable promise that answers it: what `approve`/`deny` name. */
  readonly requestId: string;
  readonly toolName: string;
  readonly step?: string;
  /** Why it is asked, in words. */
  readonly reason: string;
  /** For a call whose outcome is unknown: where it was in flight. */
  readonly outcomeUnknown?: { readonly host?: string };
}

/** An answer to a durable plan's approval request, from any host. */
export interface DurableApprovalAnswer {
  readonly requestId: string;
  readonly decision: 'approve' | 'deny';
  readonly scope?: 'once' | 'tool' | 'call';
  readonly reason?: string;
  readonly sentBy?: string;
}

/** The state key listing the requests a plan waits for. */
export const PENDING_STATE = 'pending';

/**
 * Approvals of one durable plan: each request is a durable promise of its
 * workflow, answered from any host (the workflow's `answer` handler: `agents
 * plan approve`, `DurablePlanClient.answer`), and listed in the workflow's
 * state while it waits. A replay finds the answer in Restate's journal and
 * asks nobody. Request ids are stable across hosts: the step id, what is
 * asked, and how many times it was asked before in the plan.
 */
export class DurableApprovals implements ApprovalHandler {
  private readonly asked = new Map<string, number>();
  private pending: DurableApprovalRequest[] = [];

  constructor(
    private readonly ctx: restate.WorkflowContext,
    private readonly onCancel: () => void,
    private readonly onWait?: (waiting: boolean) => void,
  ) {}

  async requestApproval(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalDecision> {
    const kind = request.outcomeUnknown === undefined ? 'call' : 'outcome-unknown';
    const base = `${request.step ?? `${request.toolName}#${request.id}`}/${kind}`;
    const count = (this.asked.get(base) ?? 0) + 1;
    this.asked.set(base, count);
    const requestId = `approval/${base}/${count}`;
    const listed: DurableApprovalRequest = {
      requestId,
      toolName: request.toolName,
      ...(request.step === undefined ? {} : { step: request.step }),
      reason: request.reason.text,
      ...(request.outcomeUnknown === undefined
        ? {}
        : { outcomeUnknown: request.outcomeUnknown.host === undefined ? {} : { host: request.outcomeUnknown.host } }),
    };
    this.pending = [...this.pending, listed];
    this.ctx.set(PENDING_STATE, this.pending);
    this.onWait?.(true);
    let answer: DurableApprovalAnswer;
    try {
      answer = await untilSettled(this.ctx, this.ctx.promise<DurableApprovalAnswer>(requestId).get(), this.onCancel);
    } finally {
      if (!context.signal.aborted) {
        this.pending = this.pending.filter((entry) => entry.requestId !== requestId);
        this.ctx.set(PENDING_STATE, this.pending);
        this.onWait?.(this.pending.length > 0);
      }
    }
    const decidedBy = answer.sentBy ?? 'durable plan answer';
    return answer.decision === 'approve'
      ? { decision: 'approve', scope: answer.scope ?? 'once', decidedBy }
      : { decision: 'deny', ...(answer.reason === undefined ? {} : { reason: answer.reason }), decidedBy };
  }
}

/**
 * The runtime's approval handler on a host of durable plans: it hands each
 * request to the durable plan it belongs to (by plan id), and refuses a
 * request of a plan that is not durable (`handler-failed`) — give the
 * runtime's plain plans a handler of their own with `fallback`.
 */
export class DurableApprovalRouter implements ApprovalHandler {
  private readonly plans = new Map<string, DurableApprovals>();

  constructor(private readonly fallback?: ApprovalHandler) {}

  attach(planId: string, approvals: DurableApprovals): void {
    this.plans.set(planId, approvals);
  }

  detach(planId: string): void {
    this.plans.delete(planId);
  }

  requestApproval(request: ApprovalRequest, context: ApprovalContext): ApprovalDecision | Promise<ApprovalDecision> {
    const durable = this.plans.get(request.planId);
    if (durable !== undefined) return durable.requestApproval(request, context);
    if (this.fallback !== undefined) return this.fallback.requestApproval(request, context);
    throw new Error(`plan '${request.planId}' is not a durable plan of this host, and the host has no approval handler for other plans`);
  }
}
