/** Longest piece of untrusted text shown in one prompt line. */
const LONGEST_SHOWN = 2_000;

/**
 * Text from a tool's source or a model, made safe to print on a terminal:
 * control characters (terminal escapes among them), and the Unicode
 * characters that reorder or hide text, are shown as `\u{…}` escapes instead
 * of acting; the text is cut at 2,000 characters with the rest counted.
 */
export function terminalSafe(text: string, longest = LONGEST_SHOWN): string {
  const visible = text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g,
    (character) => `\\u{${character.codePointAt(0)?.toString(16)}}`,
  );
  return visible.length > longest ? `${visible.slice(0, longest)}… (${visible.length - longest} more characters)` : visible;
}

/** A value as one line of JSON, safe for a terminal (see {@link terminalSafe}). */
export function terminalJson(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = '(arguments that cannot be shown as JSON)';
  }
  return terminalSafe(text);
}

/**
 * Text of several lines from a source (an MCP server's question, a field's
 * title), made safe to print: line breaks and tabs stay, every other control
 * character (terminal escapes among them) and the characters that reorder or
 * hide text become spaces; cut at 2,000 characters.
 */
export function terminalLines(text: string): string {
  // eslint-disable-next-line no-control-regex
  const stripped = String(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, ' ');
  return stripped.length > LONGEST_SHOWN ? `${stripped.slice(0, LONGEST_SHOWN)}…` : stripped;
}
