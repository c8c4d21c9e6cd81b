import { describeValue } from '@ca/domain';
import {
  approvalThroughInteraction,
  silentLogger,
  type ApprovalContext,
  type ApprovalDecision,
  type ApprovalHandler,
  type ApprovalRequest,
  type InteractionContext,
  type InteractionHandler,
  type InteractionRequest,
  type InteractionResponse,
  type RuntimeLogger,
  type SamplingContext,
  type SamplingHandler,
  type SamplingRequest,
  type SamplingResult,
} from '@ca/tool-lifecycle';
import { invalidArgument } from '../errors/mcp-gateway-error';
import type { StatelessQuestions } from '../gateway/session-profile';

/**
 * The MCP client of one session, as the gateway's handlers reach it: what it
 * declared it can do, and the requests the gateway sends it. @internal
 */
export interface ClientChannel {
  /** The client's name and version, for traces (`claude-code 1.2.3`). */
  readonly clientName: string;
  /** The session's own id (HTTP sessions): the same on every replica of a fleet that serves it. */
  readonly sessionId?: string;
  /** A 2026-07-28 request's client, asked through the answer (`input_required`) rather than by a request of the server. */
  readonly inputs?: StatelessQuestions;
  /** Whether the client declared elicitation of this kind. */
  canAsk(kind: InteractionRequest['kind']): boolean;
  /** Whether the client declared sampling. */
  canSample(): boolean;
  /** `elicitation/create` on the client, tied to the tool call in flight when there is one. */
  ask(request: InteractionRequest, context: InteractionContext): Promise<InteractionResponse>;
  /** `sampling/createMessage` on the client. */
  sample(request: SamplingRequest, context: SamplingContext): Promise<SamplingResult>;
}

/** An approval a person gave for the rest of a session's plan: its scope, and who gave it. @internal */
export interface SharedApproval {
  readonly scope: 'tool' | 'call';
  readonly decidedBy: string;
}

/**
 * Approvals a person gave "for the rest of the plan" in one session, known to
 * every replica of a fleet that serves the session (each runs it in a plan of
 * its own). @internal
 */
export interface SessionApprovals {
  /** The approval given for this call's tool (or these arguments) in the session, on any replica. */
  find(sessionId: string, request: ApprovalRequest): SharedApproval | undefined;
  /** Makes an approval given here known to the other replicas. */
  remember(sessionId: string, request: ApprovalRequest, approval: SharedApproval): void;
}

/** Options of {@link GatewayClients}. */
export interface GatewayClientsOptions {
  /**
   * Who decides an approval when the session's client cannot be asked (it
   * declares no elicitation): `--approve` patterns, the service's own
   * handler. Without one such calls are denied, and the denial says what
   * would let them run. The runtime's rules decide first in every case.
   */
  readonly fallbackApprovals?: ApprovalHandler;
  /** Where the gateway logs what it asked and why it could not (default: nowhere). */
  readonly logger?: RuntimeLogger;
}

/**
 * Routes what the runtime and the upstream servers want to ask a person, or
 * a model, to the MCP client of the plan it comes from: each session of the
 * gateway is one plan, so a request's `planId` names its client.
 *
 * - `interactionHandler`: upstream elicitation (a form, a page to open) is
 *   asked of the client through its own elicitation, when it declared that
 *   kind; otherwise declined.
 * - `approvalHandler`: an approval the plan needs is a form asked of the
 *   client (`approvalThroughInteraction`) when it declared form elicitation;
 *   otherwise the fallback decides (`--approve`), else it is denied.
 * - `samplingHandler`: upstream sampling is asked of the client's model when
 *   it declared sampling; otherwise refused.
 *
 * Made before the runtime (the runtime and the MCP adapter take its
 * handlers), handed to the {@link McpGateway}, which attaches each session.
 */
export class GatewayClients {
  readonly interactionHandler: InteractionHandler;
  readonly samplingHandler: SamplingHandler;
  readonly approvalHandler: ApprovalHandler;
  private readonly channels = new Map<string, ClientChannel>();
  private readonly logger: RuntimeLogger;
  private shared: SessionApprovals | undefined;

  /** @throws McpGatewayError (`GATEWAY_INVALID_ARGUMENT`) for a fallback that is not an approval handler. */
  constructor(options: GatewayClientsOptions = {}) {
    const fallback = options.fallbackApprovals;
    if (fallback !== undefined && typeof fallback?.requestApproval !== 'function') {
      throw invalidArgument('fallbackApprovals', 'an ApprovalHandler: an object with requestApproval(request, context)', describeValue(fallback));
    }
    this.logger = options.logger ?? silentLogger;
    this.interactionHandler = { interact: (request, context) => this.interact(request, context) };
    this.samplingHandler = { createMessage: (request, context) => this.createMessage(request, context) };
    this.approvalHandler = { requestApproval: (request, context) => this.requestApproval(request, context, fallback) };
  }

  /** Routes the requests of `planId` to `channel` until the returned function is called. @internal */
  attach(planId: string, channel: ClientChannel): () => void {
    this.channels.set(planId, channel);
    return () => {
      if (this.channels.get(planId) === channel) this.channels.delete(planId);
    };
  }

  private async interact(request: InteractionRequest, context: InteractionContext): Promise<InteractionResponse> {
    const channel = context.planId === undefined ? undefined : this.channels.get(context.planId);
    const during = `${context.source} '${context.origin}'${context.toolName === undefined ? '' : ` (tool '${context.toolName}')`}`;
    if (channel === undefined) {
      this.logger.warn(`${during} asked a person something outside any session of the MCP gateway; it was declined.`, { planId: context.planId });
      return { action: 'decline' };
    }
    if (!channel.canAsk(request.kind)) {
      this.logger.info(`${during} asked a person something (${request.kind}); the MCP client ${channel.clientName} cannot be asked that, so it was declined.`, {
        planId: context.planId,
      });
      return { action: 'decline' };
    }
    return channel.ask(request, context);
  }

  private async createMessage(request: SamplingRequest, context: SamplingContext): Promise<SamplingResult> {
    const channel = this.channels.get(context.planId);
    if (channel === undefined) throw new Error(`the request came outside any session of the MCP gateway (plan '${context.planId}')`);
    if (!channel.canSample()) throw new Error(`the MCP client ${channel.clientName} of the gateway's session declares no sampling`);
    return channel.sample(request, context);
  }

  /**
   * @internal Shares the approvals given "for the rest of the plan" between
   * the replicas that serve a session (`serveHttp` with a fleet whose
   * registry can broadcast); `undefined` stops it.
   */
  shareApprovals(shared: SessionApprovals | undefined): void {
    this.shared = shared;
  }

  private async requestApproval(request: ApprovalRequest, context: ApprovalContext, fallback: ApprovalHandler | undefined): Promise<ApprovalDecision> {
    const channel = this.channels.get(request.planId);
    // A call whose outcome is unknown (a resumed plan) is always asked about: no earlier approval answers it.
    const sessionId = request.outcomeUnknown === undefined ? channel?.sessionId : undefined;
    const shared = sessionId === undefined ? undefined : this.shared;
    if (shared !== undefined && sessionId !== undefined) {
      const known = shared.find(sessionId, request);
      if (known !== undefined) return { decision: 'approve', scope: known.scope, decidedBy: `${known.decidedBy}, for the session on another replica` };
    }
    const inputs = channel?.inputs;
    if (channel !== undefined && inputs !== undefined) {
      // MCP 2026-07-28: the answer given in an earlier round, or the question kept for this round's input_required answer (the call waits for the retry).
      const asked = approvalThroughInteraction(
        { interact: async (form) => inputs.answer(form, request) ?? { action: 'cancel' } },
        { decidedBy: `${channel.clientName} (MCP client)` },
      );
      return asked.requestApproval(request, context);
    }
    if (channel !== undefined && channel.canAsk('form')) {
      const asked = approvalThroughInteraction(
        { interact: (form, interaction) => channel.ask(form, interaction) },
        { decidedBy: `${channel.clientName} (MCP client)` },
      );
      const decision = await asked.requestApproval(request, context);
      if (shared !== undefined && sessionId !== undefined && decision.decision === 'approve' && (decision.scope === 'tool' || decision.scope === 'call')) {
        shared.remember(sessionId, request, { scope: decision.scope, decidedBy: decision.decidedBy ?? channel.clientName });
      }
      return decision;
    }
    if (fallback !== undefined) return fallback.requestApproval(request, context);
    const client =
      channel === undefined ? 'no MCP client is connected to this plan' : `the MCP client ${channel.clientName} declares no elicitation to ask a person with`;
    return {
      decision: 'deny',
      reason: `${client}; start the gateway with an --approve pattern for '${request.toolName}', add an allow rule for it, or use a client that supports elicitation`,
      decidedBy: 'MCP gateway',
    };
  }
}
