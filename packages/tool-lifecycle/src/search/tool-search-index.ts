import type { ToolDescriptor } from '../tool';
import { FIELD_COUNT, FIELD_NAME, toolDocument } from './tool-document';
import { relatedTerms, termsOf } from './search-text';

/**
 * How the lexical ranking weighs what it finds: BM25F, each field with its
 * own weight and length normalisation, one saturation over the weighted sum,
 * plus a bonus for covering a tool's name. Chosen on generic grounds (a
 * tool's name says most about it, its arguments' descriptions least, and
 * short names should not be punished for being short) and checked on
 * half of the BFCL questions, then on the other half (see the README).
 */
export interface RankingSettings {
  /** Saturation of the weighted term frequency. */
  readonly k1: number;
  /** Weight of each field, in field order (name, description, parameter names, parameter text, origin). */
  readonly weights: readonly number[];
  /** Length normalisation of each field (0: none, 1: full). */
  readonly b: readonly number[];
  /** Added to a tool's score times the share of its name's terms that the query holds, times the best term weight of the query. */
  readonly nameCoverage: number;
  /** Weight of a related word (synonyms.ts) against the word of the query itself (0: no synonyms). */
  readonly synonymWeight: number;
}

/** @internal The ranking the index uses unless told otherwise (tests and the benchmark compare others). */
export const DEFAULT_RANKING: RankingSettings = {
  k1: 1.2,
  weights: [2, 1, 1, 0.5, 1],
  b: [0.3, 0.75, 0.5, 0.75, 0],
  nameCoverage: 1,
  synonymWeight: 0.2,
};

/** One indexed tool: its descriptor and its terms, compactly. */
interface IndexedTool {
  readonly descriptor: ToolDescriptor;
  /** Term ids, each once. */
  readonly terms: Int32Array;
  /** Frequency of each term in each field: `frequencies[i * FIELD_COUNT + field]`. */
  readonly frequencies: Uint16Array;
  /** Terms per field. */
  readonly lengths: Uint16Array;
  /** How many distinct terms the name has. */
  readonly nameTerms: number;
}

/** Postings of every term, laid out for one pass per query term. */
interface CompiledIndex {
  readonly tools: readonly IndexedTool[];
  /** Where each term's postings start in `docs`/`weights` (length: terms + 1). */
  readonly offsets: Int32Array;
  readonly docs: Int32Array;
  /** The saturated BM25F weight of the term in the tool (no IDF). */
  readonly weights: Float32Array;
  /** 1 when the term is in the tool's name. */
  readonly inName: Uint8Array;
}

/** A tool the lexical ranking found, before any reranking. */
export interface RankedTool {
  readonly descriptor: ToolDescriptor;
  readonly score: number;
}

/** What decides whether a tool may be returned at all. */
export type ToolFilter = (descriptor: ToolDescriptor, position: number) => boolean;

/** Unique query terms considered at most (the rarest are kept): a query of megabytes costs what a long one does. */
export const MAX_QUERY_TERMS = 64;
/** Characters of a query read at most. */
export const MAX_QUERY_CHARS = 10_000;

/**
 * @internal The lexical index: tools in, ranked tools out. Re-reading a tool
 * (splitting, stemming) is the expensive part, so `update` re-reads only the
 * tools whose name, description or input schema changed, then lays the
 * postings out again (a linear pass).
 */
export class LexicalIndex {
  private readonly termIds = new Map<string, number>();
  private tools: IndexedTool[] = [];
  private byName = new Map<string, IndexedTool>();
  private compiled: CompiledIndex | undefined;
  private scores = new Float64Array(0);
  private nameHits = new Uint16Array(0);
  private readonly scratchFields: string[][] = Array.from({ length: FIELD_COUNT }, () => []);
  private readStamp = 0;
  private seenBy = new Int32Array(0);
  private seenAt = new Int32Array(0);
  /** Terms of tools that are gone linger in `termIds`; past this many the index reads every tool again. */
  private deadTerms = 0;

  constructor(private readonly ranking: RankingSettings = DEFAULT_RANKING) {}

  get size(): number {
    return this.tools.length;
  }

  /** The indexed tools, in the order given to `update`. */
  descriptors(): readonly ToolDescriptor[] {
    return this.tools.map((tool) => tool.descriptor);
  }

  /** Makes the index hold exactly `descriptors` (unique names). */
  update(descriptors: readonly ToolDescriptor[]): void {
    if (this.deadTerms > 2 * Math.max(1_000, this.termIds.size - this.deadTerms)) {
      this.termIds.clear();
      this.byName.clear();
      this.deadTerms = 0;
    }
    const next: IndexedTool[] = [];
    const byName = new Map<string, IndexedTool>();
    for (const descriptor of descriptors) {
      const previous = this.byName.get(descriptor.name);
      const tool = previous !== undefined && sameText(previous.descriptor, descriptor) ? { ...previous, descriptor } : this.read(descriptor);
      next.push(tool);
      byName.set(descriptor.name, tool);
    }
    for (const [name, tool] of this.byName) if (!byName.has(name)) this.deadTerms += tool.terms.length;
    this.tools = next;
    this.byName = byName;
    this.compiled = undefined;
  }

  /**
   * The best `k` tools for `query` that pass `filter`, best first; ties in
   * name order. Tools that share no term with the query are not returned.
   */
  rank(query: string, k: number, filter: ToolFilter | undefined): RankedTool[] {
    const index = this.compile();
    const { offsets, docs, weights, inName } = index;
    const count = index.tools.length;
    const queryTerms = this.queryTermIds(query, offsets, count);
    if (queryTerms.length === 0) return [];
    const scores = this.scores;
    const nameHits = this.nameHits;
    const touched: number[] = [];
    let bestIdf = 0;
    for (const { id, idf } of queryTerms) {
      bestIdf = Math.max(bestIdf, idf);
      for (let at = offsets[id], end = offsets[id + 1]; at < end; at++) {
        const doc = docs[at];
        if (scores[doc] === 0) touched.push(doc);
        scores[doc] += idf * weights[at];
        nameHits[doc] += inName[at];
      }
    }
    const coverage = this.ranking.nameCoverage * bestIdf;
    const top = new TopK(k);
    for (const doc of touched) {
      const tool = index.tools[doc];
      let score = scores[doc];
      if (coverage > 0 && tool.nameTerms > 0) score += (coverage * nameHits[doc]) / tool.nameTerms;
      scores[doc] = 0;
      nameHits[doc] = 0;
      if (filter !== undefined && !filter(tool.descriptor, doc)) continue;
      top.offer(doc, score, tool.descriptor.name);
    }
    return top.sorted().map(({ doc, score }) => ({ descriptor: index.tools[doc].descriptor, score }));
  }

  /** The tools that pass `filter`, in index order (for the regex mode). */
  forEach(visit: (descriptor: ToolDescriptor, position: number) => void): void {
    this.tools.forEach((tool, position) => visit(tool.descriptor, position));
  }

  /** Unique known terms of the query (and their related terms, weighed less) with their weighted IDF, the `MAX_QUERY_TERMS` that weigh most. */
  private queryTermIds(query: string, offsets: Int32Array, count: number): { id: number; idf: number }[] {
    const weights = new Map<number, number>();
    const consider = (term: string, weight: number): void => {
      const id = this.termIds.get(term);
      if (id === undefined || id + 1 >= offsets.length || (weights.get(id) ?? 0) >= weight) return;
      if (offsets[id + 1] - offsets[id] > 0) weights.set(id, weight);
    };
    const synonymWeight = this.ranking.synonymWeight;
    for (const term of termsOf(query, MAX_QUERY_CHARS, MAX_QUERY_TERMS * 16)) {
      consider(term, 1);
      if (synonymWeight > 0) for (const related of relatedTerms(term)) consider(related, synonymWeight);
    }
    const terms: { id: number; idf: number }[] = [];
    for (const [id, weight] of weights) {
      const frequency = offsets[id + 1] - offsets[id];
      terms.push({ id, idf: weight * Math.log(1 + (count - frequency + 0.5) / (frequency + 0.5)) });
    }
    if (terms.length > MAX_QUERY_TERMS) terms.sort((a, b) => b.idf - a.idf).length = MAX_QUERY_TERMS;
    return terms;
  }

  private read(descriptor: ToolDescriptor): IndexedTool {
    const document = toolDocument(descriptor, this.scratchFields);
    const termList: number[] = [];
    const counts: number[] = [];
    const lengths = new Uint16Array(FIELD_COUNT);
    // Where each term of this tool sits in termList, by term id: a scratch array stamped per tool instead of a map per tool.
    const stamp = ++this.readStamp;
    document.fields.forEach((terms, field) => {
      lengths[field] = Math.min(terms.length, 65_535);
      for (const term of terms) {
        let id = this.termIds.get(term);
        if (id === undefined) {
          id = this.termIds.size;
          this.termIds.set(term, id);
        }
        if (id >= this.seenAt.length) this.growScratch(id);
        let position: number;
        if (this.seenBy[id] === stamp) {
          position = this.seenAt[id];
        } else {
          position = termList.length;
          this.seenBy[id] = stamp;
          this.seenAt[id] = position;
          termList.push(id);
          for (let slot = 0; slot < FIELD_COUNT; slot++) counts.push(0);
        }
        const slot = position * FIELD_COUNT + field;
        counts[slot] = Math.min(counts[slot] + 1, 65_535);
      }
    });
    let nameTerms = 0;
    for (let position = 0; position < termList.length; position++) if (counts[position * FIELD_COUNT + FIELD_NAME] > 0) nameTerms++;
    return { descriptor, terms: Int32Array.from(termList), frequencies: Uint16Array.from(counts), lengths, nameTerms };
  }

  private growScratch(id: number): void {
    const size = Math.max(1_024, 2 * (id + 1));
    const seenBy = new Int32Array(size);
    const seenAt = new Int32Array(size);
    seenBy.set(this.seenBy);
    seenAt.set(this.seenAt);
    this.seenBy = seenBy;
    this.seenAt = seenAt;
  }

  /** Lays out the postings: one counting pass, one filling pass. */
  private compile(): CompiledIndex {
    if (this.compiled !== undefined) return this.compiled;
    const tools = this.tools;
    const termCount = this.termIds.size;
    const { k1, weights: fieldWeights, b } = this.ranking;
    const averages = new Float64Array(FIELD_COUNT);
    for (const tool of tools) for (let field = 0; field < FIELD_COUNT; field++) averages[field] += tool.lengths[field];
    for (let field = 0; field < FIELD_COUNT; field++) averages[field] = Math.max(1, averages[field] / Math.max(1, tools.length));
    const offsets = new Int32Array(termCount + 1);
    for (const tool of tools) for (const id of tool.terms) offsets[id + 1]++;
    for (let id = 0; id < termCount; id++) offsets[id + 1] += offsets[id];
    const total = offsets[termCount];
    const docs = new Int32Array(total);
    const weights = new Float32Array(total);
    const inName = new Uint8Array(total);
    const fill = offsets.slice(0, termCount);
    const norms = new Float64Array(FIELD_COUNT);
    tools.forEach((tool, doc) => {
      for (let field = 0; field < FIELD_COUNT; field++) {
        norms[field] = (fieldWeights[field] ?? 0) / (1 - (b[field] ?? 0) + ((b[field] ?? 0) * tool.lengths[field]) / averages[field]);
      }
      for (let position = 0; position < tool.terms.length; position++) {
        let frequency = 0;
        const base = position * FIELD_COUNT;
        for (let field = 0; field < FIELD_COUNT; field++) frequency += tool.frequencies[base + field] * norms[field];
        const id = tool.terms[position];
        const at = fill[id]++;
        docs[at] = doc;
        weights[at] = (frequency * (k1 + 1)) / (k1 + frequency);
        inName[at] = tool.frequencies[base + FIELD_NAME] > 0 ? 1 : 0;
      }
    });
    if (this.scores.length < tools.length) {
      this.scores = new Float64Array(tools.length);
      this.nameHits = new Uint16Array(tools.length);
    }
    this.compiled = { tools, offsets, docs, weights, inName };
    return this.compiled;
  }
}

/** Whether two descriptors of one name read into the same terms. */
function sameText(a: ToolDescriptor, b: ToolDescriptor): boolean {
  return a === b || (a.description === b.description && a.source === b.source && a.inputSchema === b.inputSchema);
}

/** The best `k` entries offered, kept in a min-heap (the worst on top). */
class TopK {
  private readonly heap: { doc: number; score: number; name: string }[] = [];

  constructor(private readonly k: number) {}

  offer(doc: number, score: number, name: string): void {
    const heap = this.heap;
    if (heap.length < this.k) {
      heap.push({ doc, score, name });
      this.up(heap.length - 1);
    } else if (better(score, name, heap[0])) {
      heap[0] = { doc, score, name };
      this.down(0);
    }
  }

  sorted(): { doc: number; score: number }[] {
    return [...this.heap].sort((a, b) => (better(a.score, a.name, b) ? -1 : 1));
  }

  private up(index: number): void {
    const heap = this.heap;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!better(heap[parent].score, heap[parent].name, heap[index])) break;
      [heap[parent], heap[index]] = [heap[index], heap[parent]];
      index = parent;
    }
  }

  private down(index: number): void {
    const heap = this.heap;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let worst = index;
      if (left < heap.length && better(heap[worst].score, heap[worst].name, heap[left])) worst = left;
      if (right < heap.length && better(heap[worst].score, heap[worst].name, heap[right])) worst = right;
      if (worst === index) return;
      [heap[worst], heap[index]] = [heap[index], heap[worst]];
      index = worst;
    }
  }
}

/** Higher score first, then the name that sorts first. */
function better(score: number, name: string, than: { score: number; name: string }): boolean {
  return score > than.score || (score === than.score && name < than.name);
}
