import { createHash } from 'node:crypto';
import type { PlanContext } from '@ca/tool-context';
import {
  canonicalJson,
  capabilityInPlan,
  compileToolPattern,
  compileToolRules,
  fingerprintTool,
  type ApprovalContext,
  type ApprovalDecision,
  type ApprovalHandler,
  type ApprovalRequest,
  type ApprovalStore,
  type ToolDescriptor,
  type ToolRuleDefinition,
  type ToolRules,
} from '@ca/tool-lifecycle';
import { ProgramCalls, type PendingProgramCall } from './program-calls';

/** A program's inner call, as `@ca/code-mode` asks its `suspend` option about it. */
export interface ProgramInnerCall {
  readonly descriptor: ToolDescriptor;
  readonly input: unknown;
  readonly ctx: PlanContext;
}

/** Settings of {@link FrameworkApprovals}. */
export interface FrameworkApprovalsOptions {
  /**
   * Asked when the runtime needs approval of a call that no framework
   * approved (a rule `needsApproval` could not foresee, a call outside a
   * framework). Without one, such a call is denied.
   */
  readonly fallback?: ApprovalHandler;
  /** The service's rules, the same the runtime was given, so that `needsApproval` foresees their `ask`. */
  readonly rules?: readonly ToolRuleDefinition[];
  /** The runtime's approval store, so that a tool approved for the rest of a plan (also before a restart) is not asked about again. */
  readonly store?: ApprovalStore;
}

/** An approval a framework gave, waiting for the runtime to ask about its call. */
export interface FrameworkApproval {
  /** `once` (this call) or `tool` (this tool for the rest of the plan; the runtime remembers it, in its store too). */
  readonly scope: 'once' | 'tool';
  /** Who approved, for the trace (`'ai-sdk approval response'`, a person's name). */
  readonly decidedBy: string;
  /** Set when the framework's answer was no: the runtime's question is answered with a denial (and its reason), so the trace says who refused. */
  readonly denied?: { readonly reason?: string };
}

/**
 * @internal Who "denies" a call nobody approved (no framework answer, no
 * fallback): the bridge failing closed, not a person — the text a model
 * reads says so (`modelErrorText`).
 */
export const UNANSWERED_DECIDER = 'model-tools';

/**
 * Joins a framework's own approval flow (AI SDK approval requests and
 * responses, OpenAI Agents interruptions) to the runtime's: install it as
 * the runtime's `ApprovalHandler`, and the framework adapters ask it whether
 * a call needs approval (`needsApproval`, which the framework turns into its
 * request) and tell it when the framework approved one (`grant`). When the
 * runtime then asks — after its policy check and input validation, as for
 * every call — the granted approval answers, bound to the tool and the
 * canonical arguments; a call nobody approved goes to the fallback handler,
 * or is denied. The runtime still decides: a grant never makes a refused
 * call run.
 */
export class FrameworkApprovals implements ApprovalHandler {
  private readonly fallback: ApprovalHandler | undefined;
  private readonly rules: ToolRules | undefined;
  private readonly store: ApprovalStore | undefined;
  private readonly grants = new Map<string, Map<string, FrameworkApproval[]>>();
  /** Plans' tools approved for the rest of the plan through this bridge: `planId\0tool\0fingerprint`. */
  private readonly toolApprovals = new Set<string>();
  private readonly patterns = new Map<string, (name: string) => boolean>();
  private readonly asksByRule: boolean;
  /** @internal Program calls a framework adapter ran before the framework asked about them (see {@link suspend}). */
  readonly programs = new ProgramCalls();

  constructor(options: FrameworkApprovalsOptions = {}) {
    this.fallback = options.fallback;
    this.rules = options.rules === undefined ? undefined : compileToolRules(options.rules);
    this.asksByRule = (options.rules ?? []).some((rule) => rule?.decision === 'ask');
    this.store = options.store;
  }

  /**
   * For `@ca/code-mode`'s `suspend` option
   * (`createCodeMode({ runtime, suspend: approvals.suspend })`): whether a
   * program's inner call stops the program to wait for a person through the
   * framework's own approval flow — the runtime will ask about it
   * ({@link needsApproval}) and no framework approval is waiting for it. The
   * framework adapters run a program tool's call up to that inner call before
   * the framework asks (AI SDK `needsApproval`, Agents SDK `needsApproval`,
   * LangChain's human-in-the-loop middleware), so the framework's approval
   * request is about the inner call ({@link pendingProgramCall} says which);
   * once the person approved, the program runs again under its resume step:
   * the calls it already made are answered from the plan's journal, and the
   * approved call runs. A bound function: pass it as it is.
   */
  readonly suspend = async (call: ProgramInnerCall): Promise<boolean> => {
    if (call === null || typeof call !== 'object' || call.descriptor === undefined || call.ctx === undefined) return false;
    const plans = this.grants.get(call.ctx.planId);
    if (plans?.has(callKey(call.descriptor.name, call.input)) === true) return false;
    return this.needsApproval(call.descriptor, call.input, call.ctx);
  };

  /**
   * The inner call a framework's approval request for a program tool's call
   * (`code.run`, by the framework's call id: the AI SDK's `toolCallId`, the
   * Agents SDK's `callId`, LangChain's tool call id) is about — what to show
   * the person instead of the program. `undefined` when that call is not a
   * program waiting for a person.
   */
  pendingProgramCall(plan: PlanContext | string, callId: string): PendingProgramCall | undefined {
    const planId = typeof plan === 'string' ? plan : plan?.planId;
    if (typeof planId !== 'string' || typeof callId !== 'string') return undefined;
    const entry = this.programs.get(planId, callId);
    return entry?.kind === 'pending' ? entry.pending : undefined;
  }

  /** Whether anything of this plan can need a person: an `ask` rule, or the plan's `policy.approval`. */
  mayAsk(plan: PlanContext): boolean {
    return this.asksByRule || plan.policy.approval !== undefined;
  }

  /**
   * Whether the runtime will ask about this call: an `ask` rule of the
   * service, or the plan's `policy.approval` (every call, a capability, a
   * tool pattern) — unless the tool is approved for the rest of the plan.
   * A `deny` or `allow` rule needs no question (the runtime decides alone).
   */
  async needsApproval(descriptor: ToolDescriptor, input: unknown, plan: PlanContext): Promise<boolean> {
    const verdict = this.rules?.decide(descriptor.name, input);
    let asks = verdict?.decision === 'ask';
    if (verdict === undefined) asks = this.policyAsks(descriptor, plan);
    if (!asks) return false;
    return !(await this.remembered(descriptor, input, plan));
  }

  /**
   * Records that the framework approved this call; the runtime's question
   * about it (same plan, tool and canonical arguments) is answered with it.
   * Returns the function that withdraws it when the call is over (an
   * approval the runtime never asked for must not outlive the call).
   */
  grant(plan: PlanContext, toolName: string, input: unknown, approval: FrameworkApproval): () => void {
    const key = callKey(toolName, input);
    let plans = this.grants.get(plan.planId);
    if (plans === undefined) {
      plans = new Map();
      this.grants.set(plan.planId, plans);
    }
    const waiting = plans.get(key) ?? [];
    waiting.push(approval);
    plans.set(key, waiting);
    return () => this.take(plan.planId, key, approval);
  }

  /** The runtime's question: a framework's approval of this call, else the fallback, else denied. */
  requestApproval(request: ApprovalRequest, context: ApprovalContext): ApprovalDecision | Promise<ApprovalDecision> {
    const approval = this.take(request.planId, callKey(request.toolName, request.arguments));
    if (approval?.denied !== undefined) {
      return { decision: 'deny', decidedBy: approval.decidedBy, ...(approval.denied.reason === undefined ? {} : { reason: approval.denied.reason }) };
    }
    if (approval !== undefined) {
      if (approval.scope === 'tool') this.toolApprovals.add(`${request.planId}\0${request.toolName}\0${request.fingerprint}`);
      return { decision: 'approve', scope: approval.scope, decidedBy: approval.decidedBy };
    }
    if (this.fallback !== undefined) return this.fallback.requestApproval(request, context);
    return {
      decision: 'deny',
      reason:
        'no approval was given for this call: no approval request of the agent framework answered it, and FrameworkApprovals has no fallback handler to ask, so it fails closed',
      decidedBy: UNANSWERED_DECIDER,
    };
  }

  /** Forgets what this bridge holds for a plan (call when the plan ends). */
  forgetPlan(planId: string): void {
    this.programs.forgetPlan(planId);
    this.grants.delete(planId);
    for (const key of this.toolApprovals) if (key.startsWith(`${planId}\0`)) this.toolApprovals.delete(key);
  }

  private take(planId: string, key: string, which?: FrameworkApproval): FrameworkApproval | undefined {
    const plans = this.grants.get(planId);
    const waiting = plans?.get(key);
    if (plans === undefined || waiting === undefined) return undefined;
    const index = which === undefined ? 0 : waiting.indexOf(which);
    if (index < 0) return undefined;
    const [taken] = waiting.splice(index, 1);
    if (waiting.length === 0) plans.delete(key);
    if (plans.size === 0) this.grants.delete(planId);
    return taken;
  }

  /** The plan's `policy.approval`, read as the runtime reads it. */
  private policyAsks(descriptor: ToolDescriptor, plan: PlanContext): boolean {
    const approval = plan.policy.approval;
    if (approval === undefined) return false;
    if (approval.always === true) return true;
    // The tool's capability in this plan, as the runtime's approval step reads it (a sandboxed command writes in a plain plan).
    const capability = capabilityInPlan(descriptor, plan.policy);
    for (const asked of approval.capabilities ?? []) if (capability[asked]) return true;
    return (approval.tools ?? []).some((pattern) => this.pattern(pattern)(descriptor.name));
  }

  private pattern(pattern: string): (name: string) => boolean {
    let matcher = this.patterns.get(pattern);
    if (matcher === undefined) {
      matcher = compileToolPattern(pattern);
      if (this.patterns.size < 1_000) this.patterns.set(pattern, matcher);
    }
    return matcher;
  }

  /** A `tool` approval of this plan (given through this bridge, or kept in the store), or a `call` approval of these arguments in the store. */
  private async remembered(descriptor: ToolDescriptor, input: unknown, plan: PlanContext): Promise<boolean> {
    const fingerprint = fingerprintTool(descriptor);
    if (this.toolApprovals.has(`${plan.planId}\0${descriptor.name}\0${fingerprint}`)) return true;
    if (this.store === undefined) return false;
    let records: readonly unknown[];
    try {
      records = await this.store.load(plan.planId);
    } catch {
      return false;
    }
    let hash: string | undefined;
    for (const record of records) {
      const { toolName, fingerprint: recorded, scope, argumentsHash } = (record ?? {}) as Record<string, unknown>;
      if (toolName !== descriptor.name || recorded !== fingerprint) continue;
      if (scope === 'tool') return true;
      if (scope === 'call') {
        hash ??= argumentsDigest(input);
        if (argumentsHash === hash) return true;
      }
    }
    // The runtime checks each record's signature when it asks; an edited one is refused there and asked about again.
    return false;
  }
}

/** The key of a call: tool and canonical arguments. */
function callKey(toolName: string, input: unknown): string {
  try {
    return `${toolName}\0${canonicalJson(input)}`;
  } catch {
    return `${toolName}\0<not JSON>`;
  }
}

/** SHA-256 (base64url) of the canonical JSON of the arguments, as `ApprovalRecord.argumentsHash` is. */
function argumentsDigest(input: unknown): string | undefined {
  try {
    return createHash('sha256').update(canonicalJson(input), 'utf8').digest('base64url');
  } catch {
    return undefined;
  }
}
