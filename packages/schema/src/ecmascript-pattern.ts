/**
 * Internal: reads an ECMAScript regular expression (the dialect of JSON
 * Schema's `pattern`, read with the `u` flag as ajv does) into a syntax tree
 * with the meaning `test` needs, and writes that tree in RE2 syntax, so that
 * the pattern can run on a linear-time engine.
 *
 * The input must already be a valid `u`-mode pattern (`new RegExp(source, 'u')`
 * accepted it): the parser relies on that and does not report syntax errors.
 * What no linear-time engine runs — lookahead, lookbehind, backreferences — is
 * refused with {@link UnsupportedPatternFeature}.
 *
 * Where the dialects differ in meaning, the translation spells out the
 * ECMAScript meaning: `.` excludes `\r`, U+2028 and U+2029 as well as `\n`;
 * `\s` is ECMAScript's Unicode white space (RE2's is ASCII only); `[^]` is any
 * character; every non-alphanumeric character is written as `\x{…}`, so no
 * RE2-only syntax (`\Q…\E`, `(?i)`, `\pL`) can slip through. Groups become
 * non-capturing: `test` never needs captures.
 */

/** A construct of the pattern that RE2 cannot run (lookaround, backreferences). */
export class UnsupportedPatternFeature extends Error {
  constructor(readonly feature: string) {
    super(feature);
    this.name = 'UnsupportedPatternFeature';
  }
}

/** The largest code point. */
export const MAX_CODE_POINT = 0x10ffff;

/** An inclusive range of code points. */
export type CodePointRange = readonly [number, number];

/**
 * The syntax tree of a pattern, as far as `test` cares: groups are gone
 * (captures never matter), laziness is gone (it changes which match is found,
 * never whether one exists).
 */
export type PatternNode =
  | { readonly type: 'empty' }
  /** One character of `ranges` or of the RE2 `properties` (`\\p{L}`, `\\P{Greek}`), or of none of them when `negated`. */
  | { readonly type: 'characters'; readonly negated: boolean; readonly ranges: readonly CodePointRange[]; readonly properties: readonly string[] }
  | { readonly type: 'sequence'; readonly items: readonly PatternNode[] }
  | { readonly type: 'alternation'; readonly items: readonly PatternNode[] }
  /** `max` is `Infinity` for an unbounded repetition. */
  | { readonly type: 'repeat'; readonly item: PatternNode; readonly min: number; readonly max: number }
  | { readonly type: 'assertion'; readonly kind: 'start' | 'end' | 'word-boundary' | 'not-word-boundary' };

/** ECMAScript's WhiteSpace and LineTerminator code points, as ranges (`\s`). */
const WHITE_SPACE: readonly CodePointRange[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const DIGIT: readonly CodePointRange[] = [[0x30, 0x39]];
const WORD: readonly CodePointRange[] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
/** Everything but the line terminators: ECMAScript's `.` without the `s` flag. */
const DOT: readonly CodePointRange[] = complement([
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
]);

/** ECMAScript's long General_Category names and aliases, to RE2's short ones. */
const GENERAL_CATEGORIES: Readonly<Record<string, string>> = {
  Cased_Letter: 'LC',
  Close_Punctuation: 'Pe',
  Connector_Punctuation: 'Pc',
  Control: 'Cc',
  cntrl: 'Cc',
  Currency_Symbol: 'Sc',
  Dash_Punctuation: 'Pd',
  Decimal_Number: 'Nd',
  digit: 'Nd',
  Enclosing_Mark: 'Me',
  Final_Punctuation: 'Pf',
  Format: 'Cf',
  Initial_Punctuation: 'Pi',
  Letter: 'L',
  Letter_Number: 'Nl',
  Line_Separator: 'Zl',
  Lowercase_Letter: 'Ll',
  Mark: 'M',
  Combining_Mark: 'M',
  Math_Symbol: 'Sm',
  Modifier_Letter: 'Lm',
  Modifier_Symbol: 'Sk',
  Nonspacing_Mark: 'Mn',
  Number: 'N',
  Open_Punctuation: 'Ps',
  Other: 'C',
  Other_Letter: 'Lo',
  Other_Number: 'No',
  Other_Punctuation: 'Po',
  Other_Symbol: 'So',
  Paragraph_Separator: 'Zp',
  Private_Use: 'Co',
  Punctuation: 'P',
  punct: 'P',
  Separator: 'Z',
  Space_Separator: 'Zs',
  Spacing_Mark: 'Mc',
  Surrogate: 'Cs',
  Symbol: 'S',
  Titlecase_Letter: 'Lt',
  Unassigned: 'Cn',
  Uppercase_Letter: 'Lu',
};

/** A set of characters while a class is read: ranges and RE2 property escapes. */
interface CharacterItems {
  readonly ranges: CodePointRange[];
  readonly properties: string[];
}

/**
 * Reads a valid `u`-mode ECMAScript pattern into its syntax tree.
 * @throws UnsupportedPatternFeature for lookahead, lookbehind and backreferences.
 */
export function parseEcmaScriptPattern(source: string): PatternNode {
  return new Parser(source).parse();
}

/**
 * Translates a valid `u`-mode ECMAScript pattern into RE2 syntax with the same meaning for `test`.
 * @throws UnsupportedPatternFeature for lookahead, lookbehind and backreferences.
 */
export function translateEcmaScriptPattern(source: string): string {
  return toRe2Syntax(parseEcmaScriptPattern(source));
}

class Parser {
  private index = 0;

  constructor(private readonly source: string) {}

  parse(): PatternNode {
    const node = this.disjunction();
    // A stray ')' cannot happen in a valid pattern; stop rather than drop input silently.
    if (this.index < this.source.length) throw new Error(`Unexpected "${this.source[this.index]}" at ${this.index}`);
    return node;
  }

  private peek(offset = 0): string | undefined {
    return this.source[this.index + offset];
  }

  private startsWith(text: string): boolean {
    return this.source.startsWith(text, this.index);
  }

  private disjunction(): PatternNode {
    const alternatives = [this.alternative()];
    while (this.peek() === '|') {
      this.index++;
      alternatives.push(this.alternative());
    }
    return alternatives.length === 1 ? alternatives[0] : { type: 'alternation', items: alternatives };
  }

  private alternative(): PatternNode {
    const items: PatternNode[] = [];
    while (this.index < this.source.length && this.peek() !== '|' && this.peek() !== ')') items.push(this.term());
    if (items.length === 0) return { type: 'empty' };
    return items.length === 1 ? items[0] : { type: 'sequence', items };
  }

  private term(): PatternNode {
    const char = this.peek();
    if (char === '^' || char === '$') {
      this.index++;
      return { type: 'assertion', kind: char === '^' ? 'start' : 'end' };
    }
    if (char === '\\' && (this.peek(1) === 'b' || this.peek(1) === 'B')) {
      this.index += 2;
      return { type: 'assertion', kind: this.source[this.index - 1] === 'b' ? 'word-boundary' : 'not-word-boundary' };
    }
    if (this.startsWith('(?=') || this.startsWith('(?!')) throw new UnsupportedPatternFeature('lookahead ((?=…) or (?!…))');
    if (this.startsWith('(?<=') || this.startsWith('(?<!')) throw new UnsupportedPatternFeature('lookbehind ((?<=…) or (?<!…))');
    const atom = this.atom();
    return this.quantified(atom);
  }

  private quantified(item: PatternNode): PatternNode {
    const char = this.peek();
    let min: number;
    let max: number;
    if (char === '*' || char === '+' || char === '?') {
      this.index++;
      min = char === '+' ? 1 : 0;
      max = char === '?' ? 1 : Infinity;
    } else if (char === '{') {
      const match = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.index));
      if (match === null) return item;
      this.index += match[0].length;
      min = Number(match[1]);
      max = match[2] === undefined ? min : match[3] === '' ? Infinity : Number(match[3]);
    } else {
      return item;
    }
    if (this.peek() === '?') this.index++;
    return { type: 'repeat', item, min, max };
  }

  private atom(): PatternNode {
    const char = this.peek();
    if (char === '.') {
      this.index++;
      return characters(false, { ranges: [...DOT], properties: [] });
    }
    if (char === '(') {
      if (this.startsWith('(?:')) this.index += 3;
      else if (this.startsWith('(?<')) this.index = this.source.indexOf('>', this.index) + 1;
      else this.index++;
      const inner = this.disjunction();
      this.index++; // ')'
      return inner;
    }
    if (char === '[') return this.characterClass();
    if (char === '\\') return this.atomEscape();
    const codePoint = this.codePoint();
    return characters(false, { ranges: [[codePoint, codePoint]], properties: [] });
  }

  private codePoint(): number {
    const value = this.source.codePointAt(this.index) as number;
    this.index += value > 0xffff ? 2 : 1;
    return value;
  }

  private atomEscape(): PatternNode {
    const letter = this.peek(1);
    if (letter !== undefined && letter >= '1' && letter <= '9') throw new UnsupportedPatternFeature(`a backreference (\\${letter})`);
    if (letter === 'k') throw new UnsupportedPatternFeature('a named backreference (\\k<…>)');
    const set = this.classEscape();
    if (set !== undefined) return characters(false, set);
    const codePoint = this.characterEscape();
    return characters(false, { ranges: [[codePoint, codePoint]], properties: [] });
  }

  /** `\d`, `\s`, `\w`, `\p{…}` and their negations; `undefined` for any other escape (nothing consumed). */
  private classEscape(): CharacterItems | undefined {
    const letter = this.peek(1);
    switch (letter) {
      case 'd':
      case 'D':
      case 's':
      case 'S':
      case 'w':
      case 'W': {
        this.index += 2;
        const lower = letter.toLowerCase();
        const ranges = lower === 'd' ? DIGIT : lower === 's' ? WHITE_SPACE : WORD;
        return { ranges: letter === lower ? [...ranges] : complement(ranges), properties: [] };
      }
      case 'p':
      case 'P': {
        const close = this.source.indexOf('}', this.index);
        const name = this.source.slice(this.index + 3, close);
        this.index = close + 1;
        return propertyItems(name, letter === 'P');
      }
      default:
        return undefined;
    }
  }

  /** A single-character escape after `\`, as its code point. */
  private characterEscape(): number {
    this.index++; // '\'
    const letter = this.source[this.index];
    this.index++;
    switch (letter) {
      case 'f':
        return 0x0c;
      case 'n':
        return 0x0a;
      case 'r':
        return 0x0d;
      case 't':
        return 0x09;
      case 'v':
        return 0x0b;
      case '0':
        return 0;
      case 'c':
        return this.source.charCodeAt(this.index++) % 32;
      case 'x': {
        const value = Number.parseInt(this.source.slice(this.index, this.index + 2), 16);
        this.index += 2;
        return value;
      }
      case 'u':
        return this.unicodeEscape();
      default:
        // Identity escapes: in u-mode only syntax characters, '/' and (in classes) '-'.
        this.index--;
        return this.codePoint();
    }
  }

  /** After `\u`: `{hex}`, `XXXX`, or a surrogate pair written as two escapes (one code point in u-mode). */
  private unicodeEscape(): number {
    if (this.peek() === '{') {
      const close = this.source.indexOf('}', this.index);
      const value = Number.parseInt(this.source.slice(this.index + 1, close), 16);
      this.index = close + 1;
      return value;
    }
    const value = Number.parseInt(this.source.slice(this.index, this.index + 4), 16);
    this.index += 4;
    if (value >= 0xd800 && value <= 0xdbff && /^\\u[dD][c-fC-F][0-9a-fA-F]{2}/.test(this.source.slice(this.index, this.index + 6))) {
      const trail = Number.parseInt(this.source.slice(this.index + 2, this.index + 6), 16);
      this.index += 6;
      return (value - 0xd800) * 0x400 + (trail - 0xdc00) + 0x10000;
    }
    return value;
  }

  private characterClass(): PatternNode {
    this.index++; // '['
    const negated = this.peek() === '^';
    if (negated) this.index++;
    const items: CharacterItems = { ranges: [], properties: [] };
    while (this.peek() !== ']') {
      const set = this.peek() === '\\' ? this.classEscape() : undefined;
      if (set !== undefined) {
        items.ranges.push(...set.ranges);
        items.properties.push(...set.properties);
        continue;
      }
      const low = this.classAtom();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        this.index++;
        items.ranges.push([low, this.classAtom()]);
      } else {
        items.ranges.push([low, low]);
      }
    }
    this.index++; // ']'
    return characters(negated, items);
  }

  /** One character of a class: a literal, or an escape (`\b` is a backspace here, `\-` a hyphen). */
  private classAtom(): number {
    if (this.peek() !== '\\') return this.codePoint();
    if (this.peek(1) === 'b') {
      this.index += 2;
      return 0x08;
    }
    return this.characterEscape();
  }
}

function characters(negated: boolean, items: CharacterItems): PatternNode {
  return { type: 'characters', negated, ranges: normaliseRanges(items.ranges), properties: [...new Set(items.properties)] };
}

/** Sorted, merged ranges. */
export function normaliseRanges(ranges: readonly CodePointRange[]): CodePointRange[] {
  const sorted = [...ranges].sort((left, right) => left[0] - right[0]);
  const merged: [number, number][] = [];
  for (const [low, high] of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && low <= last[1] + 1) last[1] = Math.max(last[1], high);
    else merged.push([low, high]);
  }
  return merged;
}

function propertyItems(expression: string, negated: boolean): CharacterItems {
  const separator = expression.indexOf('=');
  const key = separator === -1 ? undefined : expression.slice(0, separator);
  const value = separator === -1 ? expression : expression.slice(separator + 1);
  if (key === 'Script_Extensions' || key === 'scx') throw new UnsupportedPatternFeature(`the Unicode property \\p{${expression}} (Script_Extensions)`);
  if (key === undefined && value === 'Any') return { ranges: negated ? [] : [[0, MAX_CODE_POINT]], properties: [] };
  if (key === undefined && value === 'ASCII') return { ranges: negated ? [[0x80, MAX_CODE_POINT]] : [[0, 0x7f]], properties: [] };
  if (key === undefined && value === 'Assigned') return { ranges: [], properties: [negated ? '\\p{Cn}' : '\\P{Cn}'] };
  // General categories by their short names; scripts (Script=, sc=) by their long names (Greek, Latin), as both dialects write them.
  const name =
    (key === undefined || key === 'General_Category' || key === 'gc') && Object.hasOwn(GENERAL_CATEGORIES, value) ? GENERAL_CATEGORIES[value] : value;
  return { ranges: [], properties: [`\\${negated ? 'P' : 'p'}{${name}}`] };
}

/** The code points not in `ranges` (sorted, disjoint). */
export function complement(ranges: readonly CodePointRange[]): [number, number][] {
  const result: [number, number][] = [];
  let next = 0;
  for (const [low, high] of ranges) {
    if (low > next) result.push([next, low - 1]);
    next = Math.max(next, high + 1);
  }
  if (next <= MAX_CODE_POINT) result.push([next, MAX_CODE_POINT]);
  return result;
}

/** A class that matches no character (RE2 accepts an empty negated full range). */
const NOTHING = `[^${hex(0)}-${hex(MAX_CODE_POINT)}]`;

/**
 * Writes a tree in RE2 syntax. Every character other than an ASCII letter or
 * digit is written `\x{…}`, so no RE2-only syntax can appear; every group is
 * non-capturing.
 */
export function toRe2Syntax(node: PatternNode): string {
  switch (node.type) {
    case 'empty':
      return '(?:)';
    case 'characters': {
      const pieces = rangePieces(node.ranges) + node.properties.join('');
      if (pieces === '') return node.negated ? `[${rangePieces([[0, MAX_CODE_POINT]])}]` : NOTHING;
      if (!node.negated && node.properties.length === 0 && node.ranges.length === 1 && node.ranges[0][0] === node.ranges[0][1])
        return literal(node.ranges[0][0]);
      return `[${node.negated ? '^' : ''}${pieces}]`;
    }
    case 'sequence':
      return node.items.map(toRe2Syntax).join('');
    case 'alternation':
      return `(?:${node.items.map(toRe2Syntax).join('|')})`;
    case 'repeat': {
      const quantifier =
        node.max === Infinity
          ? node.min === 0
            ? '*'
            : node.min === 1
              ? '+'
              : `{${node.min},}`
          : node.min === 0 && node.max === 1
            ? '?'
            : node.min === node.max
              ? `{${node.min}}`
              : `{${node.min},${node.max}}`;
      return `(?:${toRe2Syntax(node.item)})${quantifier}`;
    }
    case 'assertion':
      return node.kind === 'start' ? '^' : node.kind === 'end' ? '$' : node.kind === 'word-boundary' ? '\\b' : '\\B';
  }
}

function rangePieces(ranges: readonly CodePointRange[]): string {
  return ranges.map(([low, high]) => (low === high ? hex(low) : `${hex(low)}-${hex(high)}`)).join('');
}

function literal(codePoint: number): string {
  return isAsciiAlphanumeric(codePoint) ? String.fromCodePoint(codePoint) : hex(codePoint);
}

function isAsciiAlphanumeric(codePoint: number): boolean {
  return (codePoint >= 0x30 && codePoint <= 0x39) || (codePoint >= 0x41 && codePoint <= 0x5a) || (codePoint >= 0x61 && codePoint <= 0x7a);
}

function hex(codePoint: number): string {
  return `\\x{${codePoint.toString(16).toUpperCase()}}`;
}
