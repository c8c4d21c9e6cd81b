import type { PlanContext } from '@ca/tool-context';
import { ToolMessage } from '@langchain/core/messages';
import { DynamicStructuredTool, ToolInputParsingException } from '@langchain/core/tools';
// The tools' type as ES modules see it (langchain is used from ES modules): a CommonJS copy of the class's type does not fit its agents.
import type { StructuredToolInterface } from '@langchain/core/tools' with { 'resolution-mode': 'import' };
import type { FrameworkApproval, FrameworkApprovals } from '../approval/framework-approvals';
import { checkPlan, type ModelToolCallOutcome, type ModelTools } from '../calls/model-tools';
import { abortFor, frameworkTools } from '../frameworks/framework-tools';
import { programGate } from '../frameworks/program-gate';
import { nameRulesOf } from '../names/provider-names';
import { heldApprovalsOf } from './held-approvals';

/** What a person answers to a LangGraph interrupt raised for a call that needs approval. */
export type LangChainApprovalAnswer =
  | { readonly decision: 'approve'; readonly scope?: 'once' | 'tool'; readonly decidedBy?: string }
  | { readonly decision: 'deny'; readonly reason?: string; readonly decidedBy?: string };

/** The value of the interrupt a tool raises when its call needs approval (what `__interrupt__` shows). */
export interface LangChainApprovalRequest {
  readonly type: 'ca.tool-approval';
  /** The tool's name as the model knows it. */
  readonly tool: string;
  /** The arguments, repaired, as they will run. */
  readonly arguments: unknown;
  readonly planId: string;
  readonly description: string;
  /**
   * Set when the call waiting is a program's inner call: the program tool's
   * name as the model knows it, and the inner call's step. `tool` and
   * `arguments` are then the inner call's (the runtime's tool name), which
   * is what the person approves; the program goes on once they have.
   */
  readonly program?: { readonly tool: string; readonly step: string };
}

/** Settings of {@link createLangChainTools}. */
export interface LangChainToolsOptions {
  /**
   * The runtime's approval handler, when it is this bridge. A call approved
   * in the middleware of {@link createLangChainApprovalMiddleware} (given the
   * same bridge) answers the runtime's question about that very call.
   */
  readonly approvals?: FrameworkApprovals;
  /**
   * `interrupt` of `@langchain/langgraph` (the graph needs a checkpointer),
   * for the runtime's own approval request inside the tool: a call the
   * runtime will ask about that the middleware did not approve stops the
   * graph with a {@link LangChainApprovalRequest}; resuming with a
   * {@link LangChainApprovalAnswer} answers the runtime — with a scope
   * (`tool`: the rest of the plan, kept in the runtime's store), who decided
   * and a reason for a denial, which LangChain's middleware protocol has no
   * field for.
   */
  readonly interrupt?: (value: LangChainApprovalRequest) => unknown;
  /**
   * Also cancel the plan when LangChain aborts a tool call (the `signal` of
   * the run's config). Default `false`: the abort cancels that call only.
   */
  readonly cancelPlanOnAbort?: boolean;
}

/** What a LangChain tool's function gets as its config. */
interface ToolConfig {
  readonly toolCall?: { readonly id?: string };
  readonly signal?: AbortSignal;
  readonly configurable?: { readonly thread_id?: unknown };
}

type ToolCallLike = { readonly type?: string; readonly id?: string; readonly name?: string; readonly args: unknown };

function isToolCall(value: unknown): value is ToolCallLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    'args' in value &&
    ((value as ToolCallLike).type === 'tool_call' || typeof (value as ToolCallLike).id === 'string')
  );
}

/** The approval a LangGraph interrupt's answer gives: approved (once, or for the tool), or denied with the person's reason. */
function approvalOf(reply: LangChainApprovalAnswer | undefined): FrameworkApproval {
  const decidedBy = typeof reply?.decidedBy === 'string' && reply.decidedBy.length > 0 ? reply.decidedBy : 'LangGraph interrupt';
  return reply?.decision === 'approve'
    ? { scope: reply.scope === 'tool' ? 'tool' : 'once', decidedBy }
    : { scope: 'once', decidedBy, denied: reply?.decision === 'deny' && reply.reason !== undefined ? { reason: reply.reason } : {} };
}

/**
 * The plan's tools as LangChain tools (`@langchain/core` 1.x structured
 * tools). The model's arguments are repaired before LangChain validates
 * them; each call runs through `runtime.execute` in the plan; a failure or
 * refusal answers the model with a `ToolMessage` of status `error` whose text
 * is built for the model. A tool the plan refuses is there too (in full with
 * `refused: 'mark'`, else by name and reason only), so that its call is
 * refused by the runtime and the model reads why, instead of LangChain's
 * "not a valid tool". The abort signal of the run's config cancels the call
 * it reaches. Pass the plan's `signal` in the run's config so that a
 * cancelled plan stops the graph.
 * @throws ModelToolsError when `plan` is not a plan.
 */
export async function createLangChainTools(modelTools: ModelTools, plan: PlanContext, options: LangChainToolsOptions = {}): Promise<StructuredToolInterface[]> {
  checkPlan(plan);
  const { approvals, interrupt } = options;
  const cancelPlanOnAbort = options.cancelPlanOnAbort ?? false;
  const tools: DynamicStructuredTool[] = [];
  for (const entry of await frameworkTools(modelTools, plan, nameRulesOf('openai-chat'))) {
    const { name, providerName, descriptor } = entry;
    // The program tool (code.run): what a person approves is the program's inner call that needs one.
    const gate = entry.refusal === undefined ? programGate(modelTools, plan, approvals, name, providerName) : undefined;
    // What the model sent, by the repaired object LangChain validates and passes on: the repairs are made again, and traced, by run().
    const sent = new WeakMap<object, unknown>();

    const answer = (outcome: ModelToolCallOutcome, toolCallId: string | undefined): string | ToolMessage =>
      outcome.ok || toolCallId === undefined
        ? outcome.rendered.text
        : new ToolMessage({ content: outcome.rendered.text, tool_call_id: toolCallId, name: providerName, status: 'error' });

    const func = async (input: unknown, _runManager?: unknown, config?: ToolConfig): Promise<string | ToolMessage> => {
      const raw = typeof input === 'object' && input !== null && sent.has(input) ? sent.get(input) : input;
      const toolCallId = config?.toolCall?.id;
      let beforeExecute: ((value: unknown) => (() => void) | undefined) | undefined;
      let innerApproval: FrameworkApproval | undefined;
      // A refused tool's call is refused by the runtime whatever a person says: nobody is asked.
      const held =
        approvals === undefined || entry.refusal !== undefined
          ? undefined
          : heldApprovalsOf(approvals).take(plan.planId, config?.configurable?.thread_id, toolCallId, providerName, raw);
      if (held !== undefined && approvals !== undefined) {
        // Approved (or edited and approved) for this very call in the middleware: that answers the runtime, which still checks it.
        beforeExecute = (value) => approvals.grant(plan, name, value, { scope: 'once', decidedBy: held.decidedBy });
        innerApproval = { scope: 'once', decidedBy: held.decidedBy };
      } else if (approvals !== undefined && interrupt !== undefined && entry.refusal === undefined) {
        const prepared = await modelTools.prepare(name, { value: raw });
        const own = prepared !== undefined && (await approvals.needsApproval(descriptor, prepared.value, plan));
        // A program that stops at an inner call needing a person: the interrupt is about that call (LangGraph runs this again on resume: answered from what was found).
        const pending = !own && gate !== undefined && (await gate.needsApproval(raw, toolCallId)) ? gate.pending(toolCallId) : undefined;
        if (pending !== undefined) {
          const reply = interrupt({
            type: 'ca.tool-approval',
            tool: pending.toolName,
            arguments: pending.input,
            planId: plan.planId,
            description: `An inner call (${pending.step}) of the program ${providerName} runs`,
            program: { tool: providerName, step: pending.step },
          }) as LangChainApprovalAnswer | undefined;
          innerApproval = approvalOf(reply);
        } else if (prepared !== undefined && own) {
          // LangGraph runs the tool again on resume; interrupt() then returns the person's answer.
          const reply = interrupt({
            type: 'ca.tool-approval',
            tool: providerName,
            arguments: prepared.value,
            planId: plan.planId,
            description: descriptor.description,
          }) as LangChainApprovalAnswer | undefined;
          const approval = approvalOf(reply);
          beforeExecute = (value) => approvals.grant(plan, name, value, approval);
        }
      }
      const abort = abortFor(config?.signal, plan, cancelPlanOnAbort, 'LangChain');
      try {
        const options = {
          providerName,
          ...(beforeExecute === undefined ? {} : { beforeExecute }),
          ...(abort.signal === undefined ? {} : { signal: abort.signal }),
        };
        const outcome =
          gate === undefined
            ? await modelTools.run(plan, name, { value: raw }, { ...(toolCallId === undefined ? {} : { callId: toolCallId }), ...options })
            : await gate.run(raw, toolCallId, innerApproval, options);
        return answer(outcome, toolCallId);
      } finally {
        abort.release();
      }
    };

    class RuntimeTool extends DynamicStructuredTool {
      override async call(arg: unknown, configArg?: unknown, tags?: string[]): ReturnType<DynamicStructuredTool['call']> {
        const raw = isToolCall(arg) ? arg.args : arg;
        const prepared = await modelTools.prepare(name, { value: raw });
        const repaired = prepared?.value ?? raw;
        if (typeof repaired === 'object' && repaired !== null) sent.set(repaired, raw);
        try {
          return await super.call((isToolCall(arg) ? { ...arg, args: repaired } : repaired) as never, configArg as never, tags);
        } catch (error) {
          if (!(error instanceof ToolInputParsingException)) throw error;
          // Still not valid after the repair: the runtime validates and traces it, and the model reads why.
          const toolCallId = isToolCall(arg) ? arg.id : undefined;
          const signal = (configArg as ToolConfig | undefined)?.signal;
          const outcome = await modelTools.run(
            plan,
            name,
            { value: raw },
            { providerName, ...(toolCallId === undefined ? {} : { callId: toolCallId }), ...(signal === undefined ? {} : { signal }) },
          );
          return answer(outcome, toolCallId);
        }
      }
    }

    tools.push(new RuntimeTool({ name: providerName, description: entry.description, schema: entry.inputSchema as never, func: func as never }));
  }
  return tools as unknown as StructuredToolInterface[];
}
