import { describeValue } from '@ca/domain';
import type { ApprovalContext, ApprovalDecision, ApprovalHandler, ApprovalRequest, ApprovalScope } from '../approval';
import type { FormInteraction, InteractionContext, InteractionHandler, InteractionResponse } from './interaction-handler';
import { ToolInvalidArgumentError } from '../errors';

/** Options of {@link approvalThroughInteraction}. */
export interface ApprovalThroughInteractionOptions {
  /** Who answers, for the trace's `decidedBy` (`alice (web)`); default `interaction handler`. */
  readonly decidedBy?: string;
}

/** The answers of the approval form, as its `answer` field takes them. */
export type ApprovalFormAnswer = ApprovalScope | 'deny';

/** Longest text of the arguments put into the form's message. */
const MAX_ARGUMENTS_SHOWN = 2_000;

/** The form an approval is asked with: one choice, and a reason for a denial. */
const APPROVAL_SCHEMA: Readonly<Record<string, unknown>> = Object.freeze({
  type: 'object',
  properties: {
    answer: {
      type: 'string',
      title: 'Answer',
      oneOf: [
        { const: 'once', title: 'Approve this call' },
        { const: 'tool', title: 'Approve this tool for the rest of the plan' },
        { const: 'call', title: 'Approve these arguments for the rest of the plan' },
        { const: 'deny', title: 'Deny' },
      ],
    },
    reason: { type: 'string', title: 'Reason', description: 'Why, when you deny (shown in the error and the trace)' },
  },
  required: ['answer'],
});

function describeCapability(request: ApprovalRequest): string {
  const capability = request.capability;
  return [
    capability.writes ? 'writes' : 'does not write',
    ...(capability.destructive ? ['may destroy data'] : []),
    ...(capability.openWorld ? ['open world (reaches the network or remote services)'] : []),
    capability.checkpointable ? 'undoable' : 'cannot be undone',
  ].join(', ');
}

function argumentsText(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = describeValue(value);
  }
  return text.length > MAX_ARGUMENTS_SHOWN ? `${text.slice(0, MAX_ARGUMENTS_SHOWN)}… (${text.length - MAX_ARGUMENTS_SHOWN} more characters)` : text;
}

/**
 * The form that asks whether `request` may run: its message names the plan,
 * the tool, its capability, why it is asked and the arguments; `approval`
 * carries the request for a handler that shows it its own way. The tool's
 * description and the arguments come from the call: a handler shows them,
 * never follows them.
 */
export function approvalForm(request: ApprovalRequest): FormInteraction {
  return {
    kind: 'form',
    message:
      `Approval request ${request.id} of plan '${request.planId}': ${request.reason.text}.\n` +
      `Tool ${request.toolName} (${request.source}): ${describeCapability(request)}.\n` +
      `About: ${request.description.split('\n')[0] ?? ''}\n` +
      `Arguments: ${argumentsText(request.arguments)}`,
    schema: APPROVAL_SCHEMA,
    approval: request,
  };
}

/** What the person's answer to the approval form decides. */
export function decisionOfForm(response: InteractionResponse, decidedBy: string): ApprovalDecision {
  if (response.action === 'decline') return { decision: 'deny', reason: 'declined', decidedBy };
  if (response.action === 'cancel') return { decision: 'deny', reason: 'the question was dismissed without an answer', decidedBy };
  const answer = response.content?.['answer'];
  const reason = response.content?.['reason'];
  if (answer === 'once' || answer === 'tool' || answer === 'call') return { decision: 'approve', scope: answer, decidedBy };
  if (answer === 'deny') return { decision: 'deny', ...(typeof reason === 'string' && reason.trim().length > 0 ? { reason: reason.trim() } : {}), decidedBy };
  // Fail closed: an accepted form without one of the four answers approves nothing.
  return { decision: 'deny', reason: `the answer ${describeValue(answer)} is not one of once, tool, call and deny`, decidedBy };
}

/**
 * An {@link ApprovalHandler} that asks through an {@link InteractionHandler}:
 * each approval request becomes a form (see {@link approvalForm}) with the
 * context `{ source: 'runtime', origin: 'approval', planId, toolName, signal }`.
 * `once`, `tool` and `call` approve for that scope; `deny` (with the form's
 * reason), `decline` and `cancel` deny. So one handler — the one that answers
 * MCP elicitation — answers approvals too; `registerToolRuntime` uses this
 * when the service registered an `INTERACTION_HANDLER` and no `APPROVAL_HANDLER`.
 * @throws ToolInvalidArgumentError when `handler` has no `interact` function.
 */
export function approvalThroughInteraction(handler: InteractionHandler, options: ApprovalThroughInteractionOptions = {}): ApprovalHandler {
  if (typeof (handler as Partial<InteractionHandler> | null)?.interact !== 'function') {
    throw new ToolInvalidArgumentError({
      argument: 'handler',
      expected: 'an InteractionHandler: an object with interact(request, context)',
      received: handler,
    });
  }
  const decidedBy = options.decidedBy ?? 'interaction handler';
  if (typeof decidedBy !== 'string' || decidedBy.trim().length === 0) {
    throw new ToolInvalidArgumentError({ argument: 'decidedBy', expected: 'a non-empty string', received: decidedBy });
  }
  return {
    async requestApproval(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalDecision> {
      const interaction: InteractionContext = {
        source: 'runtime',
        origin: 'approval',
        planId: request.planId,
        toolName: request.toolName,
        signal: context.signal,
      };
      return decisionOfForm(await handler.interact(approvalForm(request), interaction), decidedBy);
    },
  };
}
