import { describeValue } from '@ca/domain';
import { createSchemaValidator, type CompiledSchema } from '@ca/schema';
import type { BoundResource, PlanContext, PlanPolicy, ToolExecutionTrace, ToolExecutionTraceRepair } from '@ca/tool-context';
import { resourcePath } from '@ca/tool-context';
import { policyRefusal, type ExecuteOptions, type ExecutionResult, type ToolDescriptor, type ToolRuntime } from '@ca/tool-lifecycle';
import { ModelToolsError } from '../errors/model-tools-error';
import { stepOfCallId } from './call-step';
import { callStart, nameLabel, recordFrontDoorTrace, type CallStart } from './front-door-trace';
import { MODEL_TOOL_FORMATS, ToolNameMap, nameRulesOf, type ModelToolFormat, type ProviderNameRules } from '../names/provider-names';
import { PROVIDERS, type ProviderDefinition, type ProviderResult } from '../providers/providers';
import type { ProviderToolCall } from '../providers/provider-call';
import { modelErrorText, modelSafeText } from '../render/model-error';
import { renderHandle } from '../render/render-handle';
import { DEFAULT_BUDGET, contentParts, renderFailure, renderSuccess, type RenderBudget, type RenderedResult } from '../render/render-result';
import { repairArguments, type DeclinedRepair } from '../repair/repair-arguments';
import { toOpenAiStrictSchema } from '../schema/openai-strict-schema';

/** Settings of {@link ModelTools}. */
export interface ModelToolsOptions {
  /** Most characters of text one result gives a model (default 20,000); beyond, it is cut with a marker. */
  readonly maxResultCharacters?: number;
  /** Largest image (decoded bytes) a result passes on (default 4 MiB); a larger one becomes a note. */
  readonly maxImageBytes?: number;
  /** What `definitions` does with tools the plan's policy refuses: leave them out (`'omit'`, the default) or keep them with a note (`'mark'`). */
  readonly refused?: 'omit' | 'mark';
  /** OpenAI strict mode where the schema allows it (default `true`). */
  readonly strict?: boolean;
  /**
   * Use the provider's (or framework's) call id as the execution's `step`
   * (default `true`): a call made again with the same id — a durable loop
   * replaying a turn, a retry — keeps its idempotency key, and one that
   * already ended in the plan (the plan's call journal, in this process or
   * another) with the same tool and arguments is answered from its record
   * instead of running twice. An id that
   * cannot tell calls apart (empty, `call_0`, derived from the tool's name) is
   * never used (see the README, *Call ids as steps*).
   */
  readonly callIdAsStep?: boolean;
  /**
   * Code mode: offer the model the tool that runs a program (`code.run` of
   * `@ca/code-mode`, or the tool `toolName` names) and `tools.search`
   * instead of the plan's tools — in `definitions`, `tools` and so every
   * provider format, framework adapter and the MCP gateway. `true` offers
   * `code.run`. Each call inside a program is the runtime's as always; a
   * call of a tool not offered is still mapped and run by the runtime.
   */
  readonly codeMode?: boolean | CodeModeOffer;
}

/**
 * What {@link ModelToolsOptions.codeMode} offers: the runtime's tool that
 * runs a program, and how to describe it for a plan.
 */
export interface CodeModeOffer {
  /** The runtime's name of the tool that runs a program (default `code.run`). */
  readonly toolName?: string;
  /** Also offer the runtime's `tools.search` when it has one (default `true`). */
  readonly search?: boolean;
  /**
   * The tool's description for a plan — what a program of that plan can
   * call, as declarations (`CodeMode.describe` of `@ca/code-mode`). Default:
   * the tool's own description.
   */
  readonly describe?: (plan: PlanPolicySource) => Promise<string> | string;
}

/** The default name of the tool that runs a program (`@ca/code-mode`). */
const CODE_RUN_TOOL = 'code.run';
const SEARCH_TOOL = 'tools.search';

/** What the front door needs of a plan to list definitions: its policy (and id, for messages; its resources, for the MCP `readOnlyHint`). A `PlanContext` is one. */
export interface PlanPolicySource {
  readonly policy: PlanPolicy;
  readonly planId?: string;
  readonly resources?: readonly BoundResource[];
}

/** Options of {@link ModelTools.tools}. */
export interface ToolsOptions {
  /** What to do with the tools the plan's policy refuses, for this listing: default the instance's `refused`. */
  readonly refused?: 'omit' | 'mark';
}

/** Options of {@link ModelTools.definitions}. */
export interface DefinitionsOptions {
  /** Only the tools this says yes to, by the runtime's name (a gateway's profile); default every tool. */
  readonly include?: (name: string) => boolean;
}

/** Options of one {@link ModelTools.call}: what the runtime's `execute` takes besides the call (progress, a signal for this call only, a deadline). */
export type CallOptions = Pick<ExecuteOptions, 'onProgress' | 'signal' | 'timeoutMs'>;

/** A tool as a model sees it in one format. */
export interface ModelTool {
  /** The runtime's name. */
  readonly name: string;
  /** The name under the format's rules. */
  readonly providerName: string;
  readonly descriptor: ToolDescriptor;
  /** Why the plan's policy refuses it (from `policyRefusal`), when it does. */
  readonly refusal?: Error & { readonly code: string };
}

/** How one call went, whatever the format. */
export interface ModelToolCallOutcome {
  /** True when the tool ran and succeeded. */
  readonly ok: boolean;
  /** The name the model used. */
  readonly providerName: string;
  /** The runtime's tool, when the name mapped to one. */
  readonly toolName?: string;
  /** The provider's call id, when there was one. */
  readonly callId?: string;
  /** What the model reads back, before the provider's shape. */
  readonly rendered: RenderedResult;
  /** The runtime's result, when `runtime.execute` returned one. */
  readonly result?: ExecutionResult;
  /** Why it failed: the runtime's error, or the front door's (`MODEL_TOOL_UNKNOWN`, `MODEL_ARGUMENTS_INVALID_JSON`). */
  readonly error?: Error & { readonly code?: string };
  /** The repairs made to the arguments (also in the trace). */
  readonly repairs: readonly ToolExecutionTraceRepair[];
  /** Places the repair left alone because two rules disagreed. */
  readonly declined: readonly DeclinedRepair[];
  /**
   * The call's trace, also in `plan.traces`: the runtime's, or — for a call
   * refused before `runtime.execute` (`MODEL_TOOL_UNKNOWN`,
   * `MODEL_ARGUMENTS_INVALID_JSON`) — the front door's, with the error's code.
   */
  readonly trace?: ToolExecutionTrace;
}

/** A call's result in the provider's shape, and how it went. */
export interface ModelToolCallResult<F extends ModelToolFormat> {
  /** The message (or block, or part) to send back to the model. */
  readonly message: ProviderResult<F>;
  readonly outcome: ModelToolCallOutcome;
}

/** The arguments of a call as a framework or provider hands them over. */
export type CallArguments = { readonly text: string } | { readonly value: unknown };

/**
 * Options of one {@link ModelTools.run}: the call's id and name as the model
 * sent them, and what `runtime.execute` takes besides the call (`signal`
 * cancels this call only — a framework's abort signal —, not the plan).
 */
export interface RunOptions extends CallOptions {
  /** The provider's or framework's call id. */
  readonly callId?: string;
  /** The name the model used (default: the runtime's). */
  readonly providerName?: string;
  /** The definition the model saw was OpenAI-strict: take its `null`s for optional properties back out first (not a repair). */
  readonly strictNulls?: boolean;
  /**
   * Called with the final arguments right before `runtime.execute` (a
   * framework adapter grants its approval there); what it returns is called
   * once the execution is over.
   */
  readonly beforeExecute?: (input: unknown) => Promise<(() => void) | void> | (() => void) | void;
  /**
   * The execution's step, instead of the one the call id gives: a program
   * resumed after a person approved its inner call runs under its
   * `resumeStep` (see `FrameworkApprovals.suspend`).
   */
  readonly step?: string;
}

/** What `runMapped` passes on to `runtime.execute`: a call's options, and a step that overrides the call id's. */
type MappedCallOptions = CallOptions & { readonly step?: string };

/** Arguments parsed and repaired, ready for `runtime.execute`. */
export interface PreparedArguments {
  readonly value: unknown;
  readonly repairs: readonly ToolExecutionTraceRepair[];
  readonly declined: readonly DeclinedRepair[];
}

interface Catalog {
  readonly tools: readonly ToolDescriptor[];
  readonly byName: Map<string, ToolDescriptor>;
  readonly names: Map<ProviderNameRules, ToolNameMap>;
}

/**
 * The front door of a runtime for model APIs: the tools of its catalog as
 * each provider defines them, and a provider's tool call run through
 * `runtime.execute` in a plan — name mapped back, arguments parsed and
 * repaired where the schema makes the fix unambiguous, the result (or the
 * error, rendered for a model) in the provider's shape. Nothing here decides
 * policy: `definitions` asks `policyRefusal`, and every call goes through
 * the runtime's whole pipeline.
 */
export class ModelTools {
  private readonly budget: RenderBudget;
  /** What `definitions` and `tools` do with the tools the plan's policy refuses (the `refused` option): the framework adapters read it too. */
  readonly refused: 'omit' | 'mark';
  private readonly strict: boolean;
  private readonly callIdAsStep: boolean;
  private readonly codeMode: ResolvedCodeMode | undefined;
  private catalog: Catalog | undefined;

  /**
   * @throws ModelToolsError (`MODEL_TOOLS_INVALID_ARGUMENT`) when `runtime` is not a runtime or an option is out of range.
   */
  constructor(
    readonly runtime: ToolRuntime,
    options: ModelToolsOptions = {},
  ) {
    if (typeof (runtime as Partial<ToolRuntime>)?.execute !== 'function' || typeof (runtime as Partial<ToolRuntime>).listTools !== 'function') {
      throw invalidArgument('runtime', 'a ToolRuntime (from @ca/tool-lifecycle)', describeValue(runtime));
    }
    const maxCharacters = options.maxResultCharacters ?? DEFAULT_BUDGET.maxCharacters;
    const maxImageBytes = options.maxImageBytes ?? DEFAULT_BUDGET.maxImageBytes;
    if (!Number.isSafeInteger(maxCharacters) || maxCharacters < 200)
      throw invalidArgument('maxResultCharacters', 'a whole number ≥ 200', describeValue(maxCharacters));
    if (!Number.isSafeInteger(maxImageBytes) || maxImageBytes < 0) throw invalidArgument('maxImageBytes', 'a whole number ≥ 0', describeValue(maxImageBytes));
    if (options.refused !== undefined && options.refused !== 'omit' && options.refused !== 'mark') {
      throw invalidArgument('refused', "'omit' or 'mark'", describeValue(options.refused));
    }
    this.budget = { maxCharacters, maxImageBytes };
    this.refused = options.refused ?? 'omit';
    this.strict = options.strict ?? true;
    this.callIdAsStep = options.callIdAsStep ?? true;
    this.codeMode = codeModeOf(options.codeMode);
  }

  /**
   * The runtime's name of the tool that runs a program — `codeMode.toolName`,
   * else `code.run`: the framework adapters run it up to the first inner call
   * that needs a person before the framework asks (see
   * `FrameworkApprovals.suspend`).
   */
  get programToolName(): string {
    return this.codeMode?.toolName ?? CODE_RUN_TOOL;
  }

  /** The step a call id gives a call of `toolName` (`undefined` when the id cannot tell calls apart, or `callIdAsStep` is off). */
  stepOfCall(toolName: string, callId: string | undefined, providerName: string = toolName): string | undefined {
    return this.callIdAsStep ? stepOfCallId(callId, [providerName, toolName]) : undefined;
  }

  /**
   * The tools the plan may run, as `format` defines them (refused ones left
   * out, or marked with `refused: 'mark'`), sorted by name.
   * @throws ModelToolsError for an unknown format or something that is not a plan or a policy.
   */
  async definitions<F extends ModelToolFormat>(format: F, plan: PlanPolicySource, options: DefinitionsOptions = {}): Promise<ProviderDefinition<F>[]> {
    checkFormat(format);
    const provider = PROVIDERS[format];
    const include = options.include;
    if (include !== undefined && typeof include !== 'function') throw invalidArgument('include', 'a function (name) => boolean', describeValue(include));
    const tools = await this.tools(plan, nameRulesOf(format));
    return (include === undefined ? tools : tools.filter((tool) => include(tool.name))).map((tool) =>
      provider.define({
        descriptor: tool.descriptor,
        providerName: tool.providerName,
        description: describeFor(tool),
        inputSchema: inputSchemaOf(tool.descriptor),
        strict: this.strict,
        plan,
      }),
    ) as ProviderDefinition<F>[];
  }

  /**
   * The catalog's tools under a provider's name rules (`nameRulesOf(format)`,
   * default OpenAI's), sorted by name, each with its provider name, its
   * descriptor and — when the plan's policy refuses it — the refusal (a
   * refused tool is left out with `refused: 'omit'`, the instance's default
   * unless `options.refused` says otherwise). What `definitions` and the
   * framework adapters build on, for a door of your own.
   * @throws ModelToolsError for something that is not a plan or a policy.
   */
  async tools(plan: PlanPolicySource, rules: ProviderNameRules = nameRulesOf('openai-chat'), options: ToolsOptions = {}): Promise<ModelTool[]> {
    const refused = options.refused ?? this.refused;
    if (refused !== 'omit' && refused !== 'mark') throw invalidArgument('options.refused', "'omit' or 'mark'", describeValue(refused));
    const policy = policyOf(plan);
    const catalog = await this.loadCatalog();
    const names = namesFor(catalog, rules);
    const planId = typeof plan.planId === 'string' ? plan.planId : 'the plan';
    const tools: ModelTool[] = [];
    const codeMode = this.codeMode;
    for (const listed of codeMode === undefined ? catalog.tools : catalog.tools.filter((tool) => isOffered(codeMode, tool.name))) {
      const descriptor = codeMode?.describe !== undefined && listed.name === codeMode.toolName ? await describedFor(listed, codeMode.describe, plan) : listed;
      const refusal = policyRefusal(descriptor, policy, planId);
      if (refusal !== undefined && refused === 'omit') continue;
      const providerName = names.toProvider(descriptor.name) as string;
      tools.push(refusal === undefined ? { name: descriptor.name, providerName, descriptor } : { name: descriptor.name, providerName, descriptor, refusal });
    }
    return tools;
  }

  /**
   * Runs a provider's tool call in the plan and answers in the provider's
   * shape. What the model got wrong (an unknown name, arguments that are not
   * JSON or do not match) and what the runtime refused come back as an error
   * result for the model, never as a throw.
   * @throws ModelToolsError when `format` is unknown, `call` lacks the provider's fields, or `plan` is not a plan.
   */
  async call<F extends ModelToolFormat>(format: F, call: unknown, plan: PlanContext, options?: CallOptions): Promise<ModelToolCallResult<F>> {
    checkFormat(format);
    checkPlan(plan);
    const start = callStart();
    const provider = PROVIDERS[format];
    const read = provider.read(call);
    const catalog = this.catalog ?? (await this.loadCatalog());
    let toolName = namesFor(catalog, nameRulesOf(format)).fromProvider(read.name);
    if (toolName === undefined) {
      // The catalog may have changed since it was read: once more, from the runtime.
      toolName = namesFor(await this.loadCatalog(), nameRulesOf(format)).fromProvider(read.name);
    }
    const strictNulls = this.strict && (format === 'openai-chat' || format === 'openai-responses');
    const outcome = await this.runMapped(plan, toolName, read, strictNulls, nameRulesOf(format), undefined, undefined, options, start);
    return { message: provider.result(outcome.rendered, read) as ProviderResult<F>, outcome };
  }

  /**
   * Runs one call of a runtime tool by its runtime name, for framework
   * adapters: arguments parsed (text) and repaired, then `runtime.execute`.
   * Never throws for what the model or the runtime did.
   * @throws ModelToolsError when `plan` is not a plan.
   */
  async run(plan: PlanContext, toolName: string, args: CallArguments, options: RunOptions = {}): Promise<ModelToolCallOutcome> {
    checkPlan(plan);
    const start = callStart();
    const read: ProviderToolCall = { format: 'openai-chat', name: options.providerName ?? toolName, callId: options.callId, arguments: args };
    const catalog = this.catalog ?? (await this.loadCatalog());
    const known = catalog.byName.has(toolName) || (await this.loadCatalog()).byName.has(toolName);
    return this.runMapped(
      plan,
      known ? toolName : undefined,
      read,
      options.strictNulls === true,
      undefined,
      toolName,
      options.beforeExecute,
      executeOptionsOf(options),
      start,
    );
  }

  /**
   * The arguments `run` would execute: parsed (text), `null`s of a strict
   * definition taken out, repaired. `undefined` when the tool is unknown or
   * the text is not JSON (`run` then answers the model with the error).
   */
  async prepare(toolName: string, args: CallArguments, options: Pick<RunOptions, 'strictNulls'> = {}): Promise<PreparedArguments | undefined> {
    const descriptor = (this.catalog ?? (await this.loadCatalog())).byName.get(toolName);
    if (descriptor === undefined) return undefined;
    const parsed = parseArguments(args);
    return parsed.ok ? prepareValue(descriptor, parsed.value, options.strictNulls === true) : undefined;
  }

  /** How a successful output reads for a model (the budget applied), for adapters that render later. */
  renderOutput(output: unknown, content?: readonly unknown[], executionId?: string): RenderedResult {
    return renderSuccess(output, content, executionId, this.budget);
  }

  /**
   * Renders a runtime result as a model reads it (what `call` and `run` do
   * after `execute`): an output kept behind a handle as its preview and how
   * to read the rest; an output over `maxResultCharacters` kept behind a
   * handle too when the runtime has an output budget (its result store),
   * else cut with a marker.
   */
  render(result: ExecutionResult, plan: PlanContext, providerName: string = result.toolName): RenderedResult {
    if (result.ok) return this.renderOk(result, plan, nameRulesOf('openai-chat'));
    return this.renderError(result.error, plan, providerName, undefined, result.content);
  }

  private renderOk(result: ExecutionResult, plan: PlanContext, rules: ProviderNameRules): RenderedResult {
    if (result.handle === undefined) {
      const rendered = renderSuccess(result.output, result.content, result.executionId, this.budget);
      if (!rendered.truncated) return rendered;
      // The budget of this door is smaller than the runtime's: the runtime keeps the output, and the model reads it by parts.
      const kept = typeof this.runtime.keepAsHandle === 'function' ? this.runtime.keepAsHandle(result, plan) : result;
      if (kept.handle === undefined) return rendered;
    }
    const names = this.catalog === undefined ? undefined : namesFor(this.catalog, rules);
    const nameOf = (tool: string): string => names?.toProvider(tool) ?? tool;
    return renderHandle(
      result.handle as NonNullable<ExecutionResult['handle']>,
      { read: nameOf('results.read'), grep: nameOf('results.grep') },
      contentParts(result.content, this.budget),
    );
  }

  private async runMapped(
    plan: PlanContext,
    toolName: string | undefined,
    read: ProviderToolCall,
    strictNulls: boolean,
    rules: ProviderNameRules | undefined,
    unknownName?: string,
    beforeExecute?: RunOptions['beforeExecute'],
    callOptions?: MappedCallOptions,
    start: CallStart = callStart(),
  ): Promise<ModelToolCallOutcome> {
    // Only failures spread it: the successful path builds its outcome field by field.
    const base = (): { providerName: string; callId?: string } =>
      read.callId === undefined ? { providerName: read.name } : { providerName: read.name, callId: read.callId };
    const descriptor = toolName === undefined ? undefined : this.catalog?.byName.get(toolName);
    // Refused before the pipeline: the runtime never sees these calls, so the front door traces them (same record, the error's code).
    if (toolName === undefined || descriptor === undefined) {
      const error = unknownToolError(unknownName ?? read.name, this.catalog, rules);
      const trace = recordFrontDoorTrace(plan, start, {
        toolName: unknownName ?? read.name,
        error: {
          name: error.name,
          code: error.code,
          message: `No tool is named '${nameLabel(unknownName ?? read.name)}' in plan '${plan.planId}'; the call was not run.`,
        },
      });
      return {
        ...base(),
        ok: false,
        rendered: this.renderError(error, plan, read.name, undefined),
        error,
        repairs: [],
        declined: [],
        ...(trace === undefined ? {} : { trace }),
      };
    }
    const parsed = parseArguments(read.arguments);
    if (!parsed.ok) {
      const failure = argumentsError(toolName, plan.planId, parsed.error);
      // The parser's message quotes the text: the trace says only that it did not parse (arguments are never kept).
      const trace = recordFrontDoorTrace(plan, start, {
        toolName,
        error: {
          name: failure.name,
          code: failure.code,
          message: `The arguments of tool '${toolName}' in plan '${plan.planId}' are not valid JSON; the call was not run.`,
        },
      });
      return {
        ...base(),
        toolName,
        ok: false,
        rendered: this.renderError(failure, plan, read.name, undefined),
        error: failure,
        repairs: [],
        declined: [],
        ...(trace === undefined ? {} : { trace }),
      };
    }
    const { value, repairs, declined } = prepareValue(descriptor, parsed.value, strictNulls);
    const step = callOptions?.step ?? (this.callIdAsStep ? stepOfCallId(read.callId, [read.name, toolName]) : undefined);
    let options: ExecuteOptions | undefined =
      repairs.length === 0 ? (step === undefined ? undefined : { step }) : step === undefined ? { repairs } : { repairs, step };
    if (callOptions !== undefined) options = options === undefined ? callOptions : { ...callOptions, ...options };
    let result: ExecutionResult;
    let after: (() => void) | void = undefined;
    try {
      if (beforeExecute !== undefined) after = await beforeExecute(value);
      result = await this.runtime.execute(toolName, value, plan, options);
    } catch (thrown) {
      const error = thrown as Error & { code?: string; trace?: ToolExecutionTrace };
      const trace = error?.trace;
      return {
        ...base(),
        toolName,
        ok: false,
        rendered: this.renderError(error, plan, read.name, declined),
        error,
        repairs,
        declined,
        ...(trace === undefined ? {} : { trace }),
      };
    } finally {
      if (typeof after === 'function') after();
    }
    if (result.ok) {
      // Built field by field: object spreads cost more than the rest of the bridge on this path.
      const outcome: { -readonly [K in keyof ModelToolCallOutcome]: ModelToolCallOutcome[K] } = {
        ok: true,
        providerName: read.name,
        toolName,
        rendered: this.renderOk(result, plan, rules ?? nameRulesOf('openai-chat')),
        result,
        repairs,
        declined,
        trace: result.trace,
      };
      if (read.callId !== undefined) outcome.callId = read.callId;
      return outcome;
    }
    return {
      ...base(),
      toolName,
      ok: false,
      rendered: this.renderError(result.error, plan, read.name, declined, result.content),
      result,
      error: result.error,
      repairs,
      declined,
      trace: result.trace,
    };
  }

  private renderError(
    error: unknown,
    plan: PlanContext,
    providerName: string,
    declined: readonly DeclinedRepair[] | undefined,
    content?: readonly unknown[],
  ): RenderedResult {
    const code = typeof (error as { code?: unknown })?.code === 'string' ? ((error as { code: string }).code as string) : 'UNKNOWN';
    const rules = nameRulesOf('openai-chat');
    const names = this.catalog === undefined ? undefined : namesFor(this.catalog, rules);
    let text = modelErrorText(error, {
      providerName,
      allowedRoots: rootsOf(plan.resources),
      ...(names === undefined ? {} : { toProviderName: (name: string) => names.toProvider(name) }),
      ...(declined === undefined || declined.length === 0 ? {} : { declined }),
    });
    // A tool's own failure often explains itself in its content (an MCP error result): it follows, as the tool wrote it.
    if (content !== undefined && content.length > 0 && code === 'TOOL_EXECUTION_FAILED') {
      const detail = renderSuccess(undefined, content, undefined, this.budget).text;
      text = `${text}\nThe tool said: ${modelSafeText(detail, rootsOf(plan.resources))}`;
    }
    return renderFailure(text, code, this.budget);
  }

  private async loadCatalog(): Promise<Catalog> {
    const tools = await this.runtime.listTools();
    if (this.catalog?.tools === tools) return this.catalog;
    const catalog: Catalog = { tools, byName: new Map(tools.map((tool) => [tool.name, tool])), names: new Map() };
    this.catalog = catalog;
    return catalog;
  }
}

type ResolvedCodeMode = Required<Pick<CodeModeOffer, 'toolName' | 'search'>> & Pick<CodeModeOffer, 'describe'>;

function codeModeOf(option: ModelToolsOptions['codeMode']): ResolvedCodeMode | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return { toolName: CODE_RUN_TOOL, search: true };
  if (typeof option !== 'object' || option === null) throw invalidArgument('codeMode', 'true, or { toolName?, search?, describe? }', describeValue(option));
  const toolName = option.toolName ?? CODE_RUN_TOOL;
  if (typeof toolName !== 'string' || toolName.length === 0) throw invalidArgument('codeMode.toolName', "a tool's name", describeValue(toolName));
  if (option.search !== undefined && typeof option.search !== 'boolean')
    throw invalidArgument('codeMode.search', 'true or false', describeValue(option.search));
  if (option.describe !== undefined && typeof option.describe !== 'function')
    throw invalidArgument('codeMode.describe', 'a function (plan) => description', describeValue(option.describe));
  return { toolName, search: option.search ?? true, ...(option.describe === undefined ? {} : { describe: option.describe }) };
}

function isOffered(codeMode: ResolvedCodeMode, name: string): boolean {
  return name === codeMode.toolName || (codeMode.search && name === SEARCH_TOOL);
}

/** The program tool's descriptor with its description for this plan (its declarations); the same object for the same text, so caches keyed by descriptor hold. */
const describedCache = new WeakMap<ToolDescriptor, Map<string, ToolDescriptor>>();
async function describedFor(descriptor: ToolDescriptor, describe: NonNullable<CodeModeOffer['describe']>, plan: PlanPolicySource): Promise<ToolDescriptor> {
  const description = await describe(plan);
  if (typeof description !== 'string' || description === descriptor.description) return descriptor;
  let byText = describedCache.get(descriptor);
  if (byText === undefined) describedCache.set(descriptor, (byText = new Map()));
  let described = byText.get(description);
  if (described === undefined) {
    if (byText.size > 16) byText.clear();
    described = Object.freeze({ ...descriptor, description });
    byText.set(description, described);
  }
  return described;
}

/** The options of `run` that go to `runtime.execute`, when any is set. */
function executeOptionsOf(options: RunOptions): MappedCallOptions | undefined {
  const { signal, timeoutMs, onProgress, step } = options;
  if (signal === undefined && timeoutMs === undefined && onProgress === undefined && step === undefined) return undefined;
  if (step !== undefined && (typeof step !== 'string' || step.length === 0)) throw invalidArgument('options.step', 'a non-empty string', describeValue(step));
  return {
    ...(signal === undefined ? {} : { signal }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(onProgress === undefined ? {} : { onProgress }),
    ...(step === undefined ? {} : { step }),
  };
}

function parseArguments(args: CallArguments): { ok: true; value: unknown } | { ok: false; error: unknown } {
  if (!('text' in args)) return { ok: true, value: args.value };
  if (args.text.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(args.text) };
  } catch (error) {
    return { ok: false, error };
  }
}

const NOTHING_REPAIRED: PreparedArguments['repairs'] = Object.freeze([]);
const NO_DECLINED: PreparedArguments['declined'] = Object.freeze([]);

/** A validator of its own, to tell at once that arguments need no repair (the runtime validates again, with its own). */
const validator = createSchemaValidator();
const compiledInputs = new WeakMap<ToolDescriptor, CompiledSchema | null>();

function compiledInputOf(descriptor: ToolDescriptor): CompiledSchema | null {
  let compiled = compiledInputs.get(descriptor);
  if (compiled === undefined) {
    try {
      compiled = validator.compile(descriptor.inputSchema as never, { toolName: descriptor.name, direction: 'input', trust: 'untrusted' });
    } catch {
      compiled = null; // the walk alone decides then
    }
    compiledInputs.set(descriptor, compiled);
  }
  return compiled;
}

function prepareValue(descriptor: ToolDescriptor, parsed: unknown, strictNulls: boolean): PreparedArguments {
  const schema = descriptor.inputSchema;
  if (schema === undefined) return { value: parsed, repairs: NOTHING_REPAIRED, declined: [] };
  // Valid arguments (the common case) need neither a repair nor the strict transform undone: a null the transform allowed is invalid in the original.
  if (compiledInputOf(descriptor)?.validate(parsed).valid === true) return { value: parsed, repairs: NOTHING_REPAIRED, declined: NO_DECLINED };
  let value = parsed;
  if (strictNulls && strictFor(descriptor)) value = repairArguments(value, schema, { rules: ['null-for-optional'] }).value;
  return repairArguments(value, schema);
}

function namesFor(catalog: Catalog, rules: ProviderNameRules): ToolNameMap {
  let names = catalog.names.get(rules);
  if (names === undefined) {
    names = new ToolNameMap(
      catalog.tools.map((tool) => tool.name),
      rules,
    );
    catalog.names.set(rules, names);
  }
  return names;
}

const strictCache = new WeakMap<ToolDescriptor, boolean>();

/** Whether the tool's OpenAI definition is strict (its schema could be made so). */
function strictFor(descriptor: ToolDescriptor): boolean {
  let strict = strictCache.get(descriptor);
  if (strict === undefined) {
    strict = toOpenAiStrictSchema(inputSchemaOf(descriptor)).strict;
    strictCache.set(descriptor, strict);
  }
  return strict;
}

/** @internal The input schema a model is shown: the tool's, or an empty object schema. */
export function inputSchemaOf(descriptor: ToolDescriptor): Readonly<Record<string, unknown>> {
  const schema = descriptor.inputSchema;
  return typeof schema === 'object' && schema !== null && !Array.isArray(schema)
    ? (schema as Readonly<Record<string, unknown>>)
    : { type: 'object', properties: {} };
}

const REFUSAL_NOTES: Readonly<Record<string, string>> = {
  'read-only': 'it changes things and this plan is read-only',
  network: 'it reaches the network and this plan denies it',
  TOOL_CHECKPOINT_REQUIRED: 'its changes cannot be undone and this plan requires that',
};

/** @internal The description a model is shown: the tool's, with a note first when the plan refuses it. */
export function describeFor(tool: ModelTool): string {
  if (tool.refusal === undefined) return tool.descriptor.description;
  return `[Not available in this plan: ${refusalNote(tool)}. Do not call it.] ${tool.descriptor.description}`;
}

/** @internal Why the plan refuses a tool, in words for a model (`it changes things and this plan is read-only`). */
export function refusalNote(tool: ModelTool): string {
  const refusal = tool.refusal;
  if (refusal === undefined) return 'the plan refuses it';
  return REFUSAL_NOTES[(refusal as { rule?: string }).rule ?? refusal.code] ?? 'the plan refuses it';
}

function rootsOf(resources: readonly BoundResource[] | undefined): string[] {
  const roots: string[] = [];
  for (const resource of resources ?? []) {
    try {
      roots.push(resourcePath(resource));
    } catch {
      // Not a file resource: no path to allow.
    }
  }
  return roots;
}

function policyOf(plan: PlanPolicySource): PlanPolicy {
  const policy = (plan as { policy?: unknown } | null | undefined)?.policy;
  if (typeof policy !== 'object' || policy === null || typeof (policy as PlanPolicy).readOnly !== 'boolean') {
    throw invalidArgument('plan', 'a plan (from runtime.createPlan) or { policy: { readOnly, requireCheckpoint } }', describeValue(plan));
  }
  return policy as PlanPolicy;
}

/** @internal Refuses what is not the context of a plan (every entry point that runs calls takes one). */
export function checkPlan(plan: PlanContext): void {
  if (typeof plan !== 'object' || plan === null || typeof plan.planId !== 'string' || typeof (plan as { forExecution?: unknown }).forExecution !== 'function') {
    throw invalidArgument('plan', 'the context of a plan (from runtime.createPlan() or runtime.runPlan())', describeValue(plan));
  }
}

function checkFormat(format: unknown): asserts format is ModelToolFormat {
  if (!MODEL_TOOL_FORMATS.includes(format as ModelToolFormat)) {
    throw invalidArgument('format', MODEL_TOOL_FORMATS.map((name) => `'${name}'`).join(', '), describeValue(format));
  }
}

function invalidArgument(field: string, expected: string, received: string): ModelToolsError {
  return new ModelToolsError({ problem: 'invalid-argument', field, expected, received });
}

/** The error a model gets for a name no tool has: code `MODEL_TOOL_UNKNOWN`, with close names. */
function unknownToolError(name: string, catalog: Catalog | undefined, rules: ProviderNameRules | undefined): Error & { code: string; suggestions: string[] } {
  const candidates = catalog === undefined ? [] : rules === undefined ? [...catalog.byName.keys()] : [...namesFor(catalog, rules).providerNames()];
  const suggestions = closest(name, candidates);
  const error = new Error(`No tool is named '${name}'.`) as Error & { code: string; suggestions: string[] };
  error.name = 'ModelToolUnknownError';
  error.code = 'MODEL_TOOL_UNKNOWN';
  // Already in the model's names: the error text shows them as they are.
  error.suggestions = suggestions;
  return error;
}

function argumentsError(toolName: string, planId: string, cause: unknown): Error & { code: string; detail: string } {
  const detail = cause instanceof Error ? cause.message : 'they do not parse';
  const error = new Error(`The arguments of tool '${toolName}' in plan '${planId}' are not valid JSON: ${detail}`, { cause }) as Error & {
    code: string;
    detail: string;
  };
  error.name = 'ModelArgumentsError';
  error.code = 'MODEL_ARGUMENTS_INVALID_JSON';
  error.detail = detail;
  return error;
}

/** Up to three names close to `wanted` (shared prefix or small edit distance), for an unknown name. */
function closest(wanted: string, candidates: readonly string[]): string[] {
  const lower = wanted.toLowerCase();
  return candidates
    .map((candidate) => ({ candidate, distance: editDistance(lower, candidate.toLowerCase()) }))
    .filter((entry) => entry.distance <= Math.max(2, Math.floor(wanted.length / 3)))
    .sort((a, b) => a.distance - b.distance || (a.candidate < b.candidate ? -1 : 1))
    .slice(0, 3)
    .map((entry) => entry.candidate);
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 64) return Number.POSITIVE_INFINITY;
  let previous = Uint32Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = new Uint32Array(b.length + 1);
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
