/**
 * UTF-8 bytes of `JSON.stringify(value)` — what a trace's `resultSizeBytes`
 * holds — without building the text when `value` is plain data: strings,
 * finite and non-finite numbers, booleans, `null`, arrays, and objects whose
 * prototype is `Object.prototype` or `null`, with no `toJSON`. Anything else
 * anywhere in it (a `Date`, a class instance, a `BigInt`, a `toJSON`), data
 * deeper than 64 levels (or a cycle), or more than 64 MiB, and the answer is
 * `JSON.stringify`'s own, so it is the same in every case: `undefined` where
 * `JSON.stringify` returns `undefined` (a function, a symbol, `undefined`).
 * @throws What `JSON.stringify(value)` throws (a cycle, a `BigInt`, a `toJSON` that throws).
 */
export function jsonByteLength(value: unknown): number | undefined {
  const walked = plainBytes(value, 0);
  if (walked !== NOT_PLAIN) return walked === OMITTED ? undefined : walked;
  const json = JSON.stringify(value);
  return json === undefined ? undefined : Buffer.byteLength(json, 'utf8');
}

/** The walk met something only `JSON.stringify` can answer for. */
const NOT_PLAIN = -1;
/** A value `JSON.stringify` leaves out of an object (and writes as `null` in an array). */
const OMITTED = -2;
const MAX_DEPTH = 64;
const MAX_WALKED_BYTES = 64 * 1024 * 1024;

/** Characters a JSON string escapes, and anything beyond ASCII: the rest is one byte each. */
// eslint-disable-next-line no-control-regex -- the control characters are the ones JSON escapes
const NOT_PLAIN_ASCII = /[\u0000-\u001f"\\\u0080-\uffff]/;

function plainBytes(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
      return stringBytes(value);
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4; // NaN and ±Infinity are `null`
    case 'boolean':
      return value ? 4 : 5;
    case 'undefined':
    case 'function':
    case 'symbol':
      return OMITTED;
    case 'object':
      if (value === null) return 4;
      if (depth >= MAX_DEPTH) return NOT_PLAIN;
      return Array.isArray(value) ? arrayBytes(value, depth + 1) : objectBytes(value as Record<string, unknown>, depth + 1);
    default:
      return NOT_PLAIN; // bigint: JSON.stringify throws unless BigInt.prototype.toJSON says otherwise
  }
}

function arrayBytes(array: readonly unknown[], depth: number): number {
  if (Object.getPrototypeOf(array) !== Array.prototype || typeof (array as { toJSON?: unknown }).toJSON === 'function') return NOT_PLAIN;
  let bytes = 2 + Math.max(array.length - 1, 0); // brackets and commas
  for (let index = 0; index < array.length; index++) {
    const item = plainBytes(array[index], depth);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    bytes += item === OMITTED ? 4 : item;
    if (bytes > MAX_WALKED_BYTES) return NOT_PLAIN;
  }
  return bytes;
}

function objectBytes(object: Record<string, unknown>, depth: number): number {
  const prototype = Object.getPrototypeOf(object);
  if ((prototype !== Object.prototype && prototype !== null) || typeof object.toJSON === 'function') return NOT_PLAIN;
  let bytes = 2; // braces
  let members = 0;
  // Own enumerable string keys in JSON.stringify's order (for...in visits
  // them first, in that order; inherited ones are skipped).
  for (const key in object) {
    if (!Object.prototype.hasOwnProperty.call(object, key)) continue;
    const member = plainBytes(object[key], depth);
    if (member === NOT_PLAIN) return NOT_PLAIN;
    if (member === OMITTED) continue;
    bytes += stringBytes(key) + 1 + member; // "key":value
    members++;
    if (bytes > MAX_WALKED_BYTES) return NOT_PLAIN;
  }
  return bytes + Math.max(members - 1, 0); // commas
}

/** Bytes of a JSON string literal: quotes, escapes, and UTF-8 beyond ASCII (a lone surrogate is escaped as \uXXXX). */
function stringBytes(text: string): number {
  if (!NOT_PLAIN_ASCII.test(text)) return text.length + 2;
  let bytes = 2;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) {
      if (code === 0x22 || code === 0x5c) bytes += 2;
      else if (code >= 0x20) bytes += 1;
      else bytes += code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6;
    } else if (code < 0x800) {
      bytes += 2;
    } else if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        index++;
      } else {
        bytes += 6;
      }
    } else if (code >= 0xdc00 && code <= 0xdfff) {
      bytes += 6;
    } else {
      bytes += 3;
    }
  }
  return bytes;
}
