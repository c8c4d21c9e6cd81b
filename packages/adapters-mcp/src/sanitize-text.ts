/**
 * `text` as it may reach a log line or a terminal: control characters
 * (terminal escapes among them) replaced by spaces, and at most `max`
 * characters, with the full length noted when cut. Servers choose this text.
 *
 * @internal
 */
export function sanitizeText(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const clean = String(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, ' ');
  return clean.length > max ? `${clean.slice(0, max)}… (${clean.length} characters)` : clean;
}
