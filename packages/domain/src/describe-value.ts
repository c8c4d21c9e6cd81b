const LONGEST_QUOTED_STRING = 60;

/**
 * A short description of any value for an error message: `'text'` (cut at
 * 60 characters), `number 42`, `an array`, `an object`, `a function`, `null`,
 * `undefined`. Never shows an object's contents, which may be large or secret.
 *
 * @throws Never.
 */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return `'${value.length > LONGEST_QUOTED_STRING ? `${value.slice(0, LONGEST_QUOTED_STRING)}…` : value}'`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return `${typeof value} ${String(value)}`;
}

/**
 * The message of anything thrown: an `Error`'s message, a string as it is,
 * anything else as JSON. Never throws, whatever the value: a getter that
 * throws or a Proxy with throwing traps is described instead.
 *
 * @throws Never.
 */
export function messageOf(thrown: unknown): string {
  try {
    if (thrown instanceof Error) return String(thrown.message);
    if (typeof thrown === 'string') return thrown;
    return JSON.stringify(thrown) ?? String(thrown);
  } catch {
    try {
      return String(thrown);
    } catch {
      return `an unprintable ${thrown === null ? 'null' : typeof thrown}`;
    }
  }
}

/**
 * A message made into a clause of a longer sentence: trailing white space and
 * final periods removed, so that `${asClause(reason)}. ${advice}` never reads
 * `disabled.. Set…` when the reason came with its own period (a server's
 * message, another error's). A non-string is described first ({@link messageOf}).
 *
 * @throws Never.
 */
export function asClause(message: unknown): string {
  const text = typeof message === 'string' ? message : messageOf(message);
  return text.replace(/[\s.]+$/u, '');
}
