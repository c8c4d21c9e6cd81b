import { CaError } from '@ca/domain';

/** The dialect a pattern is written in: ECMAScript (JSON Schema's `pattern`) or RE2. */
export type PatternSyntax = 'ecmascript' | 're2';

/**
 * Why a pattern cannot run on the linear-time engine:
 * - `syntax`: it is not a valid pattern of its dialect;
 * - `unsupported`: it is valid, but uses what no linear-time engine can run
 *   (lookahead, lookbehind, backreferences) or exceeds RE2's limits (a
 *   counted repetition above 1000, a program too large).
 */
export type PatternCompileProblem = 'syntax' | 'unsupported';

/** Options of {@link PatternCompileError}. */
export interface PatternCompileErrorOptions {
  /** The pattern as given. */
  readonly pattern: string;
  /** The dialect it was read in. */
  readonly syntax: PatternSyntax;
  /** Whether it is invalid or valid but not runnable in linear time. */
  readonly problem: PatternCompileProblem;
  /** What is wrong (the construct, or the parser's message), without advice. */
  readonly detail: string;
  /** The tool concerned, when known. */
  readonly toolName?: string;
  /** The underlying error (the engine's), per ES2022. */
  readonly cause?: unknown;
}

const PATTERN_SHOWN = 200;

/**
 * A regular expression cannot be compiled for the linear-time engine.
 *
 * Code: `PATTERN_INVALID`. Recognise it with `PatternCompileError.isInstance`,
 * which also works across two installed copies of this package.
 */
export class PatternCompileError extends CaError {
  declare readonly code: 'PATTERN_INVALID';
  /** The pattern as given. */
  readonly pattern: string;
  /** The dialect it was read in. */
  readonly syntax: PatternSyntax;
  /** Whether it is invalid or valid but not runnable in linear time. */
  readonly problem: PatternCompileProblem;
  /** What is wrong, without advice. */
  readonly detail: string;

  /**
   * @param options - pattern, dialect, problem and detail, with the tool when known.
   */
  constructor(options: PatternCompileErrorOptions) {
    super('PATTERN_INVALID', describeFailure(options), options);
    this.pattern = options.pattern;
    this.syntax = options.syntax;
    this.problem = options.problem;
    this.detail = options.detail;
  }
}

function describeFailure(options: PatternCompileErrorOptions): string {
  const shown = options.pattern.length > PATTERN_SHOWN ? `${options.pattern.slice(0, PATTERN_SHOWN)}…` : options.pattern;
  const dialect = options.syntax === 're2' ? 'RE2' : 'ECMAScript';
  if (options.problem === 'syntax') {
    return `The regular expression "${shown}" is not valid ${dialect} syntax: ${options.detail}. Correct the pattern.`;
  }
  return (
    `The regular expression "${shown}" cannot run on the linear-time engine: it uses ${options.detail}. ` +
    'Rewrite it without lookahead, lookbehind or backreferences (RE2 syntax), with counted repetitions of at most 1000.'
  );
}
