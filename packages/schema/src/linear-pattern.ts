import { RE2JS } from 're2js';
import type { PatternNode } from './ecmascript-pattern';
import { parseEcmaScriptPattern, toRe2Syntax, UnsupportedPatternFeature } from './ecmascript-pattern';
import type { PatternAutomaton } from './pattern-automaton';
import { buildPatternAutomaton } from './pattern-automaton';
import type { PatternSyntax } from './pattern-compile-error';
import { PatternCompileError } from './pattern-compile-error';

/** A regular expression compiled for the linear-time engine. */
export interface LinearPattern {
  /** The pattern as given. */
  readonly source: string;
  /** The dialect it was read in. */
  readonly syntax: PatternSyntax;
  /**
   * Whether the pattern matches anywhere in `text`, like `RegExp.prototype.test`
   * (without its `lastIndex` state), in time linear in the length of `text`
   * whatever the pattern.
   */
  test(text: string): boolean;
}

/** Options of {@link compileLinearPattern}. */
export interface LinearPatternOptions {
  /**
   * The dialect of the pattern. Default `'ecmascript'`: JSON Schema's dialect,
   * read with the `u` flag; its meaning is kept (`.`, `\s`, `\p{…}`), and
   * lookahead, lookbehind and backreferences are refused. `'re2'`: RE2's own
   * syntax (what ripgrep and Go accept), for patterns people or models write.
   */
  readonly syntax?: PatternSyntax;
  /** Match letters regardless of case. Default `false`. */
  readonly ignoreCase?: boolean;
  /** The tool the pattern belongs to, for the error message. */
  readonly toolName?: string;
}

/**
 * Compiles `pattern` for a linear-time engine (RE2's algorithm), so that no
 * pattern and no text can make a match backtrack: untrusted patterns (from MCP
 * servers, skills, a model) run here instead of on `RegExp`. Every pattern must
 * be one RE2 (`re2js`) accepts; ECMAScript patterns without word boundaries or
 * Unicode property classes then run on this package's own lazy DFA (the same
 * algorithm, cheaper per call on short strings), the others on re2js.
 * @throws PatternCompileError (`PATTERN_INVALID`) with `problem: 'syntax'` for
 *   an invalid pattern, and `problem: 'unsupported'` for lookahead, lookbehind,
 *   backreferences or a pattern beyond RE2's limits.
 * @throws TypeError when `pattern` is not a string.
 */
export function compileLinearPattern(pattern: string, options: LinearPatternOptions = {}): LinearPattern {
  if (typeof pattern !== 'string') throw new TypeError(`compileLinearPattern expects a pattern string, got ${typeof pattern}.`);
  const syntax = options.syntax ?? 'ecmascript';
  if (syntax !== 'ecmascript' && syntax !== 're2') throw new TypeError(`Unknown pattern syntax '${String(syntax)}': use 'ecmascript' or 're2'.`);
  const fail: Fail = (problem, detail, cause) => {
    throw new PatternCompileError({ pattern, syntax, problem, detail, toolName: options.toolName, cause });
  };
  if (syntax === 're2') return new Re2Pattern(pattern, syntax, compileRe2(pattern, syntax, options.ignoreCase === true, fail));
  const { tree, engine } = compileEcmaScript(pattern, options.ignoreCase === true, fail);
  // Case folding is left to re2js, which knows Unicode's folding rules.
  const automaton = options.ignoreCase === true ? undefined : buildPatternAutomaton(tree, (text) => engine.test(text));
  return automaton === undefined ? new Re2Pattern(pattern, syntax, engine) : new AutomatonPattern(pattern, automaton);
}

/**
 * @internal Both engines of an ECMAScript pattern, for tests that hold them to
 * each other: re2js and, when the pattern allows, the package's automaton.
 */
export function compileEcmaScriptEngines(pattern: string): { readonly re2js: LinearPattern; readonly automaton: LinearPattern | undefined } {
  const fail: Fail = (problem, detail, cause) => {
    throw new PatternCompileError({ pattern, syntax: 'ecmascript', problem, detail, cause });
  };
  const { tree, engine } = compileEcmaScript(pattern, false, fail);
  const automaton = buildPatternAutomaton(tree, (text) => engine.test(text));
  return {
    re2js: new Re2Pattern(pattern, 'ecmascript', engine),
    automaton: automaton === undefined ? undefined : new AutomatonPattern(pattern, automaton),
  };
}

function compileEcmaScript(pattern: string, ignoreCase: boolean, fail: Fail): { tree: PatternNode; engine: RE2JS } {
  try {
    // Parsing only: V8 compiles (and could backtrack) on the first match, never here.
    new RegExp(pattern, 'u');
  } catch (error) {
    fail('syntax', (error as Error).message.replace(/^Invalid regular expression: /, ''), error);
  }
  let tree: PatternNode;
  try {
    tree = parseEcmaScriptPattern(pattern);
  } catch (error) {
    if (error instanceof UnsupportedPatternFeature) fail('unsupported', error.feature, error);
    throw error;
  }
  // re2js compiles every pattern, so that what is accepted is exactly what RE2 accepts, whichever engine runs it.
  return { tree, engine: compileRe2(toRe2Syntax(tree), 'ecmascript', ignoreCase, fail) };
}

type Fail = (problem: 'syntax' | 'unsupported', detail: string, cause?: unknown) => never;

function compileRe2(translated: string, syntax: PatternSyntax, ignoreCase: boolean, fail: Fail): RE2JS {
  try {
    return RE2JS.compile(translated, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    const message = (error as Error).message.replace(/^error parsing regexp: /, '');
    // A translated ECMAScript pattern was valid: whatever RE2 refuses in it is beyond RE2, not a typo.
    const feature = unsupportedFeatureOf(message) ?? (syntax === 'ecmascript' ? `what RE2 refuses (${message})` : undefined);
    return feature === undefined ? fail('syntax', message, error) : fail('unsupported', feature, error);
  }
}

/** RE2's refusals of valid Perl / ECMAScript constructs, as the construct's name. */
function unsupportedFeatureOf(message: string): string | undefined {
  if (/`\(\?[=!]/.test(message)) return 'lookahead ((?=…) or (?!…))';
  if (/`\(\?<[=!]/.test(message)) return 'lookbehind ((?<=…) or (?<!…))';
  if (/invalid escape sequence: `\\[1-9]/.test(message)) return 'a backreference (\\1 … \\9)';
  if (/invalid repeat count/.test(message)) return `a counted repetition above 1000 (${message})`;
  if (/expression too large|program too large/i.test(message)) return `a pattern larger than RE2 compiles (${message})`;
  return undefined;
}

class Re2Pattern implements LinearPattern {
  constructor(
    readonly source: string,
    readonly syntax: PatternSyntax,
    private readonly engine: RE2JS,
  ) {}

  // A method on the prototype, not a closure per pattern: ajv's generated code then calls one function, which V8 inlines.
  test(text: string): boolean {
    return this.engine.test(text);
  }

  /** ajv keys its compiled patterns by this text: it must differ between patterns. */
  toString(): string {
    return `/${this.source}/${this.syntax === 'ecmascript' ? 'u' : 're2'}`;
  }
}

class AutomatonPattern implements LinearPattern {
  readonly syntax = 'ecmascript' as const;

  constructor(
    readonly source: string,
    private readonly automaton: PatternAutomaton,
  ) {}

  test(text: string): boolean {
    return this.automaton.test(text);
  }

  toString(): string {
    return `/${this.source}/u`;
  }
}
