import { redactSecrets } from '@ca/domain';
import { DEFAULT_PIECES, SECRET_TRIGGER } from './redact-document';

/** Characters of the head and of the tail a preview of a text shows at most. */
export const PREVIEW_HEAD_CHARACTERS = 2_000;
export const PREVIEW_TAIL_CHARACTERS = 1_000;
/** Characters of a JSON shape at most. */
export const SHAPE_CHARACTERS = 2_000;

/**
 * The first and last characters of a long text, each redacted with enough
 * of its surroundings that a secret crossing the edge of the preview is seen
 * whole, and cut at a line end where one is near: what a caller sees of an
 * output kept behind a handle.
 */
export function textPreview(text: string): { readonly head: string; readonly tail: string } {
  const margin = DEFAULT_PIECES.window;
  const headWindow = text.slice(0, PREVIEW_HEAD_CHARACTERS + margin);
  const head = lineCut(redactWindow(headWindow).slice(0, PREVIEW_HEAD_CHARACTERS), 'end');
  const tailStart = Math.max(0, text.length - PREVIEW_TAIL_CHARACTERS - margin);
  // Start the window at a line start when there is one, so the redaction sees lines whole.
  const lineStart = text.lastIndexOf('\n', Math.max(tailStart, text.length - PREVIEW_TAIL_CHARACTERS - 1));
  const from = lineStart >= tailStart ? lineStart + 1 : tailStart;
  const tailWindow = redactWindow(text.slice(from));
  const tail = lineCut(tailWindow.slice(Math.max(0, tailWindow.length - PREVIEW_TAIL_CHARACTERS)), 'start');
  // Copies: a slice can keep the whole output alive (V8 shares the characters), and the preview outlives it.
  return { head: copyOf(head), tail: copyOf(tail) };
}

/** A string that shares no memory with the one it was cut from. */
export function copyOf(text: string): string {
  return Buffer.from(text, 'utf16le').toString('utf16le');
}

function redactWindow(text: string): string {
  return SECRET_TRIGGER.test(text) ? redactSecrets(text) : text;
}

/** Cuts a preview at a line end (head) or after a line start (tail) when one is in its second half; never half a surrogate pair. */
function lineCut(text: string, side: 'start' | 'end'): string {
  if (side === 'end') {
    const newline = text.lastIndexOf('\n');
    const cut = newline >= text.length / 2 ? text.slice(0, newline + 1) : text;
    const last = cut.charCodeAt(cut.length - 1);
    return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
  }
  const newline = text.indexOf('\n');
  const cut = newline !== -1 && newline < text.length / 2 ? text.slice(newline + 1) : text;
  const first = cut.charCodeAt(0);
  return first >= 0xdc00 && first <= 0xdfff ? cut.slice(1) : cut;
}

/**
 * A sketch of a JSON value's structure, for a preview: objects with their keys
 * and the shape of each value, arrays with their length and the shape of their
 * first item, scalars by type — `{ "items": [ 12000 × { "id": number, "name":
 * string } ], "total": number }`. At most four levels, twelve keys an object
 * and {@link SHAPE_CHARACTERS} characters; keys are redacted like everything
 * else shown.
 */
export function jsonShape(value: unknown): string {
  const shape = shapeOf(value, 0);
  return shape.length <= SHAPE_CHARACTERS ? shape : `${shape.slice(0, SHAPE_CHARACTERS - 1)}…`;
}

const MAX_DEPTH = 4;
const MAX_KEYS = 12;

function shapeOf(raw: unknown, depth: number): string {
  const value = jsonValueOf(raw);
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (depth >= MAX_DEPTH) return `[ ${value.length} items ]`;
    const first = shapeOf(value[0], depth + 1);
    const mixed = value.slice(1, 20).some((item) => kindOf(jsonValueOf(item)) !== kindOf(jsonValueOf(value[0])));
    return `[ ${value.length} × ${first}${mixed ? ' (and other kinds)' : ''} ]`;
  }
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) return '{}';
    if (depth >= MAX_DEPTH) return `{ ${keys.length} keys }`;
    const entries = keys.slice(0, MAX_KEYS).map((key) => {
      const name = JSON.stringify(SECRET_TRIGGER.test(key) ? redactSecrets(key) : key.slice(0, 100));
      return `${name}: ${shapeOf((value as Record<string, unknown>)[key], depth + 1)}`;
    });
    const more = keys.length > MAX_KEYS ? `, … ${keys.length - MAX_KEYS} more keys` : '';
    return `{ ${entries.join(', ')}${more} }`;
  }
  return kindOf(value);
}

/** What JSON.stringify would write for the value: its `toJSON()` when it has one. */
function jsonValueOf(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    try {
      return (value as { toJSON: () => unknown }).toJSON();
    } catch {
      return undefined;
    }
  }
  return value;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'object':
      return 'object';
    default:
      return 'null';
  }
}
