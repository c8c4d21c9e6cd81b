import type { PlanContext } from '@ca/tool-context';
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
// Types only, as ES modules see them (langchain is used from ES modules); the package itself is loaded when a middleware is made.
import type { humanInTheLoopMiddleware, InterruptOnConfig } from 'langchain' with { 'resolution-mode': 'import' };
import type { FrameworkApprovals } from '../approval/framework-approvals';
import { checkPlan, type ModelTools } from '../calls/model-tools';
import { callStart, recordFrontDoorTrace } from '../calls/front-door-trace';
import { ModelToolsError } from '../errors/model-tools-error';
import { frameworkTools, type FrameworkTool } from '../frameworks/framework-tools';
import { programGate, type ProgramGate } from '../frameworks/program-gate';
import { nameRulesOf } from '../names/provider-names';
import { heldApprovalsOf } from './held-approvals';

/** The middleware {@link createLangChainApprovalMiddleware} returns: LangChain's own `humanInTheLoopMiddleware`, joined to the runtime. */
export type LangChainApprovalMiddleware = ReturnType<typeof humanInTheLoopMiddleware>;

type DecisionType = 'approve' | 'edit' | 'reject';

/** Settings of {@link createLangChainApprovalMiddleware}. */
export interface LangChainApprovalMiddlewareOptions {
  /** The runtime's approval handler — the same bridge given to `createLangChainTools`. */
  readonly approvals: FrameworkApprovals;
  /**
   * Your own `humanInTheLoopMiddleware` configuration (`interruptOn`, by the
   * tools' names as the model knows them), merged in: one middleware asks
   * once about a call that either your configuration or the runtime's rules
   * gate. Entries for other tools of the agent pass through as they are.
   */
  readonly interruptOn?: Readonly<Record<string, boolean | InterruptOnConfig>>;
  /** As `humanInTheLoopMiddleware`'s: the first line of a request's default description. */
  readonly descriptionPrefix?: string;
  /** The decisions offered for a call only the runtime's rules ask about (default approve, edit, reject). */
  readonly allowedDecisions?: readonly DecisionType[];
  /** Who decided, as the runtime's trace names it (default `LangChain human-in-the-loop`); the middleware's decisions say nothing of who. */
  readonly decidedBy?: string;
}

const ALL_DECISIONS: readonly DecisionType[] = Object.freeze(['approve', 'edit', 'reject']);
const DEFAULT_DECIDER = 'LangChain human-in-the-loop';

type ToolCallLike = { readonly id?: string; readonly name: string; readonly args: Record<string, unknown> };
type HookRequest = { readonly toolCall: ToolCallLike; readonly [key: string]: unknown };
type Hook = (state: { messages: BaseMessage[] }, runtime: { configurable?: { thread_id?: unknown } }) => Promise<unknown>;

/**
 * LangChain's human-in-the-loop middleware (`humanInTheLoopMiddleware` of
 * `langchain`), configured from the runtime: a call the runtime will ask
 * about — an `ask` rule of the service, the plan's `policy.approval` — stops
 * the agent with the middleware's own interrupt (`actionRequests`,
 * `reviewConfigs`: what a LangChain UI already renders), and the person's
 * decision (`new Command({ resume: { decisions: [...] } })`) answers the
 * runtime for that very call: `approve` runs it once; `edit` runs the edited
 * call, which the runtime validates and binds the approval to as any other;
 * `reject` runs nothing, the model reads the message, and the plan's traces
 * record the rejection. Give it your own `interruptOn` to gate more tools:
 * there is one middleware, and it asks once. It keeps the middleware's name,
 * so `createAgent` refuses a second `humanInTheLoopMiddleware` beside it
 * (which would ask twice) at once.
 *
 * Needs `langchain` 1.x (an optional peer dependency) and a checkpointer.
 * @throws ModelToolsError when `plan` is not a plan, `approvals` is missing, or `langchain` is not installed.
 */
export async function createLangChainApprovalMiddleware(
  modelTools: ModelTools,
  plan: PlanContext,
  options: LangChainApprovalMiddlewareOptions,
): Promise<LangChainApprovalMiddleware> {
  checkPlan(plan);
  const approvals = options?.approvals;
  if (typeof approvals?.needsApproval !== 'function' || typeof approvals.grant !== 'function') {
    throw new ModelToolsError({
      problem: 'invalid-argument',
      field: 'options.approvals',
      expected: 'the FrameworkApprovals the runtime was given as its approval handler',
      received: approvals === undefined ? 'nothing' : 'something else',
    });
  }
  const langchain = loadLangChain();
  const decidedBy = typeof options.decidedBy === 'string' && options.decidedBy.length > 0 ? options.decidedBy : DEFAULT_DECIDER;
  const offered = options.allowedDecisions ?? ALL_DECISIONS;
  const held = heldApprovalsOf(approvals);
  const ours = new Map<string, FrameworkTool>();
  for (const tool of await frameworkTools(modelTools, plan, nameRulesOf('openai-chat'))) ours.set(tool.providerName, tool);
  // The program tool (code.run): the request is about the program's inner call that needs a person.
  let program: { readonly providerName: string; readonly gate: ProgramGate } | undefined;
  for (const tool of ours.values()) {
    const gate = tool.refusal === undefined ? programGate(modelTools, plan, approvals, tool.name, tool.providerName) : undefined;
    if (gate !== undefined) program = { providerName: tool.providerName, gate };
  }

  /** Whether the runtime will ask about this call (a refused tool is refused, never asked about). */
  const runtimeAsks = async (toolCall: ToolCallLike): Promise<boolean> => {
    const tool = ours.get(toolCall.name);
    if (tool === undefined || tool.refusal !== undefined) return false;
    const prepared = await modelTools.prepare(tool.name, { value: toolCall.args });
    if (prepared === undefined) return false;
    if (await approvals.needsApproval(tool.descriptor, prepared.value, plan)) return true;
    return program?.providerName === toolCall.name && (await program.gate.needsApproval(toolCall.args, toolCall.id));
  };

  // The decision for each call of the model's message, made once per pass of the hook (the middleware asks `when` again).
  const asked = new WeakMap<object, boolean>();
  const interruptOn: Record<string, boolean | InterruptOnConfig> = { ...options.interruptOn };
  const decide = async (name: string, request: HookRequest): Promise<boolean> => {
    const own = options.interruptOn?.[name];
    const yours = own === true || (typeof own === 'object' && own !== null && (typeof own.when !== 'function' || (await own.when(request as never))));
    return yours || (await runtimeAsks(request.toolCall));
  };
  for (const providerName of ours.keys()) {
    const own = options.interruptOn?.[providerName];
    let base: InterruptOnConfig = typeof own === 'object' && own !== null ? own : { allowedDecisions: [...(own === true ? ALL_DECISIONS : offered)] };
    if (program?.providerName === providerName && (typeof own !== 'object' || own === null)) {
      // An edited program is another program: the person answers for the inner call shown, so approve or reject.
      const gate = program.gate;
      const prefix = options.descriptionPrefix ?? 'Tool execution requires approval';
      base = {
        allowedDecisions: [...offered].filter((decision) => decision !== 'edit'),
        description: (toolCall) => programDescription(prefix, providerName, gate, toolCall as ToolCallLike),
      };
    }
    interruptOn[providerName] = {
      ...base,
      when: async (request) => asked.get(request.toolCall) ?? decide(providerName, request as unknown as HookRequest),
    };
  }

  const inner = langchain.humanInTheLoopMiddleware({
    interruptOn,
    ...(options.descriptionPrefix === undefined ? {} : { descriptionPrefix: options.descriptionPrefix }),
  });
  const innerHook = hookOf(inner.afterModel);
  const hook: Hook = async (state, runtime) => {
    const last = [...(state?.messages ?? [])].reverse().find((message) => AIMessage.isInstance(message)) as AIMessage | undefined;
    const calls = (last?.tool_calls ?? []) as ToolCallLike[];
    const gated: ToolCallLike[] = [];
    for (const call of calls) {
      if (!ours.has(call.name)) continue;
      const ask = await decide(call.name, { toolCall: call, tool: undefined, state, runtime });
      asked.set(call, ask);
      if (ask) gated.push(call);
    }
    const start = callStart();
    // Interrupts on the first pass; on the resume pass, returns the message with the calls revised by the person's decisions.
    const update = (await innerHook(state, runtime)) as { messages?: unknown[] } | undefined;
    if (update === undefined || gated.length === 0) return update;
    const revised = ((last?.tool_calls ?? []) as ToolCallLike[]).filter((call) => call !== undefined);
    const threadId = runtime?.configurable?.thread_id;
    for (const call of gated) {
      const rejection = (update.messages ?? []).find((message) => ToolMessage.isInstance(message) && message.tool_call_id === call.id) as
        ToolMessage | undefined;
      const tool = ours.get(call.name) as FrameworkTool;
      if (rejection !== undefined) {
        // Refused before the pipeline: the runtime never sees it, so the front door traces it, with the person's message.
        const reason = typeof rejection.content === 'string' ? rejection.content : undefined;
        recordFrontDoorTrace(plan, start, {
          toolName: tool.name,
          error: {
            name: 'ToolApprovalDeniedError',
            code: 'TOOL_APPROVAL_DENIED',
            message: `Tool '${tool.name}' in plan '${plan.planId}' was rejected through LangChain's human-in-the-loop middleware; the call was not run.`,
          },
          approval: { decision: 'denied', decidedBy, ...(reason === undefined ? {} : { reason }) },
        });
        continue;
      }
      const kept = call.id === undefined ? undefined : revised.find((candidate) => candidate.id === call.id);
      // Approved as asked, or edited (a new call object, same id): the approval is held for that very call, used once when it runs.
      if (kept !== undefined && call.id !== undefined && ours.has(kept.name)) {
        held.hold(plan.planId, threadId, call.id, kept.name, kept.args, { decidedBy });
      }
    }
    return update;
  };
  // The middleware as LangChain made it (its name, context schema, where its hook may jump), with the hook wrapped.
  const afterModel = typeof inner.afterModel === 'function' ? { canJumpTo: ['model'], hook } : { ...(inner.afterModel as object), hook };
  return { ...inner, afterModel } as unknown as LangChainApprovalMiddleware;
}

/** What the person reads about a program call: the inner call it waits at, not the program. */
function programDescription(prefix: string, providerName: string, gate: ProgramGate, toolCall: ToolCallLike): string {
  const pending = gate.pending(toolCall.id);
  if (pending === undefined) return `${prefix}\n\nTool: ${providerName}\nArgs: ${JSON.stringify(toolCall.args, null, 2)}`;
  let input: string;
  try {
    input = JSON.stringify(pending.input, null, 2) ?? 'undefined';
  } catch {
    input = '(not JSON)';
  }
  return `${prefix}\n\nThe program of ${providerName} calls ${pending.toolName} (inner call ${pending.step}); approving runs this call once and the program goes on.\nTool: ${pending.toolName}\nArgs: ${input}`;
}

function hookOf(afterModel: unknown): Hook {
  const hook = typeof afterModel === 'function' ? afterModel : (afterModel as { hook?: unknown } | undefined)?.hook;
  if (typeof hook !== 'function') {
    throw new ModelToolsError({
      problem: 'invalid-argument',
      field: 'langchain',
      expected: 'langchain 1.x, whose humanInTheLoopMiddleware has an afterModel hook',
      received: 'a version without it',
    });
  }
  return hook as Hook;
}

function loadLangChain(): typeof import('langchain', { with: { 'resolution-mode': 'import' } }) {
  try {
    return require('langchain') as typeof import('langchain', { with: { 'resolution-mode': 'import' } });
  } catch (error) {
    throw new ModelToolsError({
      problem: 'invalid-argument',
      field: 'langchain',
      expected: 'the langchain package (1.x) installed next to @ca/model-tools',
      received: 'nothing it could load',
      advice: 'npm i langchain',
      cause: error,
    });
  }
}
