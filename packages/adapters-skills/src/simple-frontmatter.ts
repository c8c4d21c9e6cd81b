/**
 * @internal A fast path for the frontmatter most skills have: top-level
 * `key: value` lines whose values are plain words and sentences, and at most
 * one level of nested `key: value` lines (for `metadata`). It returns
 * `undefined` — and the full YAML parser takes over — for anything else:
 * quotes, block scalars, comments, lists, flow collections, multi-line
 * values, anchors, tags, duplicate keys, values YAML would read as booleans,
 * numbers or null. On what it accepts it gives exactly what the `yaml`
 * package gives (a property test checks this); it exists because parsing
 * thousands of frontmatters with a full YAML parser dominated discovery time.
 */
export function parseSimpleFrontmatter(text: string): Record<string, unknown> | undefined {
  const result: Record<string, unknown> = {};
  let nested: Record<string, string> | undefined;
  let nestedIndent = -1;
  for (const rawLine of text.split('\n')) {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line.trim().length === 0) {
      if (line.length > 0) return undefined; // whitespace-only lines: leave to the parser
      continue;
    }
    const indent = line.length - line.trimStart().length;
    const entry = KEY_VALUE.exec(line.slice(indent));
    if (entry === null) return undefined;
    const [, key, value] = entry;
    if (key === '__proto__' || KEYWORD.test(key)) return undefined;
    if (indent > 0) {
      if (nested === undefined || (nestedIndent >= 0 && indent !== nestedIndent)) return undefined;
      nestedIndent = indent;
      if (value === undefined || !isPlainText(value) || Object.hasOwn(nested, key)) return undefined;
      nested[key] = value.trimEnd();
      continue;
    }
    if (nested !== undefined && nestedIndent < 0) return undefined; // `key:` with nothing below is null
    nested = undefined;
    nestedIndent = -1;
    if (Object.hasOwn(result, key)) return undefined;
    if (value === undefined) {
      nested = {};
      result[key] = nested;
    } else {
      if (!isPlainText(value)) return undefined;
      result[key] = value.trimEnd();
    }
  }
  if (nested !== undefined && nestedIndent < 0) return undefined;
  return result;
}

/** `key:` or `key: value` with a simple key. */
const KEY_VALUE = /^([A-Za-z_][A-Za-z0-9_-]*):(?: +([^ ].*))?$/;

/** Starts with a letter; no character that could start or change YAML syntax; not a YAML keyword. */
function isPlainText(value: string): boolean {
  return SAFE_PLAIN.test(value) && !value.includes(': ') && !value.trimEnd().endsWith(':') && !KEYWORD.test(value.trimEnd());
}

const SAFE_PLAIN = /^[A-Za-z][^#'"\t{}[\]&*!|>%@`\\]*$/;
const KEYWORD = /^(?:true|True|TRUE|false|False|FALSE|null|Null|NULL|y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$/;
