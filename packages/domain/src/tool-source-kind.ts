/**
 * Where a tool comes from. Every `ToolSource` belongs to exactly one kind;
 * names of tools are namespaced by their source (`mcp.<server>.<tool>`,
 * `skill.<name>`, `builtin.<tool>`, …).
 */
export type ToolSourceKind = 'builtin' | 'custom' | 'mcp' | 'skill' | 'wrapped';

/** Every {@link ToolSourceKind}, in a stable order. */
export const TOOL_SOURCE_KINDS: readonly ToolSourceKind[] = Object.freeze([
  'builtin',
  'custom',
  'mcp',
  'skill',
  'wrapped',
]);

/** True when `value` is one of {@link TOOL_SOURCE_KINDS}. */
export function isToolSourceKind(value: unknown): value is ToolSourceKind {
  return typeof value === 'string' && (TOOL_SOURCE_KINDS as readonly string[]).includes(value);
}
