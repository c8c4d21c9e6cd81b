import type { PlanContext } from '@ca/tool-context';
import { tool, type FunctionTool, type RunContext } from '@openai/agents';
import type { FrameworkApprovals } from '../approval/framework-approvals';
import { checkPlan, describeFor, inputSchemaOf, type ModelTools } from '../calls/model-tools';
import type { ProviderNameRules } from '../names/provider-names';
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
}

// The Agents SDK turns every character but letters and digits of a tool name into '_'.
const AGENTS_NAME_RULES: ProviderNameRules = Object.freeze({ maxLength: 64, allowed: /[A-Za-z0-9_]/ });

/**
 * The plan's tools as OpenAI Agents SDK function tools (`@openai/agents`
 * 0.20). Each call runs through `runtime.execute` in the plan (arguments
 * repaired first and the repairs traced); the tool's answer to the model is
 * the rendered result, or for a failure or refusal the text built for the
 * model — the run goes on. Pass the plan's `signal` to `run()` so that a
 * cancelled plan stops the run.
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
  const tools: FunctionTool<unknown>[] = [];
  for (const entry of await modelTools.tools(plan, AGENTS_NAME_RULES)) {
    const { name, providerName, descriptor } = entry;
    const converted = wantStrict ? toOpenAiStrictSchema(inputSchemaOf(descriptor)) : undefined;
    const strict = converted?.strict === true;
    const parameters = (strict ? converted.schema : { additionalProperties: true, ...inputSchemaOf(descriptor) }) as never;
    tools.push(
      tool({
        name: providerName,
        description: describeFor(entry),
        parameters,
        strict,
        needsApproval: async (_context: RunContext<unknown>, input: unknown) => {
          if (approvals === undefined) return false;
          const prepared = await modelTools.prepare(name, { value: input }, { strictNulls: strict });
          return prepared !== undefined && (await approvals.needsApproval(descriptor, prepared.value, plan));
        },
        execute: async (input: unknown, runContext?: RunContext<unknown>, details?: { toolCall?: { callId?: string } }) => {
          const callId = details?.toolCall?.callId;
          const outcome = await modelTools.run(
            plan,
            name,
            { value: input },
            {
              providerName,
              strictNulls: strict,
              ...(callId === undefined ? {} : { callId }),
              ...(approvals === undefined || runContext === undefined || callId === undefined
                ? {}
                : {
                    beforeExecute: (value: unknown) => {
                      // Approved in the run's own state (state.approve on an interruption), for this call or for the tool.
                      if (runContext.isToolApproved({ toolName: providerName, callId }) !== true) return undefined;
                      const forTool = runContext.isToolApproved({ toolName: providerName, callId: `${callId}\u0000any-other-call` }) === true;
                      return approvals.grant(plan, name, value, { scope: forTool ? 'tool' : 'once', decidedBy: 'OpenAI Agents approval' });
                    },
                  }),
            },
          );
          return outcome.rendered.text;
        },
      }) as FunctionTool<unknown>,
    );
  }
  return tools;
}
