/** The source kinds this project ships adapters for; the runtime knows how to describe each. */
export type KnownToolSourceKind = 'builtin' | 'custom' | 'mcp' | 'skill' | 'wrapped';

/**
 * Where a tool comes from. Every `ToolSource` belongs to exactly one kind;
 * names of tools are namespaced by their source (`mcp.<server>.<tool>`,
 * `skill.<name>`, `builtin.<tool>`, …).
 *
 * Open: besides the {@link KnownToolSourceKind}s, a team's adapter declares
 * its own kind (`'jira'`, `'build-system'`): a lowercase name of letters,
 * digits and `-`, starting with a letter, at most 40 characters (see
 * {@link isToolSourceKind}). The runtime treats a kind it does not know like
 * `'custom'` where a kind changes behaviour (OpenTelemetry's `gen_ai.tool.type`).
 */
export type ToolSourceKind = KnownToolSourceKind | (string & { readonly __toolSourceKind?: never });

/** Every {@link KnownToolSourceKind}, in a stable order. */
export const KNOWN_TOOL_SOURCE_KINDS: readonly KnownToolSourceKind[] = Object.freeze(['builtin', 'custom', 'mcp', 'skill', 'wrapped']);

/** Longest accepted source kind. */
export const MAX_TOOL_SOURCE_KIND_LENGTH = 40;

const SOURCE_KIND_PATTERN = /^[a-z][a-z0-9-]*$/;

/** True when `value` is an acceptable source kind: a known one, or a team's own (lowercase letters, digits, `-`). */
export function isToolSourceKind(value: unknown): value is ToolSourceKind {
  return typeof value === 'string' && value.length <= MAX_TOOL_SOURCE_KIND_LENGTH && SOURCE_KIND_PATTERN.test(value);
}

/** True when `value` is one of {@link KNOWN_TOOL_SOURCE_KINDS}. */
export function isKnownToolSourceKind(value: unknown): value is KnownToolSourceKind {
  return typeof value === 'string' && (KNOWN_TOOL_SOURCE_KINDS as readonly string[]).includes(value);
}
