import type { ToolCapability, ToolSourceKind } from '@ca/domain';
import { compileLinearPattern, PatternCompileError, type LinearPattern } from '@ca/schema';
import type { PlanPolicy } from '@ca/tool-context';
import type { InjectionToken } from 'tsyringe';
import { ToolInvalidArgumentError } from '../errors';
import { policyRefusal } from '../plan';
import { capabilityInPlan, type ToolDescriptor } from '../tool';
import { ToolSearchError } from './tool-search-error';
import { DOCUMENT_LIMITS } from './tool-document';
import { LexicalIndex, type RankedTool, type ToolFilter } from './tool-search-index';

/** How a query is read: words ranked by BM25F (default), or a regular expression (RE2 syntax, any case). */
export type ToolSearchMode = 'bm25' | 'regex';

/** Options of a tool search. */
export interface ToolSearchOptions {
  /** How many tools to return at most: 1–100, default 10. */
  readonly k?: number;
  /** `'bm25'` (default): ranked words. `'regex'`: a pattern tested on names, then descriptions, then arguments. */
  readonly mode?: ToolSearchMode;
  /**
   * Only tools the plan's policy lets run (what `runtime.execute` would not
   * refuse at its policy step, by `policyRefusal`): a read-only plan finds no
   * writing tool.
   */
  readonly ctx?: { readonly planId: string; readonly policy: PlanPolicy };
  /** Only tools of these source kinds (`'mcp'`, `'skill'`, `'builtin'`, …). */
  readonly sources?: readonly ToolSourceKind[];
  /** Only tools whose capability has these values: `{ writes: false }` finds the tools that do not write — with `ctx`, in that plan (`capabilityInPlan`). */
  readonly capability?: Partial<ToolCapability>;
  /** Add each tool's `inputSchema` and `outputSchema` to its hit. Default `false`. */
  readonly schemas?: boolean;
  /** Cancels a search that waits for a reranker. */
  readonly signal?: AbortSignal;
}

/** One tool a search found. */
export interface ToolSearchHit {
  readonly name: string;
  /** The first sentence of the description, on one line, at most 200 characters. */
  readonly description: string;
  readonly source: ToolSourceKind;
  /** Higher is better; comparable within one search only. */
  readonly score: number;
  /** With `schemas: true`, when the tool has one. */
  readonly inputSchema?: ToolDescriptor['inputSchema'];
  /** With `schemas: true`, when the tool has one. */
  readonly outputSchema?: ToolDescriptor['outputSchema'];
}

/** A tool handed to a reranker, with its lexical score (0 for a tool the words did not find). */
export interface ToolSearchCandidate {
  readonly descriptor: ToolDescriptor;
  readonly score: number;
}

/** What a reranker is asked to score. */
export interface ToolRerankRequest {
  /** The query as the caller wrote it (at most 10,000 characters of it). */
  readonly query: string;
  /** The candidates, best lexical score first; they all passed the search's filters. */
  readonly candidates: readonly ToolSearchCandidate[];
  readonly signal?: AbortSignal;
}

/**
 * A service's own scorer (an embedding model, a cross-encoder, a rule of the
 * house), applied after the lexical ranking in `'bm25'` mode. The runtime
 * ships none.
 */
export interface ToolSearchReranker {
  /**
   * How many lexical candidates to score: a number (default 50, at least the
   * search's `k`), or `'all'` for every tool that passes the filters — those
   * the words did not find come after, with score 0, so that a semantic
   * scorer can find what lexical search missed.
   */
  readonly candidates?: number | 'all';
  /**
   * One score per candidate, in the candidates' order; higher is better. The
   * hits are the `k` best by these scores (ties keep the lexical order).
   */
  rerank(request: ToolRerankRequest): readonly number[] | Promise<readonly number[]>;
}

/** Settings of a {@link ToolSearchIndex}. */
export interface ToolSearchIndexSettings {
  readonly reranker?: ToolSearchReranker;
}

/** The reranker `registerToolRuntime` hands to the runtime's tool search (optional). */
export const TOOL_SEARCH_RERANKER: InjectionToken<ToolSearchReranker> = Symbol.for('ca.tool-lifecycle.ToolSearchReranker');

const DEFAULT_K = 10;
const MAX_K = 100;
const DEFAULT_CANDIDATES = 50;
/** The longest pattern the regex mode takes. */
export const MAX_PATTERN_LENGTH = 1_000;
const SUMMARY_LENGTH = 200;
const CAPABILITY_KEYS: readonly (keyof ToolCapability)[] = ['writes', 'checkpointable', 'idempotent', 'destructive', 'openWorld'];

/**
 * A search index over tool descriptors: BM25F over their names (split at
 * `.`, `_`, `-`, camelCase and digits), descriptions, argument names and
 * argument descriptions (nested ones too), source and MCP server, with
 * English stemming, stop words and a list of generic synonyms; or a regular
 * expression on the linear-time engine. Filters by source kind, capability
 * and a plan's policy; an optional reranker of the service's own.
 *
 * `update` makes it hold exactly the tools given, re-reading only the tools
 * whose name, description or input schema changed. `runtime.searchTools`
 * keeps one in step with the runtime's catalog; use the class directly to
 * search descriptors from elsewhere (a cached list, another runtime's).
 */
export class ToolSearchIndex {
  private readonly lexical = new LexicalIndex();
  private readonly reranker: ToolSearchReranker | undefined;
  /** Positions of the tools in name order, for the regex mode; made on first use after each update. */
  private byName: number[] | undefined;
  /** What a plan's policy says of each tool, per policy object, until the next update: 1 runs, 2 refused. */
  private verdicts = new WeakMap<object, Uint8Array>();
  /** Argument names and descriptions of each tool as one text, for the regex mode. */
  private argumentTexts = new WeakMap<ToolDescriptor, string>();

  /** @throws ToolInvalidArgumentError for a reranker without a `rerank` function. */
  constructor(settings: ToolSearchIndexSettings = {}) {
    const reranker = settings?.reranker;
    if (reranker !== undefined) checkReranker(reranker);
    this.reranker = reranker;
  }

  /** How many tools the index holds. */
  get size(): number {
    return this.lexical.size;
  }

  /**
   * Makes the index hold exactly `tools` (their names must be unique; a later
   * duplicate replaces an earlier one).
   * @throws ToolInvalidArgumentError when `tools` is not an array of descriptors.
   */
  update(tools: readonly ToolDescriptor[]): void {
    if (!Array.isArray(tools)) throw new ToolInvalidArgumentError({ argument: 'tools', expected: 'an array of tool descriptors', received: tools });
    const unique = new Map<string, ToolDescriptor>();
    tools.forEach((tool, index) => {
      if (typeof tool?.name !== 'string' || typeof tool.source !== 'string') {
        throw new ToolInvalidArgumentError({ argument: `tools[${index}]`, expected: 'a tool descriptor with a name and a source', received: tool });
      }
      unique.set(tool.name, tool);
    });
    this.lexical.update([...unique.values()]);
    this.byName = undefined;
    this.verdicts = new WeakMap();
  }

  /**
   * The best tools for `query`, best first.
   * @throws ToolInvalidArgumentError for a query that is not a string, an
   *   invalid pattern in regex mode, or an invalid option.
   * @throws ToolSearchError when the reranker throws or answers badly.
   */
  async search(query: string, options: ToolSearchOptions = {}): Promise<ToolSearchHit[]> {
    const search = checkSearch(query, options);
    const filter = this.filterOf(search);
    const withSchemas = options.schemas === true;
    if (search.pattern !== undefined) return this.matchPattern(search.pattern, search.k, filter).map((ranked) => hitOf(ranked, withSchemas));
    const reranker = this.reranker;
    if (reranker === undefined) return this.lexical.rank(query, search.k, filter).map((ranked) => hitOf(ranked, withSchemas));
    const ranked = await this.rerank(reranker, query, search, filter);
    return ranked.map((entry) => hitOf(entry, withSchemas));
  }

  private async rerank(reranker: ToolSearchReranker, query: string, search: CheckedSearch, filter: ToolFilter | undefined): Promise<RankedTool[]> {
    const wanted = reranker.candidates;
    const all = wanted === 'all';
    const depth = all ? this.lexical.size : Math.max(search.k, typeof wanted === 'number' ? wanted : DEFAULT_CANDIDATES);
    const candidates: RankedTool[] = this.lexical.rank(query, depth, filter);
    if (all) {
      const found = new Set(candidates.map((candidate) => candidate.descriptor));
      this.lexical.descriptors().forEach((descriptor, position) => {
        if (!found.has(descriptor) && (filter === undefined || filter(descriptor, position))) candidates.push({ descriptor, score: 0 });
      });
    }
    if (candidates.length === 0) return [];
    const signal = search.signal;
    signal?.throwIfAborted();
    let scores: readonly number[];
    try {
      scores = await reranker.rerank({ query: query.slice(0, 10_000), candidates, ...(signal === undefined ? {} : { signal }) });
    } catch (error) {
      if (signal?.aborted === true) throw signal.reason;
      throw new ToolSearchError({
        problem: 'the reranker threw',
        advice: 'Fix the reranker, or search without one.',
        ...(search.planId === undefined ? {} : { planId: search.planId }),
        cause: error,
      });
    }
    if (!Array.isArray(scores) || scores.length !== candidates.length || !scores.every((score) => typeof score === 'number' && Number.isFinite(score))) {
      throw new ToolSearchError({
        problem: `the reranker answered ${Array.isArray(scores) ? `${scores.length} values, not all finite numbers or not one per candidate` : 'something other than an array'} for ${candidates.length} candidates`,
        advice: 'A reranker returns one finite number per candidate, in the order of the candidates.',
        ...(search.planId === undefined ? {} : { planId: search.planId }),
      });
    }
    return candidates
      .map((candidate, order) => ({ candidate, order, score: scores[order] }))
      .sort((a, b) => b.score - a.score || a.order - b.order)
      .slice(0, search.k)
      .map(({ candidate, score }) => ({ descriptor: candidate.descriptor, score }));
  }

  /** Name matches score 3, description matches 2, argument matches 1; ties in name order. */
  private matchPattern(pattern: LinearPattern, k: number, filter: ToolFilter | undefined): RankedTool[] {
    const descriptors = this.lexical.descriptors();
    this.byName ??= descriptors.map((_, position) => position).sort((a, b) => compareNames(descriptors[a].name, descriptors[b].name));
    const candidates = filter === undefined ? this.byName : this.byName.filter((position) => filter(descriptors[position], position));
    const found: RankedTool[] = [];
    const taken = new Set<number>();
    // Tools are visited in name order field by field, so the first k matches of a field are the best k it can add.
    const fields: [number, (descriptor: ToolDescriptor) => string][] = [
      [3, (descriptor) => descriptor.name],
      [2, (descriptor) => (typeof descriptor.description === 'string' ? descriptor.description.slice(0, DOCUMENT_LIMITS.descriptionChars) : '')],
      [1, (descriptor) => this.argumentText(descriptor)],
    ];
    for (const [score, textOf] of fields) {
      const matched: RankedTool[] = [];
      for (const position of candidates) {
        if (found.length + matched.length >= k) break;
        if (taken.has(position)) continue;
        const descriptor = descriptors[position];
        if (pattern.test(textOf(descriptor))) {
          matched.push({ descriptor, score });
          taken.add(position);
        }
      }
      found.push(...matched);
      if (found.length >= k) break;
    }
    return found;
  }

  private argumentText(descriptor: ToolDescriptor): string {
    let text = this.argumentTexts.get(descriptor);
    if (text === undefined) {
      text = argumentTextOf(descriptor.inputSchema);
      this.argumentTexts.set(descriptor, text);
    }
    return text;
  }

  private filterOf(search: CheckedSearch): ToolFilter | undefined {
    const { sources, capability, policy, planId } = search;
    if (sources === undefined && capability === undefined && policy === undefined) return undefined;
    let verdicts: Uint8Array | undefined;
    if (policy !== undefined) {
      verdicts = this.verdicts.get(policy);
      if (verdicts === undefined || verdicts.length < this.lexical.size) {
        verdicts = new Uint8Array(this.lexical.size);
        this.verdicts.set(policy, verdicts);
      }
    }
    return (descriptor, position) => {
      if (sources !== undefined && !sources.has(descriptor.source)) return false;
      if (capability !== undefined) {
        // In a plan, what the tool can do there (a sandboxed command writes nothing in a read-only plan).
        const effective = policy === undefined ? descriptor.capability : capabilityInPlan(descriptor, policy);
        for (const [key, value] of capability) if (effective?.[key] !== value) return false;
      }
      if (verdicts !== undefined && policy !== undefined) {
        // The runtime's own decision (step 3 of execute), asked once per tool and policy.
        if (verdicts[position] === 0) verdicts[position] = policyRefusal(descriptor, policy, planId ?? '') === undefined ? 1 : 2;
        if (verdicts[position] === 2) return false;
      }
      return true;
    };
  }
}

interface CheckedSearch {
  readonly mode: ToolSearchMode;
  readonly k: number;
  readonly pattern: LinearPattern | undefined;
  readonly sources: ReadonlySet<string> | undefined;
  readonly capability: readonly [keyof ToolCapability, boolean][] | undefined;
  readonly policy: PlanPolicy | undefined;
  readonly planId: string | undefined;
  readonly signal: AbortSignal | undefined;
}

function checkSearch(query: unknown, options: ToolSearchOptions): CheckedSearch {
  if (typeof options !== 'object' || options === null)
    throw new ToolInvalidArgumentError({ argument: 'options', expected: 'an object of search options', received: options });
  const { k = DEFAULT_K, mode = 'bm25', ctx, sources, capability, schemas, signal } = options;
  const planId = typeof ctx?.planId === 'string' ? ctx.planId : undefined;
  const fail = (argument: string, expected: string, received: unknown, advice?: string): never => {
    throw new ToolInvalidArgumentError({
      argument,
      expected,
      received,
      ...(advice === undefined ? {} : { advice }),
      ...(planId === undefined ? {} : { planId }),
    });
  };
  if (typeof query !== 'string') fail('query', 'a string (words, or a pattern in regex mode)', query);
  if (!Number.isInteger(k) || k < 1 || k > MAX_K) fail('k', `a whole number from 1 to ${MAX_K}`, k);
  if (mode !== 'bm25' && mode !== 'regex') fail('mode', "'bm25' or 'regex'", mode);
  if (ctx !== undefined && (typeof ctx !== 'object' || ctx === null || planId === undefined || typeof ctx.policy !== 'object' || ctx.policy === null)) {
    fail('ctx', 'the context of a plan (with planId and policy)', ctx, 'Create one with runtime.createPlan().');
  }
  if (schemas !== undefined && typeof schemas !== 'boolean') fail('schemas', 'true or false', schemas);
  if (signal !== undefined && !(signal instanceof AbortSignal)) fail('signal', 'an AbortSignal', signal);
  let sourceSet: Set<string> | undefined;
  if (sources !== undefined) {
    if (!Array.isArray(sources) || sources.length > 100 || !sources.every((kind) => typeof kind === 'string')) {
      fail('sources', "an array of source kinds ('mcp', 'skill', 'builtin', 'custom', 'wrapped', or a kind of your own)", sources);
    }
    sourceSet = new Set(sources);
  }
  let capabilityEntries: [keyof ToolCapability, boolean][] | undefined;
  if (capability !== undefined) {
    if (typeof capability !== 'object' || capability === null || Array.isArray(capability)) fail('capability', 'an object of capability flags', capability);
    capabilityEntries = [];
    for (const [key, value] of Object.entries(capability)) {
      if (!CAPABILITY_KEYS.includes(key as keyof ToolCapability)) fail(`capability.${key}`, `one of ${CAPABILITY_KEYS.join(', ')}`, key);
      if (typeof value !== 'boolean') fail(`capability.${key}`, 'true or false', value);
      capabilityEntries.push([key as keyof ToolCapability, value]);
    }
  }
  let pattern: LinearPattern | undefined;
  if (mode === 'regex') {
    const source = query as string;
    if (source.length > MAX_PATTERN_LENGTH) fail('query', `a pattern of at most ${MAX_PATTERN_LENGTH} characters`, `a pattern of ${source.length} characters`);
    try {
      // Whoever writes the query (a model, a person) may write any pattern: it runs on the linear-time engine.
      pattern = compileLinearPattern(source, { syntax: 're2', ignoreCase: true });
    } catch (error) {
      if (!PatternCompileError.isInstance(error)) throw error;
      fail(
        'query',
        'a regular expression in RE2 syntax (no lookaround or backreferences)',
        source,
        `${error.message} Rewrite the pattern, or search words with mode 'bm25'.`,
      );
    }
  }
  return {
    mode,
    k,
    pattern,
    sources: sourceSet,
    capability: capabilityEntries,
    policy: ctx?.policy,
    planId,
    signal: signal ?? undefined,
  };
}

function checkReranker(reranker: ToolSearchReranker): void {
  if (typeof reranker !== 'object' || reranker === null || typeof reranker.rerank !== 'function') {
    throw new ToolInvalidArgumentError({ argument: 'reranker', expected: 'a ToolSearchReranker: an object with rerank(request)', received: reranker });
  }
  const { candidates } = reranker;
  if (candidates !== undefined && candidates !== 'all' && !(Number.isInteger(candidates) && candidates >= 1 && candidates <= 10_000)) {
    throw new ToolInvalidArgumentError({ argument: 'reranker.candidates', expected: "a whole number from 1 to 10000, or 'all'", received: candidates });
  }
}

function hitOf({ descriptor, score }: RankedTool, withSchemas: boolean): ToolSearchHit {
  const hit: { -readonly [K in keyof ToolSearchHit]: ToolSearchHit[K] } = {
    name: descriptor.name,
    description: summaryOf(descriptor.description),
    source: descriptor.source,
    score,
  };
  if (withSchemas) {
    if (descriptor.inputSchema !== undefined) hit.inputSchema = descriptor.inputSchema;
    if (descriptor.outputSchema !== undefined) hit.outputSchema = descriptor.outputSchema;
  }
  return hit;
}

/** The first sentence of a description, whitespace collapsed, at most {@link SUMMARY_LENGTH} characters. */
export function summaryOf(description: string): string {
  const text = (typeof description === 'string' ? description.slice(0, 4 * SUMMARY_LENGTH) : '').replace(/\s+/g, ' ').trim();
  const end = /[.!?](?= |$)/.exec(text);
  const sentence = end !== null && end.index < SUMMARY_LENGTH ? text.slice(0, end.index + 1) : text;
  if (sentence.length <= SUMMARY_LENGTH) return sentence;
  const cut = sentence.slice(0, SUMMARY_LENGTH - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > SUMMARY_LENGTH / 2 ? cut.slice(0, space) : cut}…`;
}

/** Argument names and descriptions, one per line, for the regex mode (within the index's reading limits). */
function argumentTextOf(schema: unknown): string {
  const lines: string[] = [];
  let length = 0;
  const queue: { node: unknown; depth: number }[] = [{ node: schema, depth: 1 }];
  try {
    for (let head = 0; head < queue.length && head < DOCUMENT_LIMITS.nodes && length < 4 * DOCUMENT_LIMITS.propertyChars; head++) {
      const { node, depth } = queue[head];
      const properties = (node as { properties?: unknown } | null)?.properties;
      if (typeof properties !== 'object' || properties === null) continue;
      for (const [name, property] of Object.entries(properties).slice(0, DOCUMENT_LIMITS.properties)) {
        const description = (property as { description?: unknown } | null)?.description;
        const line = typeof description === 'string' ? `${name}: ${description.slice(0, DOCUMENT_LIMITS.propertyChars)}` : name;
        lines.push(line);
        length += line.length;
        if (depth < DOCUMENT_LIMITS.depth) queue.push({ node: property, depth: depth + 1 });
      }
    }
  } catch {
    // A schema that throws when read is searched as far as it was read.
  }
  return lines.join('\n');
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
