import type { SkillsFileHandle } from './skills-file-system';

/**
 * Bytes asked for per read while looking for the end of the frontmatter.
 * Small, so that what is read past the closing `---` (and discarded) stays
 * under one chunk however large the body is.
 */
export const FRONTMATTER_CHUNK_BYTES = 512;

/** @internal What {@link readFrontmatter} found. */
export type FrontmatterReadResult =
  | { readonly status: 'ok'; readonly yaml: string; readonly frontmatterBytes: number; readonly bytesRead: number }
  | { readonly status: 'no-frontmatter'; readonly bytesRead: number }
  | { readonly status: 'unterminated'; readonly bytesRead: number }
  | { readonly status: 'too-large'; readonly bytesRead: number };

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const DASH = 0x2d;
const BYTE_ORDER_MARK = [0xef, 0xbb, 0xbf];

/**
 * @internal Reads the YAML frontmatter of a `SKILL.md` from an open handle,
 * chunk by chunk from the start, and stops at the closing `---` line or after
 * `maxBytes`, whichever comes first. The body is never decoded or parsed; at
 * most the rest of the last chunk (under {@link FRONTMATTER_CHUNK_BYTES}) is
 * read past the delimiter and dropped.
 */
export async function readFrontmatter(handle: SkillsFileHandle, maxBytes: number, signal?: AbortSignal): Promise<FrontmatterReadResult> {
  let buffer = Buffer.allocUnsafe(Math.min(maxBytes, FRONTMATTER_CHUNK_BYTES * 4));
  let length = 0;
  let endOfFile = false;
  let contentStart = -1; // first byte after the opening `---` line
  let lineStart = 0;
  while (true) {
    // Scan the complete lines read so far.
    for (let index = lineStart; index < length; index++) {
      if (buffer[index] !== NEWLINE) continue;
      const verdict = checkLine(buffer, lineStart, index, contentStart);
      if (verdict === 'not-frontmatter') return { status: 'no-frontmatter', bytesRead: length };
      if (verdict === 'opening') contentStart = index + 1;
      else if (verdict === 'closing') return found(buffer, contentStart, lineStart, index + 1, length);
      lineStart = index + 1;
    }
    if (contentStart < 0 && !couldOpen(buffer, length)) {
      return { status: 'no-frontmatter', bytesRead: length };
    }
    if (endOfFile) {
      // A last line without a newline may still be the closing delimiter.
      if (length > lineStart) {
        const verdict = checkLine(buffer, lineStart, length, contentStart);
        if (verdict === 'closing') return found(buffer, contentStart, lineStart, length, length);
        if (verdict === 'not-frontmatter' || contentStart < 0) return { status: 'no-frontmatter', bytesRead: length };
      }
      return contentStart < 0 ? { status: 'no-frontmatter', bytesRead: length } : { status: 'unterminated', bytesRead: length };
    }
    if (length >= maxBytes) return { status: 'too-large', bytesRead: length };
    signal?.throwIfAborted();
    const want = Math.min(FRONTMATTER_CHUNK_BYTES, maxBytes - length);
    if (buffer.length < length + want) {
      const larger = Buffer.allocUnsafe(Math.min(maxBytes, Math.max(buffer.length * 2, length + want)));
      buffer.copy(larger, 0, 0, length);
      buffer = larger;
    }
    const { bytesRead } = await handle.read(buffer, length, want, length);
    if (bytesRead === 0) endOfFile = true;
    length += bytesRead;
  }
}

type LineVerdict = 'opening' | 'closing' | 'content' | 'not-frontmatter';

function checkLine(buffer: Buffer, start: number, end: number, contentStart: number): LineVerdict {
  if (contentStart < 0) {
    let from = start;
    if (end - from >= 3 && BYTE_ORDER_MARK.every((byte, offset) => buffer[from + offset] === byte)) from += 3;
    return isDelimiter(buffer, from, end) ? 'opening' : 'not-frontmatter';
  }
  return isDelimiter(buffer, start, end) ? 'closing' : 'content';
}

/** `---` followed only by spaces, tabs and a carriage return. */
function isDelimiter(buffer: Buffer, start: number, end: number): boolean {
  if (end - start < 3 || buffer[start] !== DASH || buffer[start + 1] !== DASH || buffer[start + 2] !== DASH) return false;
  for (let index = start + 3; index < end; index++) {
    const byte = buffer[index];
    if (byte !== 0x20 && byte !== 0x09 && byte !== CARRIAGE_RETURN) return false;
  }
  return true;
}

/** Whether the bytes read so far can still begin with the opening delimiter (optionally after a BOM). */
function couldOpen(buffer: Buffer, length: number): boolean {
  const expected = buffer[0] === BYTE_ORDER_MARK[0] ? [...BYTE_ORDER_MARK, DASH, DASH, DASH] : [DASH, DASH, DASH];
  for (let index = 0; index < Math.min(length, expected.length); index++) if (buffer[index] !== expected[index]) return false;
  return true;
}

function found(buffer: Buffer, contentStart: number, closingStart: number, frontmatterBytes: number, bytesRead: number): FrontmatterReadResult {
  return { status: 'ok', yaml: buffer.toString('utf8', contentStart, closingStart), frontmatterBytes, bytesRead };
}

const FRONTMATTER_PATTERN = /^\uFEFF?---[ \t]*\r?\n(?:[\s\S]*?\r?\n)?---[ \t]*(?:\r?\n|$)/;

/**
 * @internal Splits a whole `SKILL.md` into its body: the text after the
 * closing `---` line, without leading blank lines. A file without
 * frontmatter is all body.
 */
export function stripFrontmatter(text: string): string {
  const match = FRONTMATTER_PATTERN.exec(text);
  const body = match === null ? text : text.slice(match[0].length);
  return body.replace(/^(?:[ \t]*\r?\n)+/, '');
}
