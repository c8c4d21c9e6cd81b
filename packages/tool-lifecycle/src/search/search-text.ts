import { stemEnglish } from './english-stemmer';
import { synonymEntries } from './synonyms';

/**
 * Words of free text and of identifiers, as the index and the queries see
 * them: lowercase, accents dropped, identifiers split (`getWeather`,
 * `get_weather`, `get-weather`, `weather.get`, `ipv4Address` → `get`,
 * `weather`, `ipv`, `4`, `address`), English stop words dropped, and each
 * English word stemmed (`calculating` → `calcul`). Runs of scripts written
 * without spaces (Han, kana, Hangul, Thai, …) become overlapping character
 * pairs, so that a Chinese question can match a Chinese description.
 */

/** One word of letters or digits; identifiers are split further. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** camelCase and letter/digit boundaries inside a word. */
const BOUNDARY = /(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u;
/** Letters of scripts written without spaces between words. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const COMBINING = /\p{M}+/gu;

/**
 * Adds the terms of `text` to `out` (stemmed, stop words dropped), reading at
 * most `maxChars` characters of it and adding at most `maxTerms` terms.
 * Returns how many were added.
 */
export function addTerms(text: string, out: string[], maxChars: number, maxTerms: number): number {
  const start = out.length;
  const limit = start + maxTerms;
  const source = text.length > maxChars ? text.slice(0, maxChars) : text;
  if (addAsciiTerms(source, out, limit)) return out.length - start;
  out.length = start;
  WORD.lastIndex = 0;
  for (let match = WORD.exec(source); match !== null && out.length < limit; match = WORD.exec(source)) {
    addWord(match[0], out, limit);
  }
  return out.length - start;
}

/** The terms of `text`, as {@link addTerms} makes them. */
export function termsOf(text: string, maxChars = 100_000, maxTerms = 10_000): string[] {
  const out: string[] = [];
  addTerms(text, out, maxChars, maxTerms);
  return out;
}

const OTHER = 0;
const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;

function classOf(code: number): number {
  if (code >= 97 && code <= 122) return LOWER;
  if (code >= 65 && code <= 90) return UPPER;
  if (code >= 48 && code <= 57) return DIGIT;
  return OTHER;
}

/**
 * The same split as the general path, for ASCII text (nearly every tool's),
 * in one pass over the characters instead of several regular expressions.
 * Returns `false`, having added some terms, at the first character beyond
 * ASCII: the caller then drops them and takes the general path.
 */
function addAsciiTerms(text: string, out: string[], limit: number): boolean {
  let start = -1;
  let previous = OTHER;
  let lower: string | undefined;
  const length = text.length;
  for (let index = 0; index <= length && out.length < limit; index++) {
    const code = index < length ? text.charCodeAt(index) : 32;
    if (code > 127) return false;
    const current = classOf(code);
    let end = -1;
    if (current === OTHER) {
      if (start >= 0) end = index;
    } else if (start < 0) {
      start = index;
    } else if (
      (previous === LOWER && current === UPPER) ||
      (previous === DIGIT) !== (current === DIGIT) ||
      (previous === UPPER && current === UPPER && index + 1 < length && classOf(text.charCodeAt(index + 1)) === LOWER)
    ) {
      end = index;
    }
    if (end >= 0) {
      lower ??= text.toLowerCase();
      const term = termOf(lower.slice(start, end));
      if (term !== undefined) out.push(term);
      start = current === OTHER ? -1 : index;
    }
    previous = current;
  }
  return true;
}

function addWord(word: string, out: string[], limit: number): void {
  const parts = word.length > 1 && /[\p{Lu}\p{N}]/u.test(word) ? word.split(BOUNDARY) : [word];
  for (const part of parts) {
    if (out.length >= limit) return;
    const plain = foldCase(part);
    if (plain.length === 0) continue;
    if (UNSPACED.test(plain)) {
      addUnspaced(plain, out, limit);
      continue;
    }
    const term = termOf(plain);
    if (term !== undefined) out.push(term);
  }
}

/** Lowercase without accents (`Café` → `cafe`), as compatibility characters are folded (`ﬁ` → `fi`). */
function foldCase(word: string): string {
  let lower = word.toLowerCase();
  // ASCII needs no normalisation, and is nearly every word a tool is described with.
  if (!isAscii(lower)) lower = lower.normalize('NFKD').replace(COMBINING, '');
  return lower;
}

function isAscii(text: string): boolean {
  for (let index = 0; index < text.length; index++) if (text.charCodeAt(index) > 127) return false;
  return true;
}

const stems = new Map<string, string | null>();
const MAX_CACHED_STEMS = 50_000;

/** The indexed form of one lowercase word, or `undefined` for a stop word. */
function termOf(word: string): string | undefined {
  const cached = stems.get(word);
  if (cached !== undefined) return cached ?? undefined;
  const term = STOP_WORDS.has(word) ? null : stemEnglish(word);
  if (stems.size >= MAX_CACHED_STEMS) stems.clear();
  stems.set(word, term);
  return term ?? undefined;
}

let related: Map<string, readonly string[]> | undefined;

/** The terms related to `term` (a term as {@link termsOf} makes them), by the synonyms of `synonyms.ts`. */
export function relatedTerms(term: string): readonly string[] {
  related ??= relatedByTerm();
  return related.get(term) ?? NONE;
}

const NONE: readonly string[] = [];

function relatedByTerm(): Map<string, readonly string[]> {
  const byTerm = new Map<string, Set<string>>();
  for (const [word, others] of synonymEntries()) {
    const term = termOf(word);
    if (term === undefined) continue;
    let set = byTerm.get(term);
    if (set === undefined) byTerm.set(term, (set = new Set()));
    for (const other of others) {
      const otherTerm = termOf(other);
      if (otherTerm !== undefined && otherTerm !== term) set.add(otherTerm);
    }
  }
  return new Map([...byTerm].map(([term, set]) => [term, [...set]]));
}

/** Overlapping pairs of the unspaced letters (a lone letter stays as it is); other runs as words. */
function addUnspaced(word: string, out: string[], limit: number): void {
  const letters = [...word];
  let run: string[] = [];
  const flush = (): void => {
    if (run.length === 1) out.push(run[0] as string);
    for (let index = 0; index + 1 < run.length && out.length < limit; index++) out.push(run[index] + run[index + 1]);
    run = [];
  };
  let other = '';
  for (const letter of letters) {
    if (out.length >= limit) return;
    if (UNSPACED.test(letter)) {
      if (other.length > 0) {
        const term = termOf(other);
        if (term !== undefined) out.push(term);
        other = '';
      }
      run.push(letter);
    } else {
      flush();
      other += letter;
    }
  }
  flush();
  if (other.length > 0 && out.length < limit) {
    const term = termOf(other);
    if (term !== undefined) out.push(term);
  }
}

/**
 * English words that say nothing about which tool is meant: articles,
 * pronouns, auxiliaries, prepositions and conjunctions, and the politeness of
 * a request ("please", "could you"). Verbs that name what a tool does
 * (`get`, `find`, `list`, `show`) are kept.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him himself his how ' +
    'i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own ' +
    'same she should so some such than that the their theirs them themselves then there these they this those through to too under until up ' +
    'very was we were what when where which while who whom why will with would you your yours yourself yourselves ' +
    's t d ll m re ve don doesn didn isn aren wasn weren hasn haven hadn won wouldn shouldn couldn mustn needn ' +
    'please kindly may might must shall let lets also'
  ).split(' '),
);
