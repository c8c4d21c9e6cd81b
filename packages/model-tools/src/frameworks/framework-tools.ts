import type { PlanContext } from '@ca/tool-context';
import { describeFor, inputSchemaOf, refusalNote, type ModelTool, type ModelTools } from '../calls/model-tools';
import type { ProviderNameRules } from '../names/provider-names';

/** A tool as a framework adapter registers it: what the model is shown of it. */
export interface FrameworkTool extends ModelTool {
  /** The description the model reads. */
  readonly description: string;
  /** The input schema the model is given. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  /**
   * True for a tool the plan's policy refuses, under `refused: 'omit'`: the
   * model is shown only its name and why it cannot be called (no parameters),
   * so that a call of it reaches the runtime — which refuses it, and the
   * model reads that it is the plan's policy — instead of the framework's
   * "no such tool" (a thrown `ModelBehaviorError` in the OpenAI Agents SDK).
   */
  readonly refusedStub: boolean;
}

/** What a refused tool's stub takes: anything, since the runtime refuses the call before it reads the arguments. A new object each time: LangChain writes into the schemas it is given. */
const stubSchema = (): Record<string, unknown> => ({ type: 'object', properties: {}, additionalProperties: true });

/**
 * Every tool of the catalog a framework adapter registers, under the
 * framework's name rules: the tools the plan may run, as the model sees them,
 * and each tool the plan refuses — marked in full with `refused: 'mark'`, or
 * as a stub (name and reason only) with `refused: 'omit'`. A framework
 * answers a name it was not given with its own "no such tool" (the OpenAI
 * Agents SDK throws `ModelBehaviorError` and ends the run), so a refused tool
 * is always registered: its call goes through `runtime.execute`, which
 * refuses it by policy and traces it, and the loop goes on.
 */
export async function frameworkTools(modelTools: ModelTools, plan: PlanContext, rules: ProviderNameRules): Promise<FrameworkTool[]> {
  const stub = modelTools.refused === 'omit';
  return (await modelTools.tools(plan, rules, { refused: 'mark' })).map((tool) =>
    tool.refusal !== undefined && stub
      ? { ...tool, description: `[Not available in this plan: ${refusalNote(tool)}. Do not call it.]`, inputSchema: stubSchema(), refusedStub: true }
      : { ...tool, description: describeFor(tool), inputSchema: inputSchemaOf(tool.descriptor), refusedStub: false },
  );
}

/** The framework's abort signal for one call, as the adapters pass it on. */
export interface CallAbort {
  /** The signal for `ExecuteOptions.signal` (this call only), when the framework gave one. */
  readonly signal?: AbortSignal;
  /** Removes what was added to the signal; call once the call has settled. */
  release(): void;
}

/**
 * Joins a framework's abort signal to one call: it cancels that call
 * (`ExecuteOptions.signal` — the tool sees its context's signal abort, and
 * the call ends with `TOOL_CANCELLED`), and the plan only when
 * `cancelPlanOnAbort` asks for it. A framework aborts a tool for more than
 * the user's stop: the AI SDK merges its per-tool and per-step timeouts into
 * that signal, the Agents SDK its tool timeout and the cancellation of a
 * sibling call. None of them means "end the plan".
 */
export function abortFor(signal: AbortSignal | undefined, plan: PlanContext, cancelPlanOnAbort: boolean, framework: string): CallAbort {
  if (typeof signal?.addEventListener !== 'function' || typeof signal.aborted !== 'boolean') return { release: () => undefined };
  if (!cancelPlanOnAbort) return { signal, release: () => undefined };
  const onAbort = (): void => plan.cancellationToken.cancel(`${framework} aborted the run`);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return { signal, release: () => signal.removeEventListener('abort', onAbort) };
}
