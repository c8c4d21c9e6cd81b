import type { ToolDescriptor } from '../tool';
import { conceptsOf, FRAMING_WORDS, isVariant, VARIANT_PREFIX } from './query-text';
import { FIELD_COUNT, FIELD_DESCRIPTION, FIELD_NAME, toolDocument } from './tool-document';
import { relatedTerms, termsOf } from './search-text';

/**
 * How the lexical ranking weighs what it finds: BM25F, each field with its
 * own weight and length normalisation, one saturation over the weighted sum,
 * plus a bonus for covering a tool's name and one for the query's adjacent
 * words found side by side in the tool. Chosen on generic grounds (a tool's
 * name says most about it, its arguments' descriptions least, and short
 * names should not be punished for being short); a change is kept only when
 * it does not lose on the tuning part of the BFCL questions, and the
 * held-out part is never tuned on (see the README and the data set's
 * SOURCE.md).
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
  /** Weight of a word that frames the request (query-text.ts: "want", "help me", "tell me"). */
  readonly framingWeight: number;
  /** Weight of another form of a query word that the stemmer keeps apart (`discovery` for "discovered"); 0: none. */
  readonly variantWeight: number;
  /** Weight of what a question word or a value of the query stands for ("when" → date; "$20" → price); 0: none. */
  readonly conceptWeight: number;
  /**
   * Added per pair of adjacent query words that also stand side by side in
   * the tool's name, description or argument names, times the smaller IDF
   * of the two; 0: none.
   */
  readonly pairWeight: number;
  /** How many of the best tools by words the pair bonus may reorder (at least the search's k). */
  readonly pairDepth: number;
}

/** @internal The ranking the index uses unless told otherwise (tests and the benchmark compare others). */
export const DEFAULT_RANKING: RankingSettings = {
  k1: 1.2,
  weights: [2, 1, 1, 0.5, 1],
  b: [0.3, 0.75, 0.5, 0.75, 0],
  nameCoverage: 1,
  synonymWeight: 0.2,
  framingWeight: 0.1,
  variantWeight: 0.5,
  conceptWeight: 0.3,
  pairWeight: 0.5,
  pairDepth: 20,
};

/** One indexed tool: its descriptor and its terms, compactly. */
interface IndexedTool {
  readonly descriptor: ToolDescriptor;
  /**
   * Term ids, each once (the first `termCount`), then the tool's pairs of
   * adjacent terms in its name and in its description, each pair unordered
   * and hashed to 32 bits, sorted and unique (for the pair bonus). One array
   * for both: a typed array costs more than its contents at this size.
   */
  readonly ids: Int32Array;
  readonly termCount: number;
  /** Frequency of each term in each field: `frequencies[i * FIELD_COUNT + field]`. */
  readonly frequencies: Uint16Array;
  /** Terms per field. */
  readonly lengths: Uint16Array;
  /** How many distinct terms the name has, not counting numbers (`Hotels_2_Search`: 2; nobody asks for the 2). */
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

/** A term of the query, with its IDF times its weight. */
interface QueryTerm {
  readonly id: number;
  readonly idf: number;
}

/** What a query is read into. */
interface ReadQuery {
  readonly terms: readonly QueryTerm[];
  /** Hashed pairs of adjacent query words (framing words left out), sorted and unique. */
  readonly pairs: Int32Array;
  /** The smaller IDF of the two words of each pair, in the order of `pairs`. */
  readonly pairIdfs: Float64Array;
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
  /** Each term by id. */
  private readonly termNames: string[] = [];
  /** Terms of letters by their first VARIANT_PREFIX letters, for the forms of a word the stemmer keeps apart. */
  private readonly byPrefix = new Map<string, number[]>();
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
      this.termNames.length = 0;
      this.byPrefix.clear();
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
    for (const [name, tool] of this.byName) if (!byName.has(name)) this.deadTerms += tool.termCount;
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
    const { terms: queryTerms, pairs, pairIdfs } = this.readQuery(query, offsets, count);
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
    const pairWeight = this.ranking.pairWeight;
    const byPairs = pairWeight > 0 && pairs.length > 0;
    const top = new TopK(byPairs ? Math.max(k, this.ranking.pairDepth) : k);
    for (const doc of touched) {
      const tool = index.tools[doc];
      let score = scores[doc];
      if (coverage > 0 && tool.nameTerms > 0) score += (coverage * nameHits[doc]) / tool.nameTerms;
      scores[doc] = 0;
      nameHits[doc] = 0;
      if (filter !== undefined && !filter(tool.descriptor, doc)) continue;
      top.offer(doc, score, tool.descriptor.name);
    }
    let ranked = top.sorted();
    if (byPairs) {
      ranked = ranked
        .map(({ doc, score }) => {
          const tool = index.tools[doc];
          const bonus = sharedWeight(pairs, pairIdfs, tool.ids, tool.termCount);
          return { doc, score: score + pairWeight * bonus, name: index.tools[doc].descriptor.name };
        })
        .sort((a, b) => (better(a.score, a.name, b) ? -1 : 1))
        .slice(0, k);
    }
    return ranked.map(({ doc, score }) => ({ descriptor: index.tools[doc].descriptor, score }));
  }

  /** The tools that pass `filter`, in index order (for the regex mode). */
  forEach(visit: (descriptor: ToolDescriptor, position: number) => void): void {
    this.tools.forEach((tool, position) => visit(tool.descriptor, position));
  }

  /**
   * Unique known terms of the query with their weighted IDF, the
   * `MAX_QUERY_TERMS` that weigh most: its words (framing words weighed
   * less), and weighed less still, their related words, other forms of them,
   * and what its question words and values stand for. Then the pairs of its
   * adjacent words.
   */
  private readQuery(query: string, offsets: Int32Array, count: number): ReadQuery {
    const text = query.length > MAX_QUERY_CHARS ? query.slice(0, MAX_QUERY_CHARS) : query;
    const ranking = this.ranking;
    const weights = new Map<number, number>();
    const known = (id: number | undefined): id is number => id !== undefined && id + 1 < offsets.length && offsets[id + 1] - offsets[id] > 0;
    const consider = (term: string, weight: number): void => {
      const id = this.termIds.get(term);
      if (known(id) && (weights.get(id) ?? 0) < weight) weights.set(id, weight);
    };
    const sequence = termsOf(text, MAX_QUERY_CHARS, MAX_QUERY_TERMS * 16);
    for (const term of new Set(sequence)) {
      if (FRAMING_WORDS.has(term)) {
        consider(term, ranking.framingWeight);
        continue;
      }
      consider(term, 1);
      if (ranking.synonymWeight > 0) for (const related of relatedTerms(term)) consider(related, ranking.synonymWeight);
      if (ranking.variantWeight > 0 && term.length >= VARIANT_PREFIX) {
        for (const id of this.byPrefix.get(term.slice(0, VARIANT_PREFIX)) ?? NO_IDS) {
          if (isVariant(term, this.termNames[id])) consider(this.termNames[id], ranking.variantWeight);
        }
      }
    }
    if (ranking.conceptWeight > 0) for (const term of conceptsOf(text)) consider(term, ranking.conceptWeight);
    const idfOf = (id: number): number => {
      const frequency = offsets[id + 1] - offsets[id];
      return Math.log(1 + (count - frequency + 0.5) / (frequency + 0.5));
    };
    const terms: QueryTerm[] = [];
    for (const [id, weight] of weights) terms.push({ id, idf: weight * idfOf(id) });
    if (terms.length > MAX_QUERY_TERMS) terms.sort((a, b) => b.idf - a.idf).length = MAX_QUERY_TERMS;
    const idfByPair = new Map<number, number>();
    if (ranking.pairWeight > 0) {
      for (let at = 0; at + 1 < sequence.length && idfByPair.size < MAX_QUERY_TERMS; at++) {
        const first = this.termIds.get(sequence[at]);
        const second = this.termIds.get(sequence[at + 1]);
        if (!known(first) || !known(second) || first === second) continue;
        if (FRAMING_WORDS.has(sequence[at]) || FRAMING_WORDS.has(sequence[at + 1])) continue;
        idfByPair.set(pairHash(first, second), Math.min(idfOf(first), idfOf(second)));
      }
    }
    const pairs = Int32Array.from(idfByPair.keys()).sort();
    const pairIdfs = Float64Array.from(pairs, (hash) => idfByPair.get(hash) ?? 0);
    return { terms, pairs, pairIdfs };
  }

  private read(descriptor: ToolDescriptor): IndexedTool {
    const document = toolDocument(descriptor, this.scratchFields);
    const termList: number[] = [];
    const counts: number[] = [];
    const lengths = new Uint16Array(FIELD_COUNT);
    // Where each term of this tool sits in termList, by term id: a scratch array stamped per tool instead of a map per tool.
    const stamp = ++this.readStamp;
    const pairList: number[] = [];
    document.fields.forEach((terms, field) => {
      lengths[field] = Math.min(terms.length, 65_535);
      const paired = field === FIELD_NAME || field === FIELD_DESCRIPTION;
      let previous = -1;
      for (const term of terms) {
        let id = this.termIds.get(term);
        if (id === undefined) id = this.newTerm(term);
        if (paired) {
          if (previous >= 0 && previous !== id) pairList.push(pairHash(previous, id));
          previous = id;
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
    for (let position = 0; position < termList.length; position++) {
      if (counts[position * FIELD_COUNT + FIELD_NAME] > 0 && !isNumber(this.termNames[termList[position]])) nameTerms++;
    }
    const pairs = uniqueSorted(pairList);
    const ids = new Int32Array(termList.length + pairs.length);
    ids.set(termList);
    ids.set(pairs, termList.length);
    return { descriptor, ids, termCount: termList.length, frequencies: Uint16Array.from(counts), lengths, nameTerms };
  }

  private newTerm(term: string): number {
    const id = this.termIds.size;
    this.termIds.set(term, id);
    this.termNames.push(term);
    if (term.length >= VARIANT_PREFIX && isLetters(term)) {
      const key = term.slice(0, VARIANT_PREFIX);
      const ids = this.byPrefix.get(key);
      if (ids === undefined) this.byPrefix.set(key, [id]);
      else ids.push(id);
    }
    return id;
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
    for (const tool of tools) for (let position = 0; position < tool.termCount; position++) offsets[tool.ids[position] + 1]++;
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
      for (let position = 0; position < tool.termCount; position++) {
        let frequency = 0;
        const base = position * FIELD_COUNT;
        for (let field = 0; field < FIELD_COUNT; field++) frequency += tool.frequencies[base + field] * norms[field];
        const id = tool.ids[position];
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

const NO_IDS: readonly number[] = [];

function isNumber(term: string): boolean {
  for (let index = 0; index < term.length; index++) {
    const code = term.charCodeAt(index);
    if (code < 48 || code > 57) return false;
  }
  return term.length > 0;
}

function isLetters(term: string): boolean {
  for (let index = 0; index < term.length; index++) {
    const code = term.charCodeAt(index);
    if (code < 97 || code > 122) return false;
  }
  return true;
}

/** An unordered pair of term ids hashed to 32 bits. */
function pairHash(a: number, b: number): number {
  const low = a < b ? a : b;
  const high = a < b ? b : a;
  return Math.imul(low, 0x9e3779b1) ^ Math.imul(high + 0x7f4a7c15, 0x85ebca6b);
}

function uniqueSorted(values: number[]): number[] {
  values.sort((a, b) => a - b);
  let length = 0;
  for (let index = 0; index < values.length; index++) if (index === 0 || values[index] !== values[index - 1]) values[length++] = values[index];
  values.length = length;
  return values;
}

/** The summed weights of the query's pairs that the tool's pairs (`own` from `from` on) hold too, both sorted: one merging pass. */
function sharedWeight(pairs: Int32Array, weights: Float64Array, own: Int32Array, from: number): number {
  let total = 0;
  let at = 0;
  let other = from;
  while (at < pairs.length && other < own.length) {
    const hash = pairs[at];
    const held = own[other];
    if (hash === held) {
      total += weights[at];
      at++;
      other++;
    } else if (hash < held) {
      at++;
    } else {
      other++;
    }
  }
  return total;
}

/** Whether two descriptors of one name read into the same terms. */
function sameText(a: ToolDescriptor, b: ToolDescriptor): boolean {
  return a === b || (a.description === b.description && a.source === b.source && a.inputSchema === b.inputSchema);
}

/** The best `k` entries offered, kept in a min-heap (the worst on top), in parallel arrays: no object per offer. */
class TopK {
  private readonly docs: Int32Array;
  private readonly scores: Float64Array;
  private readonly names: string[];
  private length = 0;

  constructor(private readonly k: number) {
    this.docs = new Int32Array(k);
    this.scores = new Float64Array(k);
    this.names = new Array<string>(k);
  }

  offer(doc: number, score: number, name: string): void {
    if (this.length < this.k) {
      this.set(this.length, doc, score, name);
      this.up(this.length++);
    } else if (score > this.scores[0] || (score === this.scores[0] && name < this.names[0])) {
      this.set(0, doc, score, name);
      this.down(0);
    }
  }

  sorted(): { doc: number; score: number; name: string }[] {
    const entries: { doc: number; score: number; name: string }[] = [];
    for (let at = 0; at < this.length; at++) entries.push({ doc: this.docs[at], score: this.scores[at], name: this.names[at] });
    return entries.sort((a, b) => (better(a.score, a.name, b) ? -1 : 1));
  }

  private set(at: number, doc: number, score: number, name: string): void {
    this.docs[at] = doc;
    this.scores[at] = score;
    this.names[at] = name;
  }

  /** Whether the entry at `a` ranks above the one at `b`. */
  private above(a: number, b: number): boolean {
    const scores = this.scores;
    return scores[a] > scores[b] || (scores[a] === scores[b] && this.names[a] < this.names[b]);
  }

  private swap(a: number, b: number): void {
    const { docs, scores, names } = this;
    const doc = docs[a];
    const score = scores[a];
    const name = names[a];
    docs[a] = docs[b];
    scores[a] = scores[b];
    names[a] = names[b];
    docs[b] = doc;
    scores[b] = score;
    names[b] = name;
  }

  private up(index: number): void {
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.above(parent, index)) break;
      this.swap(parent, index);
      index = parent;
    }
  }

  private down(index: number): void {
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let worst = index;
      if (left < this.length && this.above(worst, left)) worst = left;
      if (right < this.length && this.above(worst, right)) worst = right;
      if (worst === index) return;
      this.swap(worst, index);
      index = worst;
    }
  }
}

/** Higher score first, then the name that sorts first. */
function better(score: number, name: string, than: { score: number; name: string }): boolean {
  return score > than.score || (score === than.score && name < than.name);
}
