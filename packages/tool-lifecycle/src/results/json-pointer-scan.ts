/**
 * Finds the value a JSON pointer (RFC 6901) names in a stored JSON document
 * by reading the document in pieces, without parsing it into objects: the
 * memory a pointer read takes is one piece, whatever the document's size.
 * Values the pointer does not enter are skipped by counting brackets outside
 * strings. The document is one the runtime wrote (valid JSON); a document that
 * is not is reported as such, never looped on.
 */

/** Reads bytes `[start, end)` of the document. */
export type ReadBytes = (start: number, end: number) => Promise<Uint8Array>;

/** Where the value is: bytes `[start, end)` of the document. */
export interface PointerRange {
  readonly start: number;
  readonly end: number;
}

/** Why a pointer names no value. */
export interface PointerMiss {
  /** The part of the pointer that was found (`/items/3`), before the token that was not. */
  readonly found: string;
  readonly reason: string;
}

const PIECE_BYTES = 1024 * 1024;
/** Keys longer than this are compared by length only (a pointer token is at most 1,000 characters). */
const MAX_KEY_BYTES = 16 * 1024;
/** Pieces read between two turns of the event loop. */
const PIECES_PER_TURN = 4;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * The tokens of a JSON pointer: `''` is the whole document, `/a/0/b~1c` is
 * `['a', '0', 'b/c']`. `undefined` when it is not a pointer.
 */
export function pointerTokens(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  const tokens = pointer.slice(1).split('/');
  for (const token of tokens) if (/~(?![01])/.test(token)) return undefined;
  return tokens.map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** A cursor over the document, reading a piece at a time. */
class Cursor {
  private buffer: Uint8Array = new Uint8Array(0);
  private bufferStart = 0;
  private index = 0;
  private piecesRead = 0;

  constructor(
    private readonly read: ReadBytes,
    private readonly size: number,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** Absolute offset of the next byte. */
  get offset(): number {
    return this.bufferStart + this.index;
  }

  /** The next byte without taking it, or -1 at the end of the document. */
  async peek(): Promise<number> {
    if (this.index < this.buffer.length) return this.buffer[this.index] as number;
    if (!(await this.fill())) return -1;
    return this.buffer[this.index] as number;
  }

  async next(): Promise<number> {
    const byte = await this.peek();
    if (byte !== -1) this.index++;
    return byte;
  }

  async skipWhitespace(): Promise<number> {
    for (;;) {
      while (this.index < this.buffer.length) {
        const byte = this.buffer[this.index] as number;
        if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return byte;
        this.index++;
      }
      if (!(await this.fill())) return -1;
    }
  }

  /**
   * Reads a string whose opening quote was taken; returns its raw bytes (up
   * to `keep` of them) and its length. Escapes are kept as written.
   */
  async string(keep: number): Promise<{ raw: number[]; length: number; escaped: boolean }> {
    const raw: number[] = [];
    let length = 0;
    let escaped = false;
    let escape = false;
    for (;;) {
      while (this.index < this.buffer.length) {
        const byte = this.buffer[this.index++] as number;
        if (escape) escape = false;
        else if (byte === BACKSLASH) {
          escape = true;
          escaped = true;
        } else if (byte === QUOTE) return { raw, length, escaped };
        if (length < keep) raw.push(byte);
        length++;
      }
      if (!(await this.fill())) throw new Error('a string runs to the end of the document');
    }
  }

  /** Skips one value whose first byte is next (after whitespace). */
  async skipValue(): Promise<void> {
    const first = await this.skipWhitespace();
    if (first === -1) throw new Error('a value is missing at the end of the document');
    if (first === QUOTE) {
      this.index++;
      await this.string(0);
      return;
    }
    if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) {
      // A number, true, false or null: up to the next delimiter.
      for (;;) {
        while (this.index < this.buffer.length) {
          const byte = this.buffer[this.index] as number;
          if (byte === COMMA || byte === CLOSE_OBJECT || byte === CLOSE_ARRAY || byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) return;
          this.index++;
        }
        if (!(await this.fill())) return;
      }
    }
    let depth = 0;
    let inString = false;
    let escape = false;
    for (;;) {
      while (this.index < this.buffer.length) {
        const byte = this.buffer[this.index++] as number;
        if (inString) {
          if (escape) escape = false;
          else if (byte === BACKSLASH) escape = true;
          else if (byte === QUOTE) inString = false;
        } else if (byte === QUOTE) inString = true;
        else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) depth++;
        else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
          depth--;
          if (depth === 0) return;
        }
      }
      if (!(await this.fill())) throw new Error('an object or array runs to the end of the document');
    }
  }

  private async fill(): Promise<boolean> {
    const start = this.bufferStart + this.buffer.length;
    if (start >= this.size) return false;
    this.signal?.throwIfAborted();
    if (++this.piecesRead % PIECES_PER_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    this.buffer = await this.read(start, Math.min(this.size, start + PIECE_BYTES));
    this.bufferStart = start;
    this.index = 0;
    return this.buffer.length > 0;
  }
}

/**
 * The byte range of the value `tokens` name in a JSON document of `size`
 * bytes, or why there is none.
 * @throws Error when the document is not valid JSON where it was read, or the signal aborts.
 */
export async function findPointer(read: ReadBytes, size: number, tokens: readonly string[], signal?: AbortSignal): Promise<PointerRange | PointerMiss> {
  const cursor = new Cursor(read, size, signal);
  const found: string[] = [];
  const path = (): string => found.map((token) => `/${token.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
  for (const token of tokens) {
    const open = await cursor.skipWhitespace();
    if (open === OPEN_OBJECT) {
      await cursor.next();
      if (!(await enterKey(cursor, token)))
        return { found: path(), reason: `the object at '${path() || '/'}' has no key ${JSON.stringify(token.slice(0, 100))}` };
    } else if (open === OPEN_ARRAY) {
      await cursor.next();
      if (!/^(0|[1-9][0-9]{0,15})$/.test(token)) {
        return { found: path(), reason: `'${path() || '/'}' is an array: the next token must be an index, not ${JSON.stringify(token.slice(0, 100))}` };
      }
      const length = await enterIndex(cursor, Number(token));
      if (length !== undefined) return { found: path(), reason: `the array at '${path() || '/'}' has ${length} items, so no index ${token}` };
    } else {
      return { found: path(), reason: `'${path() || '/'}' is not an object or an array, so it has no '${token.slice(0, 100)}'` };
    }
    found.push(token);
  }
  await cursor.skipWhitespace();
  const start = cursor.offset;
  await cursor.skipValue();
  return { start, end: cursor.offset };
}

/** Moves to the value of `key` in the object just entered; false when it has no such key. */
async function enterKey(cursor: Cursor, key: string): Promise<boolean> {
  const wanted = Buffer.from(key, 'utf8');
  for (;;) {
    const next = await cursor.skipWhitespace();
    if (next === CLOSE_OBJECT) return false;
    if (next === COMMA) {
      await cursor.next();
      continue;
    }
    if (next !== QUOTE) throw new Error(`expected a key at byte ${cursor.offset}`);
    await cursor.next();
    const { raw, length, escaped } = await cursor.string(MAX_KEY_BYTES);
    if ((await cursor.skipWhitespace()) !== COLON) throw new Error(`expected ':' at byte ${cursor.offset}`);
    await cursor.next();
    if (length <= MAX_KEY_BYTES && keyEquals(raw, escaped, wanted, key)) return true;
    await cursor.skipValue();
  }
}

function keyEquals(raw: readonly number[], escaped: boolean, wanted: Buffer, key: string): boolean {
  if (!escaped) {
    if (raw.length !== wanted.length) return false;
    for (let index = 0; index < raw.length; index++) if (raw[index] !== wanted[index]) return false;
    return true;
  }
  try {
    return JSON.parse(`"${Buffer.from(raw).toString('utf8')}"`) === key;
  } catch {
    return false;
  }
}

/** Moves to item `wanted` of the array just entered; returns the array's length when it is too short. */
async function enterIndex(cursor: Cursor, wanted: number): Promise<number | undefined> {
  let index = 0;
  for (;;) {
    const next = await cursor.skipWhitespace();
    if (next === CLOSE_ARRAY) return index;
    if (next === COMMA) {
      await cursor.next();
      continue;
    }
    if (next === -1) throw new Error('an array runs to the end of the document');
    if (index === wanted) return undefined;
    await cursor.skipValue();
    index++;
  }
}
