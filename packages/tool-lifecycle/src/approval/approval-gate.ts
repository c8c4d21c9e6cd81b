import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { describeValue, messageOf, safeMessage, type ToolCapability } from '@ca/domain';
import { ToolCancelledError, type PlanApprovalPolicy, type PlanContext, type ToolExecutionTraceApproval } from '@ca/tool-context';
import type { ApprovalContext, ApprovalDecision, ApprovalHandler, ApprovalReason, ApprovalRequest, ApprovalScope } from './approval-handler';
import type { ApprovalRecord, ApprovalStore } from './approval-store';
import { canonicalJson, digest } from './canonical-json';
import { ToolApprovalDeniedError, ToolInvalidArgumentError, ToolPlanEndedError } from '../errors';
import { PlanApprovalRecords, type PendingApprovalSummary, type PendingRequest, type PlanApprovals } from './plan-approvals';
import type { RuntimeLogger } from '../observability';
import { capabilityInPlan, type ToolDescriptor } from '../tool';
import { fingerprintTool } from './tool-fingerprint';
import { compileToolPattern, type PatternMatcher } from './tool-pattern';
import type { ToolRules } from './tool-rules';

/** Where the approval step writes what was decided: the execution's record. */
export interface ApprovalSubject {
  readonly toolName: string;
  readonly ctx: PlanContext;
  readonly executionId: string;
  /** The execution's less common facts; the approval goes there (and the step id and key of a call made with a step come from there). */
  extra: { approval?: ToolExecutionTraceApproval; step?: string; idempotencyKey?: string } | undefined;
}

/** Records the approval of the execution, for its trace. */
function decided(subject: ApprovalSubject, approval: ToolExecutionTraceApproval): void {
  (subject.extra ??= {}).approval = approval;
}

/** What the approval step is built from. */
export interface ApprovalGateSettings {
  readonly rules: ToolRules | undefined;
  readonly handler: ApprovalHandler | undefined;
  readonly store: ApprovalStore | undefined;
  readonly key: string | Uint8Array | undefined;
  readonly timeoutMs: number | undefined;
  readonly logger: RuntimeLogger;
  readonly monotonic: () => number;
  readonly now: () => number;
  /** Told when a plan's list of waiting requests changed (a request began or stopped waiting). */
  readonly onPendingChange?: (ctx: PlanContext) => void;
}

/** Shortest approval key: an HMAC-SHA256 key shorter than its output is weaker than the hash. */
const MIN_KEY_BYTES = 32;
const DEFAULT_DECIDER = 'approval handler';

const ALWAYS: ApprovalReason = Object.freeze({ source: 'policy', match: 'always', text: 'the plan asks before every call' });
const CAPABILITY_REASONS: Readonly<Record<'writes' | 'destructive' | 'openWorld', ApprovalReason>> = {
  writes: Object.freeze({ source: 'policy', match: 'writes', text: 'the plan asks before tools that write' }),
  destructive: Object.freeze({ source: 'policy', match: 'destructive', text: 'the plan asks before tools that may destroy data' }),
  openWorld: Object.freeze({ source: 'policy', match: 'openWorld', text: 'the plan asks before tools that reach outside (network, remote services)' }),
};

/** A plan's approval policy, with its tool patterns compiled and their answers kept per tool name. */
class CompiledApprovalPolicy {
  private readonly always: boolean;
  // One flag per capability: named reads of the tool's capability, not a loop of keyed ones, on every call.
  private readonly writes: boolean;
  private readonly destructive: boolean;
  private readonly openWorld: boolean;
  private readonly patterns: readonly { readonly matches: PatternMatcher; readonly reason: ApprovalReason }[];
  private readonly byTool = new Map<string, ApprovalReason | null>();

  constructor(policy: PlanApprovalPolicy) {
    this.always = policy.always === true;
    const capabilities = policy.capabilities ?? [];
    this.writes = capabilities.includes('writes');
    this.destructive = capabilities.includes('destructive');
    this.openWorld = capabilities.includes('openWorld');
    this.patterns = (policy.tools ?? []).map((pattern) => ({
      matches: compileToolPattern(pattern),
      reason: Object.freeze({ source: 'policy', match: pattern, text: `the plan asks before tools matching '${pattern}'` }),
    }));
  }

  /** Why the policy asks before a call of this tool, whose capability in the plan is `capability` ({@link capabilityInPlan}). */
  reasonFor(descriptor: ToolDescriptor, capability: ToolCapability): ApprovalReason | undefined {
    if (this.always) return ALWAYS;
    if (this.writes && capability.writes) return CAPABILITY_REASONS.writes;
    if (this.destructive && capability.destructive) return CAPABILITY_REASONS.destructive;
    if (this.openWorld && capability.openWorld) return CAPABILITY_REASONS.openWorld;
    if (this.patterns.length === 0) return undefined;
    let reason = this.byTool.get(descriptor.name);
    if (reason === undefined) {
      reason = this.patterns.find((entry) => entry.matches(descriptor.name))?.reason ?? null;
      if (this.byTool.size < 10_000) this.byTool.set(descriptor.name, reason);
    }
    return reason ?? undefined;
  }
}

const compiledPolicies = new WeakMap<PlanApprovalPolicy, CompiledApprovalPolicy>();
// Calls come in runs from one plan: the last policy answers most lookups without the WeakMap.
let lastPolicy: PlanApprovalPolicy | undefined;
let lastCompiled: CompiledApprovalPolicy | undefined;

function compiledPolicy(policy: PlanApprovalPolicy): CompiledApprovalPolicy {
  if (policy === lastPolicy) return lastCompiled as CompiledApprovalPolicy;
  let compiled = compiledPolicies.get(policy);
  if (compiled === undefined) {
    compiled = new CompiledApprovalPolicy(policy);
    compiledPolicies.set(policy, compiled);
  }
  lastPolicy = policy;
  lastCompiled = compiled;
  return compiled;
}

/**
 * An answer to a waiting request that comes from elsewhere than the approval
 * handler: a `PlanApprovalMessage` of the plan registry.
 */
export interface ApprovalAnswer {
  /** The request answered: its id in the plan. */
  readonly requestId: string;
  readonly decision: 'approve' | 'deny';
  /** For `approve`: how far the approval reaches (`once` when absent). */
  readonly scope?: ApprovalScope;
  /** For `deny`: why. */
  readonly reason?: string;
  /** Who answered. */
  readonly sentBy?: string;
}

const ruleReasons = new Map<string, ApprovalReason>();

/** The reason of an `ask` rule, made once per rule (and reason). */
function ruleReason(rule: string, reason: string | undefined): ApprovalReason {
  const key = `${rule}\0${reason ?? ''}`;
  let made = ruleReasons.get(key);
  if (made === undefined) {
    made = Object.freeze({ source: 'rule', match: rule, text: reason ?? `rule '${rule}' asks before this call` });
    if (ruleReasons.size >= 1_000) ruleReasons.clear();
    ruleReasons.set(key, made);
  }
  return made;
}

/**
 * One request as asked, and the handler's context for it: its signal is made
 * on first read, and aborted when the wait ends without an answer (even when
 * that is before the handler read it).
 */
class AskedApproval implements ApprovalContext {
  private controller: AbortController | undefined = undefined;
  private abortedWith: unknown = undefined;
  /**
   * When the wait for a promised answer began; undefined for an answer given
   * at once, which kept nobody waiting (its time is in the execution's).
   */
  started: number | undefined = undefined;

  constructor(
    readonly subject: ApprovalSubject,
    readonly request: ApprovalRequest,
    readonly input: unknown,
    readonly plan: PlanApprovals,
  ) {}

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortedWith !== undefined) this.controller.abort(this.abortedWith);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    this.abortedWith = reason;
    this.controller?.abort(reason);
  }
}

/**
 * A request whose answer is a promise, waited for until it settles, the plan
 * is cancelled or ends, or the approval deadline passes — whichever comes first.
 */
class PendingApproval implements PendingRequest {
  previousPending: PendingRequest | undefined = undefined;
  nextPending: PendingRequest | undefined = undefined;
  private done = false;
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;
  private unsubscribe: (() => void) | undefined = undefined;
  /** When it was asked, in wall-clock ms. */
  private readonly askedAtMs: number;

  constructor(
    private readonly gate: ApprovalGate,
    private readonly asked: AskedApproval,
    private readonly resolve: () => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.askedAtMs = gate.wallTime();
  }

  get requestId(): string {
    return this.asked.request.id;
  }

  summary(): PendingApprovalSummary {
    const { id, toolName } = this.asked.request;
    return { requestId: id, toolName, askedAt: new Date(this.askedAtMs).toISOString() };
  }

  wait(answer: PromiseLike<ApprovalDecision>): void {
    const { subject, request, plan } = this.asked;
    const { toolName, planId } = request;
    this.unsubscribe = subject.ctx.cancellationToken.onCancel((reason) => this.withdraw(new ToolCancelledError({ reason, toolName, planId })));
    plan.addPending(this);
    this.gate.pendingChanged(subject.ctx);
    const timeoutMs = this.gate.timeoutMs;
    if (timeoutMs !== undefined) this.timer = setTimeout(() => this.withdraw(new WaitEnded('timed-out')), timeoutMs);
    Promise.resolve(answer).then(
      (value) => this.answered(value),
      (error: unknown) => this.withdraw(new WaitEnded('handler-failed', error)),
    );
  }

  /** The plan ended. */
  end(): void {
    this.withdraw(new ToolPlanEndedError({ planId: this.asked.request.planId, toolName: this.asked.request.toolName }));
  }

  /** Answered from elsewhere (the plan registry): the handler's question is withdrawn, with `why` as the signal's reason. */
  answerElsewhere(decision: ApprovalDecision, why: string): void {
    if (this.done) return;
    this.answered(decision);
    this.asked.abort(new Error(why));
  }

  private finish(): void {
    this.done = true;
    this.unsubscribe?.();
    this.asked.plan.removePending(this);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.gate.pendingChanged(this.asked.subject.ctx);
  }

  private answered(value: unknown): void {
    if (this.done) return;
    this.finish();
    let remembering: Promise<void> | undefined;
    try {
      remembering = this.gate.settle(this.asked, value);
    } catch (error) {
      this.reject(error);
      return;
    }
    if (remembering === undefined) this.resolve();
    else remembering.then(this.resolve, this.reject);
  }

  private withdraw(ended: unknown): void {
    if (this.done) return;
    this.finish();
    this.asked.abort(ended);
    this.reject(this.gate.unanswered(this.asked, ended));
  }
}

/** Why the wait for an answer ended without one. */
class WaitEnded {
  constructor(
    readonly kind: 'timed-out' | 'handler-failed',
    readonly cause?: unknown,
  ) {}
}

/**
 * What the gate reads and keeps of a catalog entry (`catalog/`'s
 * RegisteredTool has these fields): named here so that approval/ does not
 * import catalog/, which imports pins/, which imports approval/.
 */
export interface GatedTool {
  readonly descriptor: ToolDescriptor;
  /** Whether a rule of the runtime names this tool, once the gate has asked. */
  ruled: boolean | undefined;
}

/**
 * The approval step of an execution, between the input validation and the
 * call: the service's rules first (deny, then ask, then allow), then the
 * plan's `policy.approval`; an approval remembered for the rest of the plan
 * (from this run or, through the store, an earlier one) answers without
 * asking; otherwise the handler is asked, and waited for until it answers,
 * the plan is cancelled or ends, or `approvalTimeoutMs` passes.
 */
export class ApprovalGate {
  readonly rules: ToolRules | undefined;
  private readonly handler: ApprovalHandler | undefined;
  private readonly store: ApprovalStore | undefined;
  private readonly key: Buffer;
  /** How long a request may wait for its answer, in ms. */
  readonly timeoutMs: number | undefined;
  private readonly logger: RuntimeLogger;
  /** Monotonic milliseconds, for how long requests wait. */
  readonly monotonic: () => number;
  private readonly now: () => number;
  private readonly onPendingChange: ((ctx: PlanContext) => void) | undefined;
  /** What the gate keeps per plan (remembered approvals, waiting requests); dropped with the plan's context. */
  private readonly plans = new PlanApprovalRecords();

  constructor(settings: ApprovalGateSettings) {
    this.rules = settings.rules !== undefined && settings.rules.size > 0 ? settings.rules : undefined;
    this.handler = settings.handler;
    this.store = settings.store;
    this.timeoutMs = settings.timeoutMs;
    this.logger = settings.logger;
    this.monotonic = settings.monotonic;
    this.now = settings.now;
    this.onPendingChange = settings.onPendingChange;
    this.key = keyOf(settings.key, settings.store !== undefined);
  }

  /** Wall-clock milliseconds, from the runtime's clock. */
  wallTime(): number {
    return this.now();
  }

  /** A request of the plan began or stopped waiting. */
  pendingChanged(ctx: PlanContext): void {
    if (this.onPendingChange === undefined) return;
    try {
      this.onPendingChange(ctx);
    } catch (error) {
      this.logger.error(`Telling the plan registry that the approval requests of plan '${ctx.planId}' changed failed: ${messageOf(error)}`, {
        planId: ctx.planId,
      });
    }
  }

  /** The plan ended: its waiting requests are withdrawn (nobody will make their calls) and no new one is asked. */
  endPlan(ctx: PlanContext): void {
    this.plans.existing(ctx)?.end();
  }

  /** The plan's requests waiting for an answer, oldest first. */
  pendingSummaries(ctx: PlanContext): PendingApprovalSummary[] {
    return this.plans.existing(ctx)?.pendingSummaries() ?? [];
  }

  /**
   * Applies an answer that came through the plan registry to the waiting
   * request it names: the first answer wins, and the handler's question is
   * withdrawn. An answer to a request that does not wait (answered already,
   * withdrawn, never asked) is ignored with a warning.
   */
  answerFromRegistry(ctx: PlanContext, message: ApprovalAnswer, registry: string): void {
    const planId = ctx.planId;
    const requestId = safeMessage(message.requestId, 64);
    const pending = this.plans.existing(ctx)?.pendingRequest(message.requestId);
    if (pending === undefined) {
      this.logger.warn(
        `Plan '${planId}' received an answer to approval request '${requestId}' through plan registry ${registry}, but no request with that id waits (answered already, withdrawn, or never asked); it was ignored.`,
        { planId },
      );
      return;
    }
    const decidedBy = message.sentBy ?? `plan registry ${registry}`;
    const decision: ApprovalDecision =
      message.decision === 'approve'
        ? { decision: 'approve', scope: message.scope ?? 'once', decidedBy }
        : { decision: 'deny', ...(message.reason === undefined ? {} : { reason: message.reason }), decidedBy };
    const { toolName } = pending.summary();
    this.logger.info(
      `Approval request ${requestId} of plan '${planId}' (tool '${toolName}') was ${message.decision === 'approve' ? 'approved' : 'denied'} through plan registry ${registry} by ${safeLabel(decidedBy)}.`,
      {
        planId,
        toolName,
      },
    );
    pending.answerElsewhere(decision, `approval request ${requestId} was answered through plan registry ${registry} by ${safeLabel(decidedBy)}`);
  }

  /**
   * The approval step of an execution (4½, after the input validation): asks
   * only when a rule of the service names the tool or the plan's policy has
   * an approval part — otherwise one read of `policy.approval`. Returns
   * `undefined` when the call may run at once, a promise when an answer must
   * be waited for (see {@link ApprovalGate.check}).
   * @throws ToolApprovalDeniedError, ToolCancelledError, ToolPlanEndedError (see {@link ApprovalGate.check}).
   */
  approve(subject: ApprovalSubject, tool: GatedTool, input: unknown): Promise<void> | undefined {
    // Whether a rule names the tool is asked once per tool: the rules never change.
    const ruled = this.rules !== undefined && (tool.ruled ??= this.rules.coversTool(tool.descriptor.name));
    if (!ruled && subject.ctx.policy.approval === undefined) return undefined;
    return this.check(subject, tool.descriptor, input, ruled);
  }

  /**
   * Decides whether the call may run (`ruled`: a rule names the tool, so the
   * rules are matched). Returns `undefined` when nothing was
   * to decide, or a rule or a remembered approval decided at once; a promise
   * when the store must be read or a person asked.
   * @throws ToolApprovalDeniedError (a deny rule, or nobody to ask: synchronously; the rest through the promise),
   *   ToolCancelledError, ToolPlanEndedError.
   */
  check(subject: ApprovalSubject, descriptor: ToolDescriptor, input: unknown, ruled: boolean): Promise<void> | undefined {
    let reason: ApprovalReason | undefined;
    if (ruled && this.rules !== undefined) {
      const verdict = this.rules.decide(subject.toolName, input);
      if (verdict !== undefined) {
        if (verdict.decision === 'deny') {
          decided(subject, traceApproval('denied', `rule:${verdict.rule}`, undefined, 0, undefined, verdict.reason));
          throw new ToolApprovalDeniedError({
            toolName: subject.toolName,
            planId: subject.ctx.planId,
            denial: 'rule',
            rule: verdict.rule,
            ...(verdict.reason === undefined ? {} : { reason: verdict.reason }),
          });
        }
        if (verdict.decision === 'allow') {
          decided(subject, traceApproval('approved', `rule:${verdict.rule}`, 'once', 0));
          return undefined;
        }
        reason = ruleReason(verdict.rule, verdict.reason);
      }
    }
    if (reason === undefined) {
      const policy = subject.ctx.policy.approval;
      if (policy === undefined) return undefined;
      reason = compiledPolicy(policy).reasonFor(descriptor, capabilityInPlan(descriptor, subject.ctx.policy));
      if (reason === undefined) return undefined;
    }
    const plan = this.plans.of(subject.ctx);
    if (this.store !== undefined && !plan.storeRead) {
      plan.approvalsLoaded ??= this.load(subject.ctx.planId, plan);
      const asked = reason;
      return plan.approvalsLoaded.then(() => this.ask(subject, descriptor, input, asked, plan));
    }
    return this.ask(subject, descriptor, input, reason, plan);
  }

  /**
   * Asks whether a call whose outcome is unknown (it was in flight when its
   * plan's host stopped) may run again: never answered by a remembered
   * approval, never remembered. Resolves when approved.
   * @throws ToolApprovalDeniedError when denied or nobody could be asked; ToolCancelledError, ToolPlanEndedError.
   */
  async askToRunAgain(
    subject: ApprovalSubject,
    descriptor: ToolDescriptor,
    input: unknown,
    interrupted: { readonly host?: string; readonly begunAt?: string },
  ): Promise<void> {
    const where = interrupted.host === undefined ? '' : ` on ${interrupted.host}`;
    const reason: ApprovalReason = {
      source: 'resume',
      match: 'outcome-unknown',
      text: `outcome unknown: the call was in flight${where} when its host stopped, and it may have happened; approve to run it again, deny to fail the step`,
    };
    await this.ask(subject, descriptor, input, reason, this.plans.of(subject.ctx), interrupted);
  }

  /** After the store was read: a remembered approval, or the handler asked. */
  private ask(
    subject: ApprovalSubject,
    descriptor: ToolDescriptor,
    input: unknown,
    reason: ApprovalReason,
    plan: PlanApprovals,
    outcomeUnknown?: { readonly host?: string; readonly begunAt?: string },
  ): Promise<void> | undefined {
    const { ctx, toolName } = subject;
    const planId = ctx.planId;
    let fingerprint: string;
    try {
      fingerprint = fingerprintTool(descriptor);
    } catch (error) {
      decided(subject, traceApproval('denied', 'runtime', undefined, 0));
      throw new ToolApprovalDeniedError({ toolName, planId, denial: 'handler-failed', asked: reason.text, cause: error });
    }
    if (plan.approvals.size > 0 && outcomeUnknown === undefined) {
      const toolKey = `${toolName}\0${fingerprint}`;
      const forTool = plan.approvals.get(toolKey);
      if (forTool !== undefined) {
        decided(subject, traceApproval('approved', forTool.decidedBy, 'tool', 0, undefined, undefined, true));
        return undefined;
      }
      if (plan.callApprovedTools.has(toolKey)) {
        const hash = argumentsHash(input);
        const forCall = hash === undefined ? undefined : plan.approvals.get(`${toolKey}\0${hash}`);
        if (forCall !== undefined) {
          decided(subject, traceApproval('approved', forCall.decidedBy, 'call', 0, undefined, undefined, true));
          return undefined;
        }
      }
    }
    const handler = this.handler;
    if (handler === undefined) {
      decided(subject, traceApproval('denied', 'runtime', undefined, 0));
      throw new ToolApprovalDeniedError({ toolName, planId, denial: 'no-handler', asked: reason.text });
    }
    if (plan.ended) throw new ToolPlanEndedError({ planId, toolName });
    if (ctx.cancellationToken.isCancelled) ctx.cancellationToken.check({ toolName, planId });
    const step = subject.extra?.step;
    const request: ApprovalRequest = Object.freeze({
      ...(step === undefined ? {} : { step, ...(subject.extra?.idempotencyKey === undefined ? {} : { idempotencyKey: subject.extra.idempotencyKey }) }),
      ...(outcomeUnknown === undefined ? {} : { outcomeUnknown: Object.freeze({ ...outcomeUnknown }) }),
      id: String(++plan.requests),
      planId,
      executionId: subject.executionId,
      toolName,
      description: descriptor.description,
      source: descriptor.source,
      // What the tool can do in this plan: a sandboxed command writes in a plain plan, nothing in a read-only one.
      capability: capabilityInPlan(descriptor, ctx.policy),
      arguments: input,
      fingerprint,
      reason,
    });
    const asked = new AskedApproval(subject, request, input, plan);
    let answer: ApprovalDecision | PromiseLike<ApprovalDecision>;
    try {
      answer = handler.requestApproval(request, asked);
    } catch (error) {
      const ended = new WaitEnded('handler-failed', error);
      asked.abort(ended);
      throw this.unanswered(asked, ended);
    }
    // An answer given at once (a handler that decides by itself) needs no waiting.
    if (!isPromiseLike(answer)) return this.settle(asked, answer);
    asked.started = this.monotonic();
    const promised = answer;
    return new Promise<void>((resolve, reject) => new PendingApproval(this, asked, resolve, reject).wait(promised));
  }

  /** What the answer means for the call: the trace's approval, a denial thrown, or the approval remembered. */
  settle(asked: AskedApproval, answer: unknown): Promise<void> | undefined {
    const waitedMs = asked.started === undefined ? 0 : this.monotonic() - asked.started;
    const { subject, request } = asked;
    const { toolName, planId } = request;
    const decision = checkDecision(answer);
    if (typeof decision === 'string') {
      decided(subject, traceApproval('denied', 'runtime', undefined, waitedMs, request.id));
      throw new ToolApprovalDeniedError({
        toolName,
        planId,
        denial: 'handler-failed',
        asked: request.reason.text,
        requestId: request.id,
        cause: new TypeError(decision),
      });
    }
    const decidedBy = decision.decidedBy ?? DEFAULT_DECIDER;
    if (decision.decision === 'deny') {
      decided(subject, traceApproval('denied', decidedBy, undefined, waitedMs, request.id, decision.reason));
      throw new ToolApprovalDeniedError({
        toolName,
        planId,
        denial: 'denied',
        decidedBy,
        requestId: request.id,
        ...(decision.reason === undefined ? {} : { reason: decision.reason }),
      });
    }
    const scope = decision.scope ?? 'once';
    decided(subject, traceApproval('approved', decidedBy, scope, waitedMs, request.id));
    return scope === 'once' || request.outcomeUnknown !== undefined
      ? undefined
      : this.remember(asked.plan, planId, toolName, request.fingerprint, scope, asked.input, decidedBy);
  }

  /** The wait ended without an answer: the trace says so and the call is refused or cancelled. */
  unanswered(asked: AskedApproval, ended: unknown): unknown {
    const waitedMs = asked.started === undefined ? 0 : this.monotonic() - asked.started;
    const { subject, request } = asked;
    if (ended instanceof WaitEnded) {
      decided(subject, traceApproval('denied', 'runtime', undefined, waitedMs, request.id));
      return new ToolApprovalDeniedError({
        toolName: request.toolName,
        planId: request.planId,
        denial: ended.kind,
        asked: request.reason.text,
        requestId: request.id,
        ...(ended.kind === 'timed-out' ? { timeoutMs: this.timeoutMs } : { cause: ended.cause }),
      });
    }
    decided(subject, traceApproval('withdrawn', 'runtime', undefined, waitedMs, request.id));
    return ended;
  }

  private async remember(
    plan: PlanApprovals,
    planId: string,
    toolName: string,
    fingerprint: string,
    scope: Exclude<ApprovalScope, 'once'>,
    input: unknown,
    decidedBy: string,
  ): Promise<void> {
    const toolKey = `${toolName}\0${fingerprint}`;
    let hash: string | undefined;
    if (scope === 'call') {
      hash = argumentsHash(input);
      if (hash === undefined) {
        this.logger.warn(
          `The approval of tool '${toolName}' in plan '${planId}' holds for this call only: its arguments have no canonical JSON form to remember them by.`,
          {
            toolName,
            planId,
          },
        );
        return;
      }
      plan.callApprovedTools.add(toolKey);
      plan.approvals.set(`${toolKey}\0${hash}`, { scope, decidedBy });
    } else {
      plan.approvals.set(toolKey, { scope, decidedBy });
    }
    if (this.store === undefined) return;
    const fields: Omit<ApprovalRecord, 'signature'> = {
      version: 1,
      planId,
      toolName,
      fingerprint,
      scope,
      ...(hash === undefined ? {} : { argumentsHash: hash }),
      decidedBy,
      decidedAt: new Date(this.now()).toISOString(),
    };
    try {
      await this.store.save({ ...fields, signature: sign(fields, this.key) });
    } catch (error) {
      this.logger.warn(
        `The approval of tool '${toolName}' in plan '${planId}' could not be saved (${messageOf(error)}); it holds in this process, but a restarted plan will ask again.`,
        { toolName, planId },
      );
    }
  }

  /** Reads the plan's records from the store once, keeping those whose signature holds. */
  private async load(planId: string, plan: PlanApprovals): Promise<void> {
    let records: readonly unknown[];
    try {
      records = await (this.store as ApprovalStore).load(planId);
    } catch (error) {
      plan.storeRead = true;
      this.logger.error(
        `The approvals of plan '${planId}' could not be read from the store (${messageOf(error)}); calls that need approval will be asked about.`,
        { planId },
      );
      return;
    }
    plan.storeRead = true;
    if (!Array.isArray(records)) return;
    records.forEach((record, index) => {
      const problem = this.verify(record, planId);
      if (problem !== undefined) {
        const toolName = typeof (record as { toolName?: unknown })?.toolName === 'string' ? (record as { toolName: string }).toolName : undefined;
        this.logger.warn(
          `Approval record ${index + 1} of plan '${planId}'${toolName === undefined ? '' : ` (tool '${safeMessage(toolName, 200)}')`} was refused: ${problem}. Its calls will be asked about again.`,
          { planId, ...(toolName === undefined ? {} : { toolName }) },
        );
        return;
      }
      const valid = record as ApprovalRecord;
      const toolKey = `${valid.toolName}\0${valid.fingerprint}`;
      if (valid.scope === 'tool') {
        plan.approvals.set(toolKey, { scope: 'tool', decidedBy: valid.decidedBy });
      } else {
        plan.callApprovedTools.add(toolKey);
        plan.approvals.set(`${toolKey}\0${valid.argumentsHash as string}`, { scope: 'call', decidedBy: valid.decidedBy });
      }
    });
  }

  /** Why a record cannot be trusted, or `undefined` when it can. */
  private verify(record: unknown, planId: string): string | undefined {
    if (typeof record !== 'object' || record === null || Array.isArray(record)) return `it is ${describeValue(record)}, not a record`;
    const {
      version,
      planId: recordPlan,
      toolName,
      fingerprint,
      scope,
      argumentsHash: hash,
      decidedBy,
      decidedAt,
      signature,
    } = record as Record<string, unknown>;
    if (version !== 1) return `its version is ${describeValue(version)}, not 1`;
    if (
      typeof recordPlan !== 'string' ||
      typeof toolName !== 'string' ||
      typeof fingerprint !== 'string' ||
      (scope !== 'tool' && scope !== 'call') ||
      (scope === 'call' ? typeof hash !== 'string' : hash !== undefined) ||
      typeof decidedBy !== 'string' ||
      typeof decidedAt !== 'string' ||
      typeof signature !== 'string'
    ) {
      return 'a field is missing or has the wrong type';
    }
    if (recordPlan !== planId) return `it belongs to plan '${safeMessage(recordPlan, 200)}'`;
    const fields: Omit<ApprovalRecord, 'signature'> = {
      version: 1,
      planId: recordPlan,
      toolName,
      fingerprint,
      scope,
      ...(hash === undefined ? {} : { argumentsHash: hash as string }),
      decidedBy,
      decidedAt,
    };
    const expected = Buffer.from(sign(fields, this.key), 'utf8');
    const given = Buffer.from(signature, 'utf8');
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
      return 'its signature does not match its fields (it was edited, or signed with another key)';
    }
    return undefined;
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<ApprovalDecision> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** SHA-256 of the canonical arguments, or `undefined` when they have no canonical form. */
function argumentsHash(input: unknown): string | undefined {
  try {
    return digest(canonicalJson(input));
  } catch {
    return undefined;
  }
}

function sign(fields: Omit<ApprovalRecord, 'signature'>, key: Buffer): string {
  return createHmac('sha256', key).update(canonicalJson(fields), 'utf8').digest('base64url');
}

function keyOf(key: string | Uint8Array | undefined, hasStore: boolean): Buffer {
  if (key === undefined) {
    if (hasStore) {
      throw new ToolInvalidArgumentError({
        argument: 'approvalKey',
        expected: `a secret of at least ${MIN_KEY_BYTES} bytes when an approvalStore is given`,
        received: key,
        advice:
          "The store outlives the runtime: records are signed with this key and checked with it when a plan restarts, so it must stay the same (keep it with the service's secrets).",
      });
    }
    return randomBytes(MIN_KEY_BYTES);
  }
  const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : key instanceof Uint8Array ? Buffer.from(key) : undefined;
  if (bytes === undefined || bytes.length < MIN_KEY_BYTES) {
    throw new ToolInvalidArgumentError({
      argument: 'approvalKey',
      expected: `a secret of at least ${MIN_KEY_BYTES} bytes (a string or a Uint8Array)`,
      // Never the key itself: only its size.
      received: bytes === undefined ? key : `${bytes.length}-byte ${typeof key === 'string' ? 'string' : 'array'}`,
      advice: "Generate one with require('node:crypto').randomBytes(32).toString('base64').",
    });
  }
  return bytes;
}

/** The decision, or why the answer is not one. */
function checkDecision(answer: unknown): ApprovalDecision | string {
  if (typeof answer !== 'object' || answer === null)
    return `the handler answered ${describeValue(answer)} instead of { decision: 'approve' } or { decision: 'deny' }`;
  const { decision, scope, decidedBy, reason } = answer as Record<string, unknown>;
  if (decidedBy !== undefined && (typeof decidedBy !== 'string' || decidedBy.trim().length === 0)) {
    return `decidedBy must be a non-empty string, got ${describeValue(decidedBy)}`;
  }
  if (decision === 'approve') {
    if (scope !== undefined && scope !== 'once' && scope !== 'tool' && scope !== 'call') {
      return `scope must be 'once', 'tool' or 'call', got ${describeValue(scope)}`;
    }
    return answer as ApprovalDecision;
  }
  if (decision === 'deny') {
    if (reason !== undefined && typeof reason !== 'string') return `reason must be a string, got ${describeValue(reason)}`;
    return answer as ApprovalDecision;
  }
  return `decision must be 'approve' or 'deny', got ${describeValue(decision)}`;
}

/** Labels made safe to keep, by label: a handler names the same few deciders over and over, and redaction is costly. */
const safeLabels = new Map<string, string>();

function safeLabel(label: string): string {
  let safe = safeLabels.get(label);
  if (safe === undefined) {
    safe = safeMessage(label, 200);
    if (safeLabels.size >= 1_000) safeLabels.clear();
    safeLabels.set(label, safe);
  }
  return safe;
}

/** The frozen approval of a trace (the context records frozen parts as they are, so they are made safe here). */
function traceApproval(
  decision: ToolExecutionTraceApproval['decision'],
  decidedBy: string,
  scope: ApprovalScope | undefined,
  waitedMs: number,
  requestId?: string,
  reason?: string,
  remembered?: boolean,
): ToolExecutionTraceApproval {
  const approval: { -readonly [K in keyof ToolExecutionTraceApproval]: ToolExecutionTraceApproval[K] } = {
    decision,
    decidedBy: safeLabel(decidedBy),
    waitedMs,
  };
  if (scope !== undefined) approval.scope = scope;
  if (remembered === true) approval.remembered = true;
  if (requestId !== undefined) approval.requestId = requestId;
  if (reason !== undefined) approval.reason = safeMessage(reason);
  return Object.freeze(approval);
}
