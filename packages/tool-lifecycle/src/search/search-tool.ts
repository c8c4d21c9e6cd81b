import { normalizeCapability, type ToolSourceKind } from '@ca/domain';
import { ToolInvalidArgumentError } from '../errors';
import { toolFailure, toolSuccess, type ToolInstance } from '../tool';
import type { ToolSearchHit, ToolSearchMode, ToolSearchOptions } from './tool-search';

/** The input of `tools.search`. */
export interface ToolsSearchInput {
  readonly query: string;
  /** How many tools at most (1–20, default 5). */
  readonly k?: number;
  /** Add each tool's input schema. */
  readonly schemas?: boolean;
  readonly mode?: ToolSearchMode;
  /** Only tools of these source kinds. */
  readonly sources?: readonly ToolSourceKind[];
}

/** One tool `tools.search` found. */
export interface ToolsSearchFound {
  readonly name: string;
  readonly description: string;
  readonly source: ToolSourceKind;
  readonly inputSchema?: ToolSearchHit['inputSchema'];
}

/** The output of `tools.search`: the tools found, best first. */
export interface ToolsSearchOutput {
  readonly tools: readonly ToolsSearchFound[];
}

/** The name of the runtime's search tool. */
export const SEARCH_TOOL_NAME = 'tools.search';

/**
 * `tools.search`: a read-only tool a model calls to find the tools it needs
 * among every tool of every source that the calling plan may run (the
 * runtime's own `searchTools` with the plan as `ctx`). It starts nothing: it
 * searches the catalog discovery listed — for MCP servers, their cached tool
 * lists. The runtime's own tools (`tools.search`, `results.*`) are not among
 * the hits: a model is given them directly.
 */
export function createSearchTool(
  search: (query: string, options: ToolSearchOptions) => Promise<ToolSearchHit[]>,
  hidden: ReadonlySet<string>,
): ToolInstance<ToolsSearchInput, ToolsSearchOutput> {
  return {
    descriptor: {
      name: SEARCH_TOOL_NAME,
      description:
        "Finds the tools that can do a task, among all the tools this plan may run (MCP servers, skills, built-in, custom and wrapped tools): describe the task in a few words (or give a regular expression with mode 'regex'). Returns names and one-line descriptions, best first; with schemas: true, also each tool's input schema.",
      source: 'builtin',
      capability: normalizeCapability({ writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false }),
      inputSchema: {
        type: 'object',
        properties: {
          query: {
            type: 'string',
            minLength: 1,
            maxLength: 2000,
            description: 'What the tool should do, in a few words; or a regular expression (RE2 syntax) with mode "regex".',
          },
          k: { type: 'integer', minimum: 1, maximum: 20, description: 'How many tools to return at most (default 5).' },
          schemas: { type: 'boolean', description: "Also return each tool's input schema." },
          mode: { enum: ['bm25', 'regex'], description: "'bm25' (words, the default) or 'regex' (a pattern matched on names, then descriptions)." },
          sources: {
            type: 'array',
            items: { type: 'string', minLength: 1, maxLength: 64 },
            maxItems: 10,
            description: "Only tools of these sources: 'mcp', 'skill', 'builtin', 'custom', 'wrapped'.",
          },
        },
        required: ['query'],
        additionalProperties: false,
      },
      annotations: { runtimeTool: true },
    },
    execute: async (input, ctx) => {
      const k = input.k ?? 5;
      let hits: ToolSearchHit[];
      try {
        hits = await search(input.query, {
          k: Math.min(100, k + hidden.size),
          ctx: { planId: ctx.planId, policy: ctx.policy },
          signal: ctx.signal,
          ...(input.schemas === true ? { schemas: true } : {}),
          ...(input.mode === undefined ? {} : { mode: input.mode }),
          ...(input.sources === undefined ? {} : { sources: input.sources }),
        });
      } catch (error) {
        // A pattern the engine cannot run is the caller's to fix: a failed result it can read.
        if (ToolInvalidArgumentError.isInstance(error)) return toolFailure(error);
        throw error;
      }
      const tools = hits
        .filter((hit) => !hidden.has(hit.name))
        .slice(0, k)
        .map((hit): ToolsSearchFound => ({
          name: hit.name,
          description: hit.description,
          source: hit.source,
          ...(hit.inputSchema === undefined ? {} : { inputSchema: hit.inputSchema }),
        }));
      return toolSuccess({ tools });
    },
  };
}
