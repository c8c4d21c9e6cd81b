/**
 * Internal: translates an ECMAScript regular expression (the dialect of JSON
 * Schema's `pattern`, read with the `u` flag as ajv does) into RE2 syntax with
 * the same meaning for `test`, so that it can run on a linear-time engine.
 *
 * The input must already be a valid `u`-mode pattern (`new RegExp(source, 'u')`
 * accepted it): the parser relies on that and does not report syntax errors.
 * What RE2 cannot express — lookahead, lookbehind, backreferences — is refused
 * with {@link UnsupportedPatternFeature}.
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

const MAX_CODE_POINT = 0x10ffff;

/** ECMAScript's WhiteSpace and LineTerminator code points, as ranges (`\s`). */
const WHITE_SPACE: readonly (readonly [number, number])[] = [
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
const DIGIT: readonly (readonly [number, number])[] = [[0x30, 0x39]];
const WORD: readonly (readonly [number, number])[] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
/** Everything but the line terminators: ECMAScript's `.` without the `s` flag. */
const DOT: readonly (readonly [number, number])[] = complement([
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

/** What goes between the brackets of an RE2 class for a set of characters (`''` for none). */
type ClassPieces = string;

/**
 * Translates a valid `u`-mode ECMAScript pattern into RE2 syntax.
 * @throws UnsupportedPatternFeature for lookahead, lookbehind and backreferences.
 */
export function translateEcmaScriptPattern(source: string): string {
  return new Translator(source).translate();
}

class Translator {
  private index = 0;

  constructor(private readonly source: string) {}

  translate(): string {
    const translated = this.disjunction();
    // A stray ')' cannot happen in a valid pattern; stop rather than drop input silently.
    if (this.index < this.source.length) throw new Error(`Unexpected "${this.source[this.index]}" at ${this.index}`);
    return translated;
  }

  private peek(offset = 0): string | undefined {
    return this.source[this.index + offset];
  }

  private startsWith(text: string): boolean {
    return this.source.startsWith(text, this.index);
  }

  private disjunction(): string {
    const alternatives = [this.alternative()];
    while (this.peek() === '|') {
      this.index++;
      alternatives.push(this.alternative());
    }
    return alternatives.join('|');
  }

  private alternative(): string {
    let translated = '';
    while (this.index < this.source.length && this.peek() !== '|' && this.peek() !== ')') translated += this.term();
    return translated === '' ? '(?:)' : translated;
  }

  private term(): string {
    const char = this.peek();
    if (char === '^' || char === '$') {
      this.index++;
      return char;
    }
    if (char === '\\' && (this.peek(1) === 'b' || this.peek(1) === 'B')) {
      this.index += 2;
      return `\\${this.source[this.index - 1]}`;
    }
    if (this.startsWith('(?=') || this.startsWith('(?!')) throw new UnsupportedPatternFeature('lookahead ((?=…) or (?!…))');
    if (this.startsWith('(?<=') || this.startsWith('(?<!')) throw new UnsupportedPatternFeature('lookbehind ((?<=…) or (?<!…))');
    const atom = this.atom();
    const quantifier = this.quantifier();
    return quantifier === '' ? atom : `(?:${atom})${quantifier}`;
  }

  private quantifier(): string {
    const char = this.peek();
    let quantifier: string;
    if (char === '*' || char === '+' || char === '?') {
      this.index++;
      quantifier = char;
    } else if (char === '{') {
      const match = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.index));
      if (match === null) return '';
      this.index += match[0].length;
      quantifier = match[0];
    } else {
      return '';
    }
    // Laziness changes which match is found, never whether one exists: `test` needs only the latter.
    if (this.peek() === '?') this.index++;
    return quantifier;
  }

  private atom(): string {
    const char = this.peek();
    if (char === '.') {
      this.index++;
      return toClass(rangePieces(DOT));
    }
    if (char === '(') {
      if (this.startsWith('(?:')) this.index += 3;
      else if (this.startsWith('(?<')) this.index = this.source.indexOf('>', this.index) + 1;
      else this.index++;
      const inner = this.disjunction();
      this.index++; // ')'
      return `(?:${inner})`;
    }
    if (char === '[') return this.characterClass();
    if (char === '\\') return this.atomEscape();
    return literal(this.codePoint());
  }

  private codePoint(): number {
    const value = this.source.codePointAt(this.index) as number;
    this.index += value > 0xffff ? 2 : 1;
    return value;
  }

  private atomEscape(): string {
    const letter = this.peek(1);
    if (letter !== undefined && letter >= '1' && letter <= '9') throw new UnsupportedPatternFeature(`backreference (\\${letter})`);
    if (letter === 'k') throw new UnsupportedPatternFeature('named backreference (\\k<…>)');
    const set = this.classEscape();
    if (set !== undefined) return toClass(set);
    return literal(this.characterEscape());
  }

  /** `\d`, `\s`, `\w`, `\p{…}` and their negations, as class pieces; `undefined` for any other escape (nothing consumed). */
  private classEscape(): ClassPieces | undefined {
    const letter = this.peek(1);
    switch (letter) {
      case 'd':
      case 'D':
      case 's':
      case 'S':
      case 'w':
      case 'W': {
        this.index += 2;
        const ranges = letter.toLowerCase() === 'd' ? DIGIT : letter.toLowerCase() === 's' ? WHITE_SPACE : WORD;
        return rangePieces(letter === letter.toLowerCase() ? ranges : complement(ranges));
      }
      case 'p':
      case 'P': {
        const close = this.source.indexOf('}', this.index);
        const name = this.source.slice(this.index + 3, close);
        this.index = close + 1;
        return propertyPieces(name, letter === 'P');
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

  private characterClass(): string {
    this.index++; // '['
    const negated = this.peek() === '^';
    if (negated) this.index++;
    let pieces = '';
    while (this.peek() !== ']') {
      const set = this.peek() === '\\' ? this.classEscape() : undefined;
      if (set !== undefined) {
        pieces += set;
        continue;
      }
      const low = this.classAtom();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        this.index++;
        pieces += rangePieces([[low, this.classAtom()]]);
      } else {
        pieces += rangePieces([[low, low]]);
      }
    }
    this.index++; // ']'
    if (pieces === '') return negated ? toClass(rangePieces([[0, MAX_CODE_POINT]])) : NOTHING;
    return `[${negated ? '^' : ''}${pieces}]`;
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

/** A class that matches no character (RE2 accepts an empty negated full range). */
const NOTHING = `[^${hex(0)}-${hex(MAX_CODE_POINT)}]`;

function toClass(pieces: ClassPieces): string {
  return pieces === '' ? NOTHING : `[${pieces}]`;
}

function propertyPieces(expression: string, negated: boolean): ClassPieces {
  const separator = expression.indexOf('=');
  const key = separator === -1 ? undefined : expression.slice(0, separator);
  const value = separator === -1 ? expression : expression.slice(separator + 1);
  if (key === 'Script_Extensions' || key === 'scx') throw new UnsupportedPatternFeature(`the Unicode property \\p{${expression}} (Script_Extensions)`);
  let name: string;
  if (key === 'General_Category' || key === 'gc' || key === undefined) {
    if (key === undefined && value === 'Any') return negated ? '' : rangePieces([[0, MAX_CODE_POINT]]);
    if (key === undefined && value === 'ASCII') return rangePieces(negated ? [[0x80, MAX_CODE_POINT]] : [[0, 0x7f]]);
    if (key === undefined && value === 'Assigned') return negated ? '\\p{Cn}' : '\\P{Cn}';
    name = Object.hasOwn(GENERAL_CATEGORIES, value) ? GENERAL_CATEGORIES[value] : value;
  } else {
    // Script / sc: RE2 knows scripts by their long names (Greek, Latin), as ECMAScript writes them.
    name = value;
  }
  return `\\${negated ? 'P' : 'p'}{${name}}`;
}

function rangePieces(ranges: readonly (readonly [number, number])[]): ClassPieces {
  return ranges.map(([low, high]) => (low === high ? hex(low) : `${hex(low)}-${hex(high)}`)).join('');
}

/** The code points not in `ranges` (sorted, disjoint). */
function complement(ranges: readonly (readonly [number, number])[]): [number, number][] {
  const result: [number, number][] = [];
  let next = 0;
  for (const [low, high] of ranges) {
    if (low > next) result.push([next, low - 1]);
    next = high + 1;
  }
  if (next <= MAX_CODE_POINT) result.push([next, MAX_CODE_POINT]);
  return result;
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
