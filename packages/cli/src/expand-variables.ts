/**
 * Replaces `${NAME}` in every string of a JSON-like value with the variable
 * of that name from `env` (`${NAME:-fallback}` gives a fallback). `$${` is a
 * literal `${`. Returns a new value; the input is not changed.
 * @throws Error naming the path when a variable is not set and has no fallback.
 */
export function expandVariables(value: unknown, env: Readonly<Record<string, string | undefined>>, path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$?\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (match, name: string, fallback: string | undefined) => {
      if (match.startsWith('$$')) return match.slice(1);
      const resolved = env[name] ?? fallback;
      if (resolved === undefined) {
        throw new Error(`${path || '/'} uses \${${name}}, which is not set. Set the variable or write \${${name}:-default}.`);
      }
      return resolved;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => expandVariables(item, env, `${path}/${index}`));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = expandVariables(item, env, `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    return out;
  }
  return value;
}
