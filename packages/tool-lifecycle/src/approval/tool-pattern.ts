import { compileLinearPattern } from '@ca/schema';

/** A compiled pattern: true when the whole text matches. */
export type PatternMatcher = (text: string) => boolean;

/**
 * Compiles a glob for tool names and argument values: `*` stands for any run
 * of characters (dots, slashes and line breaks included), `?` for exactly one
 * character, and everything else for itself; the whole text must match. A
 * pattern without wildcards is a plain comparison. Patterns run on the
 * linear-time engine of `@ca/schema`, so no text makes a match slow.
 *
 * @throws TypeError when `pattern` is not a string.
 */
export function compileToolPattern(pattern: string): PatternMatcher {
  if (typeof pattern !== 'string') throw new TypeError(`A tool pattern must be a string, got ${typeof pattern}.`);
  if (!/[*?]/.test(pattern)) return (text) => text === pattern;
  const star = pattern.indexOf('*');
  if (star === pattern.length - 1 && !pattern.includes('?')) {
    const prefix = pattern.slice(0, -1);
    return (text) => text.startsWith(prefix);
  }
  let source = '^';
  for (const character of pattern) {
    if (character === '*') source += '[\\s\\S]*';
    else if (character === '?') source += '[\\s\\S]';
    else source += character.replace(/[\\^$.|?*+()[\]{}/]/g, '\\$&');
  }
  const compiled = compileLinearPattern(`${source}$`);
  return (text) => compiled.test(text);
}
