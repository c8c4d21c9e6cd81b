import { createHash } from 'node:crypto';
import { MAX_TOOL_NAME_LENGTH } from '@ca/domain';

const ALLOWED = /[^A-Za-z0-9_.:-]/g;
const HASH_LENGTH = 8;

/**
 * Maps the MCP tool names of one server to runtime names `mcp.<server>.<tool>`.
 *
 * - Characters that `isValidToolName` refuses (anything but letters, digits,
 *   `_`, `.`, `:` and `-`) become `_`: `get weather` → `mcp.s.get_weather`.
 * - A name that would exceed 200 characters is cut and ends with `_` + 8
 *   hex digits of the SHA-256 of the MCP name.
 * - When two MCP names map to the same runtime name, every changed one gets
 *   `_` + 8 hex digits of the SHA-256 of its MCP name appended, so the
 *   mapping stays deterministic for a given tool list.
 * - A name in `reserved` (after `mcp.<server>.`; the adapter's resource and
 *   prompt operations) gets the same suffix.
 *
 * @returns A map from MCP tool name to runtime tool name.
 * @throws Never.
 */
export function mapToolNames(server: string, mcpNames: readonly string[], reserved: ReadonlySet<string> = new Set()): Map<string, string> {
  const prefix = `mcp.${server}.`;
  const candidates = new Map<string, string>();
  const counts = new Map<string, number>();
  for (const mcpName of mcpNames) {
    const sanitised = `${prefix}${mcpName.replace(ALLOWED, '_')}`;
    const taken = reserved.has(sanitised.slice(prefix.length));
    const name = sanitised.length > MAX_TOOL_NAME_LENGTH || taken ? withHash(sanitised, mcpName) : sanitised;
    candidates.set(mcpName, name);
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const result = new Map<string, string>();
  for (const [mcpName, name] of candidates) {
    const unchanged = name === `${prefix}${mcpName}`;
    result.set(mcpName, (counts.get(name) ?? 0) > 1 && !unchanged ? withHash(name, mcpName) : name);
  }
  return result;
}

function withHash(name: string, mcpName: string): string {
  const hash = createHash('sha256').update(mcpName).digest('hex').slice(0, HASH_LENGTH);
  return `${name.slice(0, MAX_TOOL_NAME_LENGTH - HASH_LENGTH - 1)}_${hash}`;
}

/**
 * True when `name` matches one of the glob `patterns`: `*` matches any run
 * of characters, `?` one character, everything else itself.
 *
 * @throws Never.
 */
export function matchesAnyGlob(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => globToRegExp(pattern).test(name));
}

const globCache = new Map<string, RegExp>();

function globToRegExp(pattern: string): RegExp {
  let compiled = globCache.get(pattern);
  if (compiled === undefined) {
    const source = pattern
      .split('')
      .map((character) => (character === '*' ? '.*' : character === '?' ? '.' : character.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
      .join('');
    compiled = new RegExp(`^${source}$`, 's');
    globCache.set(pattern, compiled);
  }
  return compiled;
}
