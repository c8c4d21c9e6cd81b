import { termsOf } from './search-text';

/**
 * How a question is read beyond its words. Tools are described in the
 * words of what they do; people ask in the words of a request ("could you
 * help me", "I want to know"), name values instead of what they are ("$20",
 * "at 7 pm", "report.pdf"), and ask "when" for a date. None of this is
 * about any one catalog: it is how English requests are written.
 */

/**
 * Words that frame a request rather than say what it is about: wishes and
 * asks ("want", "need", "help", "tell", "know"), links between several asks
 * ("additionally", "afterwards"), hedges and greetings. Words that are as
 * often what a request is about are not among them ("interest", "second",
 * "last", "next", "final", "task", "function"; "lastly" is not either: it
 * stems to "last"). A query's framing
 * words weigh a tenth of its other words (the index's ranking settings), and
 * are never dropped: a tool named `help` is still found by "help".
 */
export const FRAMING_WORDS: ReadonlySet<string> = new Set(
  termsOf(
    'want wants wanted wanting need needs needed like love wish hope hoping help helping assist assistance tell know give provide ' +
      'curious wonder wondering thing things imagine suppose assume consider afterwards additionally ' +
      'moreover furthermore besides thanks thank sure okay ok able possible really actually use using us hi hello hey',
  ),
);

/** Question words, and what a tool that answers them speaks of ("when was it signed" asks for a date). */
const QUESTION_WORDS: readonly (readonly [RegExp, readonly string[]])[] = [
  [/\bwhen\b/, ['date', 'time']],
  [/\bwhere\b/, ['location', 'place', 'address']],
  [/\bwho(?:m|se)?\b/, ['person', 'name']],
  [/\bhow (?:much|expensive)\b/, ['price', 'cost', 'amount']],
  [/\bhow many\b/, ['number', 'count']],
  [/\bhow long\b/, ['duration', 'time', 'length']],
  [/\bhow far\b/, ['distance']],
  [/\bwhat time\b/, ['time']],
];

const MONTH = '(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]{0,6}';

/**
 * Values a question names, and the words for what they are. Every pattern
 * has bounded repetition, so a hostile query of 10,000 characters costs a
 * linear pass per pattern.
 */
const VALUE_KINDS: readonly (readonly [RegExp, readonly string[]])[] = [
  [/[$€£¥]\s?\d|\b\d{1,15}(?:[.,]\d{1,15})?\s?(?:usd|eur|gbp|jpy|dollars?|euros?)\b/i, ['price', 'amount', 'cost', 'money']],
  [/\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}:\d{2}\b/i, ['time']],
  [
    new RegExp(
      `\\b\\d{4}-\\d{2}-\\d{2}\\b|\\b\\d{1,2}/\\d{1,2}/\\d{2,4}\\b|\\b${MONTH}\\.?\\s{1,3}\\d{1,2}(?:st|nd|rd|th)?\\b|\\b\\d{1,2}(?:st|nd|rd|th)?\\s{1,3}(?:of\\s{1,3})?${MONTH}\\b`,
      'i',
    ),
    ['date'],
  ],
  [/\d\s?%|\bpercent(?:age)?\b/i, ['percent', 'percentage', 'rate']],
  [/\bhttps?:\/\/|\bwww\./i, ['url', 'website', 'link']],
  [/[\w.+-]{1,64}@[\w-]{1,64}\.[a-z]{2,10}\b/i, ['email', 'address']],
  [/\.(?:pdf|csv|txt|json|xml|yaml|yml|png|jpe?g|gif|md|docx?|xlsx?|pptx?|zip|log)\b/i, ['file']],
  [/\b\d{1,3}(?:\.\d{1,3}){3}\b/, ['ip', 'address']],
];

let conceptTerms: Map<readonly string[], readonly string[]> | undefined;

function termsFor(words: readonly string[]): readonly string[] {
  conceptTerms ??= new Map();
  let terms = conceptTerms.get(words);
  if (terms === undefined) {
    terms = [...new Set(words.flatMap((word) => termsOf(word)))];
    conceptTerms.set(words, terms);
  }
  return terms;
}

/**
 * The terms of what a question's question words and values stand for:
 * "When was the treaty signed?" → `date`, `time`; "a table at 7 pm" → `time`;
 * "convert $20" → `price`, `amount`, `cost`, `money`. Each once.
 */
export function conceptsOf(text: string): string[] {
  const lower = text.toLowerCase();
  const found = new Set<string>();
  for (const [pattern, words] of QUESTION_WORDS) if (pattern.test(lower)) for (const term of termsFor(words)) found.add(term);
  for (const [pattern, words] of VALUE_KINDS) if (pattern.test(text)) for (const term of termsFor(words)) found.add(term);
  return [...found];
}

/** How many leading letters two terms must share to be read as forms of one word. */
export const VARIANT_PREFIX = 5;
/** How many letters longer than the other a form of the same word may be. */
const VARIANT_SLACK = 3;

/**
 * Whether two stems are forms of one word that the stemmer keeps apart:
 * one starts with the other, they share at least {@link VARIANT_PREFIX}
 * letters, and differ by at most three (`discov`/`discoveri`,
 * `histor`/`histori`, `nutrit`/`nutrition`).
 */
export function isVariant(term: string, other: string): boolean {
  if (term === other || term.length < VARIANT_PREFIX || other.length < VARIANT_PREFIX) return false;
  if (Math.abs(term.length - other.length) > VARIANT_SLACK) return false;
  return term.length < other.length ? other.startsWith(term) : term.startsWith(other);
}
