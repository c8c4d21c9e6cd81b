import type { PlanContext } from '@ca/tool-context';
import type { ToolSet } from 'ai' with { 'resolution-mode': 'import' };
import type { FrameworkApprovals } from '../approval/framework-approvals';
import { checkPlan, type ModelTools } from '../calls/model-tools';
import { abortFor, frameworkTools } from '../frameworks/framework-tools';
import { programGate } from '../frameworks/program-gate';
import { nameRulesOf } from '../names/provider-names';
import type { RenderedResult } from '../render/render-result';
import { ModelToolCallError } from './model-tool-call-error';

export { ModelToolCallError } from './model-tool-call-error';

/** Settings of {@link createAiSdkTools}. */
export interface AiSdkToolsOptions {
  /**
   * The runtime's approval handler, when it is this bridge: each tool's
   * `needsApproval` then says whether the runtime will ask, so the AI SDK
   * emits its `tool-approval-request` part, and its approval response
   * answers the runtime. Without it, approval is the runtime's own handler's.
   */
  readonly approvals?: FrameworkApprovals;
  /**
   * Also cancel the plan when the AI SDK aborts a tool's execution (its
   * `abortSignal`). Default `false`: the abort cancels that call — the tool
   * sees its signal abort, the call ends with `TOOL_CANCELLED` — and the plan
   * goes on, since the AI SDK aborts a tool for its per-tool and per-step
   * timeouts too, and a stopped turn is not the end of the conversation.
   */
  readonly cancelPlanOnAbort?: boolean;
}

/** Who approved, as the trace names it. */
const AI_SDK_DECIDER = 'AI SDK approval response';

/** The marker that makes a plain object an AI SDK schema (what `jsonSchema()` of `ai` returns; the same in ai 5, 6 and 7). */
const AI_SDK_SCHEMA = Symbol.for('vercel.ai.schema');

/**
 * The plan's tools as an AI SDK `ToolSet` (ai 7; ai 6 takes the same
 * objects), keyed by OpenAI-safe names. Each tool's `execute` runs the call
 * through `runtime.execute` in the plan — arguments repaired first (recorded
 * in the trace) — and resolves with the tool's output; a failure or refusal
 * rejects with a {@link ModelToolCallError} whose message is the text for the
 * model (the AI SDK hands it on as the tool error). `toModelOutput` renders
 * the result within the budget. The input schema is the tool's own, given
 * without a validator: the runtime validates, after the repair. A tool the
 * plan refuses is there too (in full with `refused: 'mark'`, else by name
 * and reason only), so that its call is refused by the runtime and the model
 * reads why. The AI SDK's abort signal cancels the call it was given to.
 * Loads nothing of `ai`.
 * @throws ModelToolsError when `plan` is not a plan.
 */
export async function createAiSdkTools(modelTools: ModelTools, plan: PlanContext, options: AiSdkToolsOptions = {}): Promise<ToolSet> {
  checkPlan(plan);
  const approvals = options.approvals;
  const cancelPlanOnAbort = options.cancelPlanOnAbort ?? false;
  const rendered = new Map<string, RenderedResult>();
  const tools: Record<string, unknown> = {};
  for (const tool of await frameworkTools(modelTools, plan, nameRulesOf('openai-chat'))) {
    const { name, providerName, descriptor } = tool;
    // The program tool (code.run): the AI SDK's approval request is about the program's inner call that needs a person.
    const gate = tool.refusal === undefined ? programGate(modelTools, plan, approvals, name, providerName) : undefined;
    // A refused tool's call is refused by the runtime whatever a person says: nobody is asked.
    const needsApproval =
      approvals === undefined || tool.refusal !== undefined
        ? undefined
        : async (input: unknown, asked?: { toolCallId?: string }): Promise<boolean> => {
            const prepared = await modelTools.prepare(name, { value: input });
            if (prepared === undefined) return false;
            if (await approvals.needsApproval(descriptor, prepared.value, plan)) return true;
            return gate !== undefined && (await gate.needsApproval(input, asked?.toolCallId));
          };
    tools[providerName] = {
      type: 'function',
      description: tool.description,
      inputSchema: { [AI_SDK_SCHEMA]: true, _type: undefined, jsonSchema: tool.inputSchema, validate: undefined },
      ...(needsApproval === undefined ? {} : { needsApproval }),
      execute: async (input: unknown, execution: { toolCallId: string; abortSignal?: AbortSignal; messages?: readonly unknown[] }) => {
        const abort = abortFor(execution?.abortSignal, plan, cancelPlanOnAbort, 'the AI SDK');
        try {
          // Granted only when the messages the AI SDK ran the call with hold the approval response for this very call.
          const approved = approvals !== undefined && approvedInMessages(execution?.messages, execution?.toolCallId);
          const options = {
            providerName,
            ...(abort.signal === undefined ? {} : { signal: abort.signal }),
            ...(approvals === undefined
              ? {}
              : {
                  beforeExecute: (value: unknown) => (approved ? approvals.grant(plan, name, value, { scope: 'once', decidedBy: AI_SDK_DECIDER }) : undefined),
                }),
          };
          const outcome =
            gate === undefined
              ? await modelTools.run(plan, name, { value: input }, { callId: execution?.toolCallId, ...options })
              : await gate.run(input, execution?.toolCallId, approved ? { scope: 'once', decidedBy: AI_SDK_DECIDER } : undefined, options);
          if (!outcome.ok) throw new ModelToolCallError(outcome);
          if (execution?.toolCallId !== undefined) rendered.set(execution.toolCallId, outcome.rendered);
          return outcome.result?.output;
        } finally {
          abort.release();
        }
      },
      toModelOutput: ({ toolCallId, output }: { toolCallId: string; output: unknown }) => {
        const kept = rendered.get(toolCallId);
        rendered.delete(toolCallId);
        return { type: 'text', value: (kept ?? modelTools.renderOutput(output)).text };
      },
    };
  }
  return tools as ToolSet;
}

/**
 * Whether the messages the AI SDK ran the call with approve it: a
 * `tool-approval-request` of an assistant message for this tool call id,
 * answered by a `tool-approval-response` with `approved: true`.
 */
function approvedInMessages(messages: readonly unknown[] | undefined, toolCallId: string | undefined): boolean {
  if (!Array.isArray(messages) || typeof toolCallId !== 'string') return false;
  const requested = new Set<string>();
  const approved = new Set<string>();
  for (const message of messages) {
    const content = (message as { content?: unknown })?.content;
    if (!Array.isArray(content)) continue;
    for (const part of content as Record<string, unknown>[]) {
      if (part?.['type'] === 'tool-approval-request' && part['toolCallId'] === toolCallId && typeof part['approvalId'] === 'string')
        requested.add(part['approvalId']);
      if (part?.['type'] === 'tool-approval-response' && part['approved'] === true && typeof part['approvalId'] === 'string') approved.add(part['approvalId']);
    }
  }
  for (const approvalId of requested) if (approved.has(approvalId)) return true;
  return false;
}
