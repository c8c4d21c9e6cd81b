import { describeValue } from '@ca/domain';
import type { PlanContext } from '@ca/tool-context';
import { SEARCH_TOOL_NAME, type ToolsSearchOutput } from '@ca/tool-lifecycle';
import type { ModelTool, ModelToolCallOutcome, ModelTools } from '../calls/model-tools';
import { ModelToolsError } from '../errors/model-tools-error';
import { MODEL_TOOL_FORMATS, nameRulesOf, type ModelToolFormat } from '../names/provider-names';
import { toAnthropicToolSearchResult, type AnthropicTool } from '../providers/anthropic';
import {
  readOpenAiResponsesToolSearchCall,
  toOpenAiResponsesToolSearchOutput,
  type OpenAiResponsesFunctionTool,
  type OpenAiResponsesToolSearchOutput,
  type OpenAiResponsesToolSearchTool,
} from '../providers/openai-responses';
import type { ProviderToolCall } from '../providers/provider-call';
import { PROVIDERS, type ProviderDefinition, type ProviderResult } from '../providers/providers';
import type { RenderedResult } from '../render/render-result';

/**
 * How tools a search finds reach the model: `'native'`, the API's own
 * deferred loading (Anthropic `defer_loading` with `tool_reference` results;
 * OpenAI Responses `tool_search` executed by the client); `'generic'`, any
 * format: the tools found join the definitions of the next request.
 */
export type DeferredLoading = 'native' | 'generic';

/** Formats with an API of their own for deferred loading. */
export const NATIVE_DEFERRED_FORMATS: readonly ModelToolFormat[] = Object.freeze(['anthropic', 'openai-responses']);

/** Options of {@link DeferredTools}. */
export interface DeferredToolsOptions<F extends ModelToolFormat> {
  readonly format: F;
  /** Default `'native'` for `anthropic` and `openai-responses`, `'generic'` for the other formats (which have no other). */
  readonly loading?: DeferredLoading;
  /** Tools offered whole from the start, never deferred (runtime names); the runtime's own tools (`tools.search`, `results.*`) always are. */
  readonly alwaysLoaded?: readonly string[];
}

/** A definition in a request's `tools` with deferred loading. */
export type DeferredDefinition<F extends ModelToolFormat> = F extends 'anthropic'
  ? AnthropicTool
  : F extends 'openai-responses'
    ? OpenAiResponsesFunctionTool | OpenAiResponsesToolSearchTool
    : ProviderDefinition<F>;

/** What answers a call: the provider's result, or (OpenAI Responses, native) the `tool_search_output` item. */
export type DeferredMessage<F extends ModelToolFormat> = F extends 'openai-responses' ? ProviderResult<F> | OpenAiResponsesToolSearchOutput : ProviderResult<F>;

/** A call answered by {@link DeferredTools.call}. */
export interface DeferredCallResult<F extends ModelToolFormat> {
  readonly message: DeferredMessage<F>;
  readonly outcome: ModelToolCallOutcome;
  /** For a search: the tools it found (runtime names), now loaded. */
  readonly found?: readonly string[];
}

/** The description of the OpenAI tool search tool, executed here. */
const SEARCH_DESCRIPTION =
  'Finds the tools that can do a task among all the tools of this conversation and loads them: describe the task in a few words. Call it before concluding that no tool can help.';

/**
 * Deferred loading of a runtime's tools for one plan and one model API: the
 * model is first given the runtime's own tools (`tools.search`, and
 * `results.read` / `results.grep` with an output budget) and the tools of
 * `alwaysLoaded`, searches for the others with `tools.search`, and gets what
 * it found in the API's own way (`'native'`) or in the next request's
 * definitions (`'generic'`). Every call still runs through `ModelTools`,
 * and so through the runtime's whole pipeline; a search finds only the tools
 * the plan may run, and starts no MCP server (the catalog lists them).
 *
 * The runtime must offer `tools.search` (`options.searchTool: true`).
 */
export class DeferredTools<F extends ModelToolFormat> {
  readonly format: F;
  readonly loading: DeferredLoading;
  private readonly always: ReadonlySet<string>;
  private readonly found = new Set<string>();

  /** @throws ModelToolsError (`MODEL_TOOLS_INVALID_ARGUMENT`) for an unknown format, or native loading for a format without it. */
  constructor(
    readonly modelTools: ModelTools,
    readonly plan: PlanContext,
    options: DeferredToolsOptions<F>,
  ) {
    const format = options?.format;
    if (!MODEL_TOOL_FORMATS.includes(format)) throw invalid('format', MODEL_TOOL_FORMATS.map((name) => `'${name}'`).join(', '), format);
    const native = NATIVE_DEFERRED_FORMATS.includes(format);
    const loading = options.loading ?? (native ? 'native' : 'generic');
    if (loading !== 'native' && loading !== 'generic') throw invalid('loading', "'native' or 'generic'", loading);
    if (loading === 'native' && !native)
      throw invalid('loading', `'generic' for ${format} (native deferred loading is for ${NATIVE_DEFERRED_FORMATS.join(' and ')})`, loading);
    if (options.alwaysLoaded !== undefined && (!Array.isArray(options.alwaysLoaded) || !options.alwaysLoaded.every((name) => typeof name === 'string'))) {
      throw invalid('alwaysLoaded', 'a list of tool names', options.alwaysLoaded);
    }
    this.format = format;
    this.loading = loading;
    this.always = new Set(options.alwaysLoaded ?? []);
  }

  /** The tools searches have loaded so far (runtime names), in the order found. */
  get loaded(): readonly string[] {
    return [...this.found];
  }

  /**
   * The `tools` of the next request. Native Anthropic: every tool the plan
   * may run, those not always loaded with `defer_loading: true`. Native
   * OpenAI Responses: the client-executed `tool_search` and the tools always
   * loaded (a search answers with the definitions it loads). Generic: the
   * tools always loaded, `tools.search`, and every tool a search found.
   * @throws ModelToolsError when the runtime offers no `tools.search`.
   */
  async definitions(): Promise<DeferredDefinition<F>[]> {
    const { tools, definitions } = await this.catalog();
    const out: unknown[] = [];
    if (this.loading === 'native' && this.format === 'openai-responses') {
      const search = tools.find((tool) => tool.name === SEARCH_TOOL_NAME) as ModelTool;
      out.push(toolSearchTool(search));
    }
    tools.forEach((tool, index) => {
      const definition = definitions[index];
      const always = this.isAlways(tool);
      if (this.loading === 'generic') {
        if (always || this.found.has(tool.name)) out.push(definition);
      } else if (this.format === 'anthropic') {
        out.push(always ? definition : { ...(definition as AnthropicTool), defer_loading: true });
      } else if (always && tool.name !== SEARCH_TOOL_NAME) {
        out.push(definition);
      }
    });
    return out as DeferredDefinition<F>[];
  }

  /**
   * Runs a call of the model in the plan. A search (`tools.search`, or an
   * OpenAI `tool_search_call`) is answered in the loading's way and loads
   * what it found; any other call is `ModelTools.call`.
   * @throws ModelToolsError for a call without the provider's fields.
   */
  async call(call: unknown): Promise<DeferredCallResult<F>> {
    const format = this.format as ModelToolFormat;
    if (format === 'openai-responses' && (call as { type?: unknown } | null)?.type === 'tool_search_call') return this.clientSearch(call) as never;
    const { tools } = await this.catalog();
    const read = PROVIDERS[format].read(call);
    const search = tools.find((tool) => tool.name === SEARCH_TOOL_NAME);
    const answered = await this.modelTools.call(format, call, this.plan);
    if (search === undefined || read.name !== search.providerName || !answered.outcome.ok) return answered as DeferredCallResult<F>;
    const hits = this.hitsOf(answered.outcome, tools);
    for (const hit of hits) this.found.add(hit.name);
    const query = queryOf(read);
    if (this.loading === 'native' && format === 'anthropic') {
      // Only deferred tools may be referenced: a tool loaded from the start is named in text.
      const deferred = hits.filter((hit) => !this.isAlways(hit));
      const message = toAnthropicToolSearchResult(
        read,
        deferred.map((hit) => hit.providerName),
        query,
      );
      return { message: message as DeferredMessage<F>, outcome: answered.outcome, found: hits.map((hit) => hit.name) };
    }
    const rendered = foundText(hits, query);
    return { message: PROVIDERS[format].result(rendered, read) as DeferredMessage<F>, outcome: answered.outcome, found: hits.map((hit) => hit.name) };
  }

  /** An OpenAI `tool_search_call` (client execution): `tools.search` runs, and its hits' definitions are the output. */
  private async clientSearch(call: unknown): Promise<DeferredCallResult<'openai-responses'>> {
    const read = readOpenAiResponsesToolSearchCall(call);
    const { tools, definitions } = await this.catalog();
    const outcome = await this.modelTools.run(this.plan, SEARCH_TOOL_NAME, read.arguments, {
      providerName: 'tool_search',
      ...(read.callId === undefined ? {} : { callId: read.callId }),
    });
    // The output item has no error of its own: a search that failed loads nothing (its trace says why).
    const hits = outcome.ok ? this.hitsOf(outcome, tools) : [];
    for (const hit of hits) this.found.add(hit.name);
    const loaded = hits.map((hit) => definitions[tools.indexOf(hit)] as OpenAiResponsesFunctionTool);
    return { message: toOpenAiResponsesToolSearchOutput(read, loaded), outcome, found: hits.map((hit) => hit.name) };
  }

  private hitsOf(outcome: ModelToolCallOutcome, tools: readonly ModelTool[]): ModelTool[] {
    const output = outcome.result?.output as Partial<ToolsSearchOutput> | undefined;
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    return (Array.isArray(output?.tools) ? output.tools : []).map((hit) => byName.get(hit?.name)).filter((tool): tool is ModelTool => tool !== undefined);
  }

  private isAlways(tool: ModelTool): boolean {
    return tool.descriptor.annotations?.['runtimeTool'] === true || this.always.has(tool.name);
  }

  /** The plan's tools under the format's names, and their definitions in the same order. */
  private async catalog(): Promise<{ tools: ModelTool[]; definitions: unknown[] }> {
    const format = this.format as ModelToolFormat;
    const [tools, definitions] = await Promise.all([this.modelTools.tools(this.plan, nameRulesOf(format)), this.modelTools.definitions(format, this.plan)]);
    if (!tools.some((tool) => tool.name === SEARCH_TOOL_NAME)) {
      throw invalid('runtime', 'a runtime that offers tools.search (build it with options: { searchTool: true })', 'a runtime without it');
    }
    return { tools, definitions };
  }
}

function toolSearchTool(search: ModelTool): OpenAiResponsesToolSearchTool {
  const schema = search.descriptor.inputSchema as { properties?: Record<string, unknown> } | undefined;
  return {
    type: 'tool_search',
    execution: 'client',
    description: SEARCH_DESCRIPTION,
    parameters: {
      type: 'object',
      properties: { query: schema?.properties?.['query'] ?? { type: 'string' }, k: schema?.properties?.['k'] ?? { type: 'integer' } },
      required: ['query'],
      additionalProperties: false,
    },
  };
}

function queryOf(read: ProviderToolCall): string {
  let value: unknown = 'value' in read.arguments ? read.arguments.value : undefined;
  if ('text' in read.arguments) {
    try {
      value = JSON.parse(read.arguments.text);
    } catch {
      value = undefined;
    }
  }
  const query = (value as { query?: unknown } | undefined)?.query;
  return typeof query === 'string' ? query : '';
}

/** The text of a search's result in the generic way: the tools found, by the names the model will call them. */
function foundText(hits: readonly ModelTool[], query: string): RenderedResult {
  const text =
    hits.length === 0
      ? `No tool matched ${JSON.stringify(query.slice(0, 200))}. Try other words.`
      : `Found ${hits.length} tool${hits.length === 1 ? '' : 's'}; ${hits.length === 1 ? 'it is' : 'they are'} offered from your next turn:\n${hits
          .map((hit) => `- ${hit.providerName}: ${hit.descriptor.description.replace(/\s+/g, ' ').slice(0, 200)}`)
          .join('\n')}`;
  return { isError: false, parts: [{ type: 'text', text }], text, truncated: false };
}

function invalid(field: string, expected: string, received: unknown): ModelToolsError {
  return new ModelToolsError({ problem: 'invalid-argument', field, expected, received: describeValue(received) });
}
