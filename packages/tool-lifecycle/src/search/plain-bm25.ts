/**
 * The baseline a tool search is measured against: plain Okapi BM25 (k1 1.2,
 * b 0.75) over one bag of words per tool — its name, description, and its
 * arguments' names and descriptions — split on anything but letters and
 * digits and at camelCase, lowercased, with no stemming and no stop words.
 * Kept deliberately simple and separate from the runtime's index, so that a
 * fault in the index cannot flatter it.
 */
export class PlainBm25 {
  private readonly names: string[] = [];
  private readonly documents: Map<string, number>[] = [];
  private readonly lengths: number[] = [];
  private readonly frequencies = new Map<string, number>();
  private readonly average: number;

  constructor(tools: Iterable<{ readonly name: string; readonly description?: string; readonly inputSchema?: unknown }>) {
    let total = 0;
    for (const tool of tools) {
      const words = [...plainWords(tool.name), ...plainWords(tool.description ?? '')];
      const properties = (tool.inputSchema as { properties?: Record<string, { description?: unknown }> } | undefined)?.properties ?? {};
      for (const [name, property] of Object.entries(properties)) {
        words.push(...plainWords(name));
        if (typeof property?.description === 'string') words.push(...plainWords(property.description));
      }
      const counts = new Map<string, number>();
      for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
      for (const word of counts.keys()) this.frequencies.set(word, (this.frequencies.get(word) ?? 0) + 1);
      this.names.push(tool.name);
      this.documents.push(counts);
      this.lengths.push(words.length);
      total += words.length;
    }
    this.average = total / Math.max(1, this.names.length);
  }

  /** The names of the best `k` tools for `query`, best first. */
  search(query: string, k: number): string[] {
    const count = this.names.length;
    // Every word of the query counts, repeated ones as often as they occur (as rank_bm25 and most plain BM25s do).
    const terms = plainWords(query);
    const scored: { name: string; score: number }[] = [];
    this.documents.forEach((counts, doc) => {
      let score = 0;
      for (const term of terms) {
        const frequency = counts.get(term);
        if (frequency === undefined) continue;
        const df = this.frequencies.get(term) ?? 0;
        const idf = Math.log(1 + (count - df + 0.5) / (df + 0.5));
        score += (idf * frequency * 2.2) / (frequency + 1.2 * (0.25 + (0.75 * this.lengths[doc]) / this.average));
      }
      if (score > 0) scored.push({ name: this.names[doc], score });
    });
    return scored
      .sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : 1))
      .slice(0, k)
      .map((hit) => hit.name);
  }
}

/** Lowercase words: split at anything but letters and digits, and at camelCase. */
function plainWords(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}
