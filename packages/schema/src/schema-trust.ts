/**
 * Whether a schema comes from code the service controls:
 * - `trusted`: the service's own schemas (built-in and custom tools, the CLI's
 *   own documents). Patterns run on JavaScript's `RegExp`, with everything
 *   ECMAScript offers (lookaround, backreferences).
 * - `untrusted`: schemas from sources the service does not control (MCP
 *   servers, skills, wrapped foreign tools). Patterns run on a linear-time
 *   engine, so that no pattern and no value can freeze the process; a pattern
 *   that engine cannot run makes the schema a compile error.
 */
export type SchemaTrust = 'trusted' | 'untrusted';

/** True for `'trusted'` and `'untrusted'`. */
export function isSchemaTrust(value: unknown): value is SchemaTrust {
  return value === 'trusted' || value === 'untrusted';
}
