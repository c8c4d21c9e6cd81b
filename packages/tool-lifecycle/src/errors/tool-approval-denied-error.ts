import { ToolRuntimeError } from './tool-runtime-error';

/**
 * Why a call that needed approval did not get it:
 * - `'denied'`: the approval handler (a person) said no;
 * - `'rule'`: a deny rule of the service refused the call, without asking;
 * - `'no-handler'`: the call needed approval and nobody could be asked (no `ApprovalHandler`);
 * - `'handler-failed'`: the handler threw, or answered something that is not a decision;
 * - `'timed-out'`: no answer came within `approvalTimeoutMs`.
 */
export type ToolApprovalDenial = 'denied' | 'rule' | 'no-handler' | 'handler-failed' | 'timed-out';

/** Options of {@link ToolApprovalDeniedError}. */
export interface ToolApprovalDeniedErrorOptions {
  readonly toolName: string;
  readonly planId: string;
  /** Why the call was refused (see {@link ToolApprovalDenial}). */
  readonly denial: ToolApprovalDenial;
  /** Why it needed approval, in words (`the plan asks for tools that write`); for `no-handler`, `timed-out`. */
  readonly asked?: string;
  /** Who said no (the handler's `decidedBy`), for `denied`. */
  readonly decidedBy?: string;
  /** The reason given with the denial (by the person, or the rule's `reason`). */
  readonly reason?: string;
  /** The name of the rule, for `rule`. */
  readonly rule?: string;
  /** The request that was asked, when one was. */
  readonly requestId?: string;
  /** For `timed-out`: how long the runtime waited, in ms. */
  readonly timeoutMs?: number;
  /** For `handler-failed`: what the handler threw. */
  readonly cause?: unknown;
}

function explain(options: ToolApprovalDeniedErrorOptions): string {
  const { toolName, planId, denial, asked, decidedBy, reason, rule, timeoutMs } = options;
  const subject = `Tool '${toolName}' in plan '${planId}'`;
  const because = reason === undefined || reason.trim() === '' ? '' : `: ${reason.trim()}`;
  const why = asked === undefined ? '' : ` (${asked})`;
  switch (denial) {
    case 'rule':
      return `${subject} is refused by rule '${rule ?? '?'}'${because}. The tool did not run. Change the call, or the rule in the service's configuration.`;
    case 'no-handler':
      return `${subject} needs approval${why}, but nobody can be asked: no approval handler is configured, so the call was refused and the tool did not run. Give the runtime an ApprovalHandler (settings.approvalHandler, or APPROVAL_HANDLER in the container; an INTERACTION_HANDLER there answers approvals too), add an allow rule for the call, or change the plan's policy.approval.`;
    case 'handler-failed':
      return `${subject} needs approval${why}, but the approval handler failed, so the call was refused and the tool did not run. See the cause; the handler must resolve { decision: 'approve' } or { decision: 'deny' }.`;
    case 'timed-out':
      return `${subject} needs approval${why}, but no answer came within ${timeoutMs ?? '?'} ms (approvalTimeoutMs), so the call was refused and the tool did not run. Answer sooner, or raise approvalTimeoutMs.`;
    default:
      return `${subject} was denied by ${decidedBy ?? 'the approval handler'}${because}. The tool did not run. Change the call, or ask for approval again.`;
  }
}

/**
 * A call that needed approval was refused: a person said no, a deny rule
 * refused it, nobody could be asked, the handler failed or the answer did not
 * come in time. Raised after the capability check and the input validation,
 * before anything of the tool runs. A sibling of `ToolAccessDeniedError`,
 * which is the plan's policy refusing the tool whatever anyone says.
 *
 * Code: `TOOL_APPROVAL_DENIED`.
 */
export class ToolApprovalDeniedError extends ToolRuntimeError {
  declare readonly code: 'TOOL_APPROVAL_DENIED';
  declare readonly toolName: string;
  declare readonly planId: string;
  /** Why the call was refused. */
  readonly denial: ToolApprovalDenial;
  /** Who said no, for `denied`. */
  readonly decidedBy?: string;
  /** The reason given with the denial. */
  readonly reason?: string;
  /** The deny rule, for `rule`. */
  readonly rule?: string;
  /** The request that was asked, when one was. */
  readonly requestId?: string;

  constructor(options: ToolApprovalDeniedErrorOptions) {
    super('TOOL_APPROVAL_DENIED', explain(options), options);
    this.denial = options.denial;
    if (options.decidedBy !== undefined) this.decidedBy = options.decidedBy;
    if (options.reason !== undefined) this.reason = options.reason;
    if (options.rule !== undefined) this.rule = options.rule;
    if (options.requestId !== undefined) this.requestId = options.requestId;
  }
}
