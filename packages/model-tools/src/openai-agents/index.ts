import type { PlanContext } from '@ca/tool-context';
import { tool, type FunctionTool, type RunContext } from '@openai/agents';
import type { FrameworkApprovals } from '../approval/framework-approvals';
import { checkPlan, type ModelTools } from '../calls/model-tools';
import { abortFor, frameworkTools } from '../frameworks/framework-tools';
import { programGate } from '../frameworks/program-gate';
import { OPENAI_AGENTS_NAME_RULES } from '../names/provider-names';
import { toOpenAiStrictSchema } from '../schema/openai-strict-schema';

/** Settings of {@link createOpenAiAgentsTools}. */
export interface OpenAiAgentsToolsOptions {
  /**
   * The runtime's approval handler, when it is this bridge: each tool's
   * `needsApproval` says whether the runtime will ask, so the run stops with
   * an interruption; `state.approve(item)` (or `{ alwaysApprove: true }`, a
   * `tool` approval the runtime keeps in its `ApprovalStore`) answers the
   * runtime when the run resumes.
   */
  readonly approvals?: FrameworkApprovals;
  /** Send strict schemas where they hold the tool's meaning (default `true`). */
  readonly strict?: boolean;
  /**
   * Also cancel the plan when the Agents SDK aborts a tool call (the
   * `signal` of its tool call details: the run's signal, the tool's timeout,
   * a sibling call's failure). Default `false`: the abort cancels that call
   * only, and the plan goes on.
   */
  readonly cancelPlanOnAbort?: boolean;
}

/** Who approved, as the trace names it. */
const AGENTS_DECIDER = 'OpenAI Agents approval';

/**
 * The plan's tools as OpenAI Agents SDK function tools (`@openai/agents`
 * 0.20). Each call runs through `runtime.execute` in the plan (arguments
 * repaired first and the repairs traced); the tool's answer to the model is
 * the rendered result, or for a failure or refusal the text built for the
 * model — the run goes on. A tool the plan refuses is registered too (in
 * full with `refused: 'mark'`, else by name and reason only): the SDK ends
 * the run with `ModelBehaviorError` on a name it was not given, and the
 * runtime's refusal keeps it going. The SDK's abort signal for a call
 * cancels that call. Names follow {@link OPENAI_AGENTS_NAME_RULES}. Pass the
 * plan's `signal` to `run()` so that a cancelled plan stops the run.
 * @throws ModelToolsError when `plan` is not a plan.
 */
export async function createOpenAiAgentsTools(
  modelTools: ModelTools,
  plan: PlanContext,
  options: OpenAiAgentsToolsOptions = {},
): Promise<FunctionTool<unknown>[]> {
  checkPlan(plan);
  const approvals = options.approvals;
  const wantStrict = options.strict ?? true;
  const cancelPlanOnAbort = options.cancelPlanOnAbort ?? false;
  const tools: FunctionTool<unknown>[] = [];
  for (const entry of await frameworkTools(modelTools, plan, OPENAI_AGENTS_NAME_RULES)) {
    const { name, providerName, descriptor } = entry;
    const converted = wantStrict && !entry.refusedStub ? toOpenAiStrictSchema(entry.inputSchema) : undefined;
    const strict = converted?.strict === true;
    const parameters = (strict ? converted.schema : { additionalProperties: true, ...entry.inputSchema }) as never;
    // The program tool (code.run): the interruption is about the program's inner call that needs a person.
    const gate = entry.refusal === undefined ? programGate(modelTools, plan, approvals, name, providerName) : undefined;
    tools.push(
      tool({
        name: providerName,
        description: entry.description,
        parameters,
        strict,
        needsApproval: async (_context: RunContext<unknown>, input: unknown, callId?: string) => {
          // A refused tool's call is refused by the runtime whatever a person says: nobody is asked.
          if (approvals === undefined || entry.refusal !== undefined) return false;
          const prepared = await modelTools.prepare(name, { value: input }, { strictNulls: strict });
          if (prepared === undefined) return false;
          if (await approvals.needsApproval(descriptor, prepared.value, plan)) return true;
          return gate !== undefined && (await gate.needsApproval(input, callId, { strictNulls: strict }));
        },
        execute: async (input: unknown, runContext?: RunContext<unknown>, details?: { toolCall?: { callId?: string }; signal?: AbortSignal }) => {
          const callId = details?.toolCall?.callId;
          const abort = abortFor(details?.signal, plan, cancelPlanOnAbort, 'the OpenAI Agents SDK');
          // Approved in the run's own state (state.approve on an interruption), for this call or for the tool.
          const approved =
            approvals !== undefined &&
            runContext !== undefined &&
            callId !== undefined &&
            runContext.isToolApproved({ toolName: providerName, callId }) === true;
          const forTool = approved && runContext?.isToolApproved({ toolName: providerName, callId: `${callId}\u0000any-other-call` }) === true;
          const options = {
            providerName,
            strictNulls: strict,
            ...(abort.signal === undefined ? {} : { signal: abort.signal }),
            ...(approvals === undefined || !approved
              ? {}
              : { beforeExecute: (value: unknown) => approvals.grant(plan, name, value, { scope: forTool ? 'tool' : 'once', decidedBy: AGENTS_DECIDER }) }),
          };
          const run =
            gate === undefined
              ? modelTools.run(plan, name, { value: input }, { ...(callId === undefined ? {} : { callId }), ...options })
              : // An inner call of a program is approved for that call only, whatever the interruption's scope.
                gate.run(input, callId, approved ? { scope: 'once', decidedBy: AGENTS_DECIDER } : undefined, options);
          const outcome = await run.finally(() => abort.release());
          return outcome.rendered.text;
        },
      }) as FunctionTool<unknown>,
    );
  }
  return tools;
}
