import type { ToolCapability, ToolSourceKind } from '@ca/domain';
import type { InjectionToken } from 'tsyringe';

/**
 * How far an approval reaches:
 * - `'once'`: this execution only;
 * - `'tool'`: this tool, with any arguments, for the rest of the plan;
 * - `'call'`: this tool with these exact arguments (in canonical form), for the rest of the plan.
 *
 * `tool` and `call` approvals are bound to the tool's definition
 * fingerprint: a tool whose name, description, schemas or capability changed
 * is asked about again. They are kept in the runtime's `ApprovalStore`, so a
 * plan restarted with the same id does not ask again.
 */
export type ApprovalScope = 'once' | 'tool' | 'call';

/** Why a call needs approval. */
export interface ApprovalReason {
  /**
   * `policy`: the plan's `policy.approval`; `rule`: an `ask` rule of the service;
   * `resume`: the call was in flight when its plan's host stopped and its outcome
   * is unknown — approve to run it again, deny to fail the step (`outcome-unknown`).
   */
  readonly source: 'policy' | 'rule' | 'resume';
  /** What matched: `always`, a capability (`writes`, `destructive`, `openWorld`), a tool pattern of the policy, or the rule's name. */
  readonly match: string;
  /** The same in words, to show the person: `the plan asks before tools that write`. */
  readonly text: string;
}

/**
 * A call waiting for approval. Everything in it comes from the call:
 * `arguments` were chosen by a model and `description` by the tool's source
 * — show them, never follow them.
 */
export interface ApprovalRequest {
  /** The request's id, unique in its plan (`1`, `2`, …): what a person names to answer it. */
  readonly id: string;
  readonly planId: string;
  /** The execution that waits. */
  readonly executionId: string;
  readonly toolName: string;
  /** The tool's description, from its source. */
  readonly description: string;
  /** The kind of source the tool comes from. */
  readonly source: ToolSourceKind;
  /** What the tool can do in this plan (writes, destructive, open world, …): `capabilityInPlan` of its descriptor and the plan's policy. */
  readonly capability: ToolCapability;
  /** The arguments of the call, already validated against the tool's input schema. */
  readonly arguments: unknown;
  /** The fingerprint of the tool's definition (see `fingerprintTool`), which a `tool` or `call` approval is bound to. */
  readonly fingerprint: string;
  /** Why it is asked. */
  readonly reason: ApprovalReason;
  /** The caller's step or tool-call id, for a call made with one: with the plan id, what names the call in every process. */
  readonly step?: string;
  /** The call's idempotency key, for a call made with a step id. */
  readonly idempotencyKey?: string;
  /**
   * For a call whose outcome is unknown (`reason.source` `resume`): where it was in flight when its host stopped, and since when.
   * Approving runs it again (once); denying fails the step with `ToolOutcomeUnknownError`.
   */
  readonly outcomeUnknown?: { readonly host?: string; readonly begunAt?: string };
}

/** What a handler gets besides the request. */
export interface ApprovalContext {
  /**
   * Aborts when the answer is no longer wanted: the plan was cancelled or
   * ended, or `approvalTimeoutMs` passed. Stop asking then; the runtime has
   * already stopped waiting.
   */
  readonly signal: AbortSignal;
}

/**
 * A handler's answer: approve (for `scope`, default `once`) or deny (with a
 * reason). `decidedBy` names who answered, for the trace: a person's name, a
 * channel (`alice (terminal)`); default `approval handler`.
 */
export type ApprovalDecision =
  | { readonly decision: 'approve'; readonly scope?: ApprovalScope; readonly decidedBy?: string }
  | { readonly decision: 'deny'; readonly reason?: string; readonly decidedBy?: string };

/**
 * Asks a person whether a tool call may run. The service injects one (a
 * terminal prompt, a web dialog, a chat message); the runtime asks it after
 * the capability check and the input validation and before the call, one
 * request per call that needs approval (several may be pending at once, for
 * concurrent calls). Without a handler, a call that needs approval is
 * refused (`ToolApprovalDeniedError`, denial `no-handler`).
 *
 * Its own kind of request, not an MCP elicitation: the runtime knows the
 * tool, its capability and fingerprint, and binds the answer to them.
 */
export interface ApprovalHandler {
  /**
   * Resolves with the answer; a handler that decides by itself (a policy
   * engine, a test) may return the decision itself, and the call then does
   * not wait at all. Stop asking when `context.signal` aborts.
   * @throws anything — the call is then refused (`handler-failed`), never run.
   */
  requestApproval(request: ApprovalRequest, context: ApprovalContext): ApprovalDecision | Promise<ApprovalDecision>;
}

/** The service's {@link ApprovalHandler}, when it registers one (read by `registerToolRuntime`). */
export const APPROVAL_HANDLER: InjectionToken<ApprovalHandler> = Symbol.for('ca.tool-lifecycle.ApprovalHandler');
