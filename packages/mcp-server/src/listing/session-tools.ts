import type { McpTool, ModelTools } from '@ca/model-tools';
import { nameRulesOf } from '@ca/model-tools';
import type { PlanContext } from '@ca/tool-context';
import type { ToolDescriptor, ToolRuntime } from '@ca/tool-lifecycle';
import type { ResolvedProfile } from '../gateway/session-profile';
import { holdsPattern } from './output-schemas';

/** The search meta tool of `'search'` mode. */
export const SEARCH_TOOL_NAME = 'tools.search';
/** The call meta tool of `'search'` mode. */
export const CALL_TOOL_NAME = 'tools.call';

/** A tool name as MCP (2025-11-25) allows it. */
const MCP_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** A tool the session may call, by its MCP name. @internal */
export interface CallableTool {
  /** The runtime's name. */
  readonly toolName: string;
  /** The definition as the client gets it (from `tools/list`, or from `tools.search`). */
  readonly definition: McpTool;
  /** The output schema the client was given, which `structuredContent` must match. */
  readonly outputSchema: object | undefined;
}

/** What a session lists and may call, for one state of the catalog. @internal */
export interface ToolListing {
  /** The answer to `tools/list`. */
  readonly tools: readonly McpTool[];
  /** Every tool the session may call, by MCP name (in search mode, more than it lists). */
  readonly callable: ReadonlyMap<string, CallableTool>;
  /** Tools the profile offers but the plan's policy refuses, by MCP name: not listed, and a call gets the runtime's refusal (which says why). */
  readonly refused: ReadonlyMap<string, string>;
  /** MCP names by runtime name, for the search's hits. */
  readonly mcpNames: ReadonlyMap<string, string>;
  /** Tools the profile offers that are quarantined (their pinned definition changed), by MCP name: not listed, and a call gets the runtime's `TOOL_DEFINITION_CHANGED` with the diff. */
  readonly quarantined: ReadonlyMap<string, string>;
  /** Compares two listings (a change is told to the client). */
  readonly key: string;
}

/** True for the runtime's tools that stand for an upstream server's resource and prompt requests: they are served as MCP resources and prompts. */
export function isUpstreamOperation(descriptor: ToolDescriptor): boolean {
  return typeof descriptor.annotations?.['mcpOperation'] === 'string';
}

/**
 * The tools of one session, as MCP definitions (`@ca/model-tools`, format
 * `mcp`): what the plan's policy lets run and the profile offers, upstream
 * resource and prompt operations left out (they are resources and prompts
 * here); in search mode the two meta tools and the pinned tools. Computed
 * again only when the runtime's catalog changed.
 * @internal
 */
export class SessionTools {
  private cached: { readonly catalog: readonly ToolDescriptor[]; readonly listing: ToolListing } | undefined;

  constructor(
    private readonly runtime: ToolRuntime,
    private readonly modelTools: ModelTools,
    private readonly profile: ResolvedProfile,
  ) {}

  /** The listing for the catalog as it is now. */
  async current(plan: PlanContext): Promise<ToolListing> {
    const catalog = await this.runtime.listTools();
    if (this.cached?.catalog === catalog) return this.cached.listing;
    const listing = await this.build(plan, catalog);
    this.cached = { catalog, listing };
    return listing;
  }

  private async build(plan: PlanContext, catalog: readonly ToolDescriptor[]): Promise<ToolListing> {
    const operations = new Set(catalog.filter(isUpstreamOperation).map((tool) => tool.name));
    const offers = this.profile.offers;
    // ModelTools keeps refused tools (refused: 'mark'): they are left out of the list here, and a call of one gets the runtime's own refusal.
    const every = await this.modelTools.tools(plan, nameRulesOf('mcp'));
    const names = new Map(every.map((tool) => [tool.providerName, tool.name]));
    const refused = new Map(
      every.filter((tool) => tool.refusal !== undefined && offers(tool.name) && !operations.has(tool.name)).map((tool) => [tool.providerName, tool.name]),
    );
    const refusedNames = new Set(refused.values());
    const include = (name: string): boolean => offers(name) && !operations.has(name) && !refusedNames.has(name);
    const definitions = await this.modelTools.definitions('mcp', plan, { include });
    const callable = new Map<string, CallableTool>();
    const mcpNames = new Map<string, string>();
    const listed: McpTool[] = [];
    for (const raw of definitions) {
      const toolName = names.get(raw.name) ?? raw.name;
      // An upstream output schema with a pattern could make a client's own (backtracking) validator hang: the gateway checks the output itself.
      const definition = raw.outputSchema !== undefined && holdsPattern(raw.outputSchema) ? withoutOutputSchema(raw) : raw;
      callable.set(definition.name, { toolName, definition, outputSchema: definition.outputSchema });
      mcpNames.set(toolName, definition.name);
      if (this.profile.mode === 'all' || this.profile.pinned(toolName)) listed.push(definition);
    }
    if (this.profile.mode === 'search') listed.unshift(searchTool(callable.size), callTool([...callable.values()].map((tool) => tool.definition)));
    // Quarantined tools keep their runtime name where it is a valid MCP name that no listed tool has.
    const quarantined = new Map<string, string>();
    for (const item of (await this.runtime.discover()).unavailable) {
      const valid = MCP_NAME.test(item.name) && !callable.has(item.name) && !refused.has(item.name);
      if (item.error?.code === 'TOOL_DEFINITION_CHANGED' && valid && offers(item.name) && !operations.has(item.name)) quarantined.set(item.name, item.name);
    }
    return { tools: listed, callable, refused, mcpNames, quarantined, key: JSON.stringify(listed) };
  }
}

function withoutOutputSchema(tool: McpTool): McpTool {
  const { outputSchema: _dropped, ...rest } = tool;
  return rest;
}

/** `tools.search`: finds tools by words (BM25F over names, descriptions, arguments) or a pattern, among those the session may call. */
function searchTool(count: number): McpTool {
  return {
    name: SEARCH_TOOL_NAME,
    title: 'Search tools',
    description:
      `Finds the tools for a task among the ${count} tools of this session (only those its plan lets run). ` +
      'Give a few words of what you want done (or a regular expression with mode "regex"); it returns the best matches: name, what the tool does, whether it only reads, and its input schema. ' +
      `Call a tool it finds with ${CALL_TOOL_NAME}.`,
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 1000, description: 'What the tool should do, in a few words; a pattern in regex mode.' },
        limit: { type: 'integer', minimum: 1, maximum: 50, description: 'How many tools to return at most (default 10).' },
        mode: { type: 'string', enum: ['words', 'regex'], description: 'words (default): ranked words; regex: a pattern tested on names, then descriptions.' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        tools: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              description: { type: 'string' },
              readOnly: { type: 'boolean' },
              inputSchema: { type: 'object' },
            },
            required: ['name', 'description', 'readOnly', 'inputSchema'],
          },
        },
      },
      required: ['tools'],
    },
    annotations: { title: 'Search tools', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  };
}

/** `tools.call`: calls a tool the search found; what it may do is what the tools it can reach may do. */
function callTool(reachable: readonly McpTool[]): McpTool {
  const every = (hint: 'readOnlyHint' | 'idempotentHint') => reachable.every((tool) => tool.annotations[hint]);
  const some = (hint: 'destructiveHint' | 'openWorldHint') => reachable.some((tool) => tool.annotations[hint]);
  const readOnly = every('readOnlyHint');
  return {
    name: CALL_TOOL_NAME,
    title: 'Call a tool',
    description: `Calls one tool by the name ${SEARCH_TOOL_NAME} gave, with its arguments (an object matching the tool's input schema); returns what the tool returns.`,
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, description: `The tool's name, as ${SEARCH_TOOL_NAME} gave it.` },
        arguments: { type: 'object', description: "The tool's arguments." },
      },
      required: ['name'],
      additionalProperties: false,
    },
    annotations: {
      title: 'Call a tool',
      readOnlyHint: readOnly,
      destructiveHint: !readOnly && some('destructiveHint'),
      idempotentHint: every('idempotentHint'),
      openWorldHint: some('openWorldHint'),
    },
  };
}
