import { isSecretName, redactSecrets } from '@ca/domain';

/** What a redacted secret becomes (as `redactSecrets` writes it). */
const REDACTED = '***';

/**
 * Redaction of whole documents (an output of megabytes) with `redactSecrets`
 * of `@ca/domain`, in pieces, with the same result as one call on the whole
 * text:
 *
 * - No pattern of `redactSecrets` matches a line feed, so a text cut at line
 *   ends and redacted piece by piece reads exactly as the whole text redacted
 *   at once. Pieces end at the first line end after {@link RedactionPieces.chunk}
 *   characters.
 * - A line longer than that is cut where no secret can be: at a point whose
 *   surroundings (`window` characters on each side, more than the longest
 *   match of a bounded pattern) hold no trigger word, or, failing that, that
 *   `redactSecrets` leaves unchanged.
 * - Only the lines that hold a trigger word run the patterns; the others are
 *   copied: every pattern needs one of them (`token`, `secret`, `pass`,
 *   `key`, `sig`, `auth`, `://`, `%` …; see {@link SECRET_TRIGGER}), which one
 *   scan over the text finds.
 */
export interface RedactionPieces {
  /** Characters of a piece before it looks for a line end (default 256 KiB). */
  readonly chunk: number;
  /** Characters on each side of a cut inside a line that must hold no secret (default 16 KiB). */
  readonly window: number;
}

/**
 * Words one of which every secret `redactSecrets` recognises contains (any
 * case): the words of `isSecretName`, the schemes of credentials in free
 * text, the prefixes of known tokens, `://` for URL userinfo, and `%` for
 * names written with percent-encoding.
 */
export const SECRET_TRIGGER = /token|secret|pass|key|sig|credential|pwd|auth|jwt|bearer|basic|cookie|session|otp|:\/\/|gh[pousr]_|github_pat_|sk-|xox|akia|%/i;

/** {@link SECRET_TRIGGER}, global: where in a piece the trigger words are. */
const TRIGGERS = new RegExp(SECRET_TRIGGER.source, 'gi');

/**
 * A piece with secrets redacted: only its lines that hold a trigger word go
 * through `redactSecrets` (lines are independent: no pattern spans a line
 * feed), the others are copied.
 */
export function redactPiece(piece: string): string {
  TRIGGERS.lastIndex = 0;
  let match = TRIGGERS.exec(piece);
  if (match === null) return piece;
  let out = '';
  let copied = 0;
  while (match !== null) {
    const lineStart = piece.lastIndexOf('\n', match.index) + 1;
    const newline = piece.indexOf('\n', match.index);
    const lineEnd = newline === -1 ? piece.length : newline;
    out += piece.slice(copied, lineStart) + redactSecrets(piece.slice(lineStart, lineEnd));
    copied = lineEnd;
    if (lineEnd >= piece.length) break;
    TRIGGERS.lastIndex = lineEnd;
    match = TRIGGERS.exec(piece);
  }
  return out + piece.slice(copied);
}

export const DEFAULT_PIECES: RedactionPieces = Object.freeze({ chunk: 256 * 1024, window: 16 * 1024 });

/** How far past the first candidate a cut inside a line is looked for, in candidates. */
const MAX_CUT_CANDIDATES = 64;

/** The end (exclusive) of the piece of `text` that starts at `start`. */
export function pieceEnd(text: string, start: number, pieces: RedactionPieces = DEFAULT_PIECES): number {
  const { chunk, window } = pieces;
  if (text.length - start <= chunk) return text.length;
  const target = start + chunk;
  const lineEnd = text.indexOf('\n', target);
  if (lineEnd !== -1 && lineEnd - target < chunk) return lineEnd + 1;
  const before = text.lastIndexOf('\n', target);
  if (before >= start + chunk / 2) return before + 1;
  // A long line: cut where nothing around the cut can belong to a secret.
  let candidate = target;
  for (let tried = 0; tried < MAX_CUT_CANDIDATES && candidate + window < text.length; tried++, candidate += 2 * window) {
    const around = text.slice(Math.max(0, candidate - window), candidate + window);
    if (!SECRET_TRIGGER.test(around) || redactSecrets(around) === around) return afterSeparator(text, candidate, window / 2);
  }
  // Words of secrets everywhere, and no line end for megabytes: cut anyway (a secret split here may be left whole).
  return notInPair(text, Math.min(text.length, target + 2 * window * MAX_CUT_CANDIDATES));
}

/**
 * The first cut at or after `cut` (within `reach`) that follows a character
 * a name cannot hold (not a letter, digit, `_`, `.`, `%`, `[`, `]` or `-`), so
 * that the patterns' look-behinds read the start of the next piece as they
 * read it in the whole text; `cut` itself when there is none.
 */
function afterSeparator(text: string, cut: number, reach: number): number {
  for (let at = cut; at < Math.min(text.length, cut + reach); at++) {
    if (!/[\w.%[\]-]/.test(text.charAt(at - 1)) && notInPair(text, at) === at) return at;
  }
  return notInPair(text, cut);
}

/** `cut`, or one before it when it would split a surrogate pair. */
export function notInPair(text: string, cut: number): number {
  const before = text.charCodeAt(cut - 1);
  return cut < text.length && before >= 0xd800 && before <= 0xdbff ? cut - 1 : cut;
}

/** `text` with secrets replaced by `***`, redacted piece by piece (see {@link RedactionPieces}). */
export function redactText(text: string, pieces: RedactionPieces = DEFAULT_PIECES): string {
  if (text.length <= pieces.chunk) return SECRET_TRIGGER.test(text) ? redactSecrets(text) : text;
  let out = '';
  let changed = false;
  for (let start = 0; start < text.length;) {
    const end = pieceEnd(text, start, pieces);
    const piece = text.slice(start, end);
    const redacted = SECRET_TRIGGER.test(piece) ? redactSecrets(piece) : piece;
    if (redacted !== piece) changed = true;
    out += redacted;
    start = end;
  }
  return changed ? out : text;
}

/** The pieces of `text`, each redacted, in order: for a caller that yields to the event loop between them. */
export function* redactedPieces(text: string, pieces: RedactionPieces = DEFAULT_PIECES): Generator<string> {
  for (let start = 0; start < text.length;) {
    const end = pieceEnd(text, start, pieces);
    yield redactPiece(text.slice(start, end));
    start = end;
  }
}

/**
 * `value` as JSON indented by two spaces, its secrets redacted as it is
 * written: every string (keys too) through {@link redactText}, and the
 * value of a key that names a secret (`password`, `api_key`, …, see
 * `isSecretName`) replaced by `***` when it is a string or a number. The
 * redaction works on the values, not on the JSON text, so it never breaks
 * the JSON. `toJSON` methods apply as in `JSON.stringify`.
 * @throws what `JSON.stringify` throws (a cycle, a BigInt).
 */
export function redactedJson(value: unknown): string {
  return JSON.stringify(value, redactingReplacer, 2) ?? 'null';
}

function redactingReplacer(this: unknown, key: string, value: unknown): unknown {
  if (typeof value === 'string') return key !== '' && isSecretName(key) ? REDACTED : redactText(value);
  if (typeof value === 'number' && key !== '' && isSecretName(key)) return REDACTED;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    // Keys are not values: a key that holds something secret-looking is rewritten by copying its object.
    let copy: Record<string, unknown> | undefined;
    for (const name of Object.keys(value)) {
      if (!SECRET_TRIGGER.test(name)) continue;
      const redacted = redactSecrets(name);
      if (redacted === name) continue;
      copy ??= { ...(value as Record<string, unknown>) };
      const entry = copy[name];
      delete copy[name];
      copy[redacted] = entry;
    }
    return copy ?? value;
  }
  return value;
}
