/** What was kept of one output stream of a program. */
export interface CapturedOutput {
  /** The kept bytes as UTF-8 text (a character cut at the cap shows as U+FFFD). */
  readonly text: string;
  /** Bytes kept: at most the cap. */
  readonly keptBytes: number;
  /** Bytes the program wrote to the stream in all. */
  readonly totalBytes: number;
  /** True when bytes were dropped (`totalBytes > keptBytes`). */
  readonly truncated: boolean;
}

/** @internal Keeps the first `maxBytes` of a stream, counts the rest. */
export class HeadCapture {
  readonly #parts: Buffer[] = [];
  #kept = 0;
  #total = 0;

  constructor(private readonly maxBytes: number) {}

  add(chunk: Buffer): void {
    this.#total += chunk.length;
    const room = this.maxBytes - this.#kept;
    if (room <= 0) return;
    const piece = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.#parts.push(piece);
    this.#kept += piece.length;
  }

  result(): CapturedOutput {
    return Object.freeze({
      text: Buffer.concat(this.#parts, this.#kept).toString('utf8'),
      keptBytes: this.#kept,
      totalBytes: this.#total,
      truncated: this.#total > this.#kept,
    });
  }
}

/**
 * @internal Keeps the last `maxBytes` of a stream: for a long-lived program,
 * the newest output is what explains how it ended.
 */
export class TailCapture {
  #parts: Buffer[] = [];
  #kept = 0;
  #total = 0;

  constructor(private readonly maxBytes: number) {}

  add(chunk: Buffer): void {
    this.#total += chunk.length;
    if (this.maxBytes === 0) return;
    this.#parts.push(chunk.length > this.maxBytes ? chunk.subarray(chunk.length - this.maxBytes) : chunk);
    this.#kept += Math.min(chunk.length, this.maxBytes);
    // Drop whole chunks from the front while the rest still covers the cap, then cut the first one.
    while (this.#kept - (this.#parts[0] as Buffer).length >= this.maxBytes) this.#kept -= (this.#parts.shift() as Buffer).length;
    if (this.#kept > this.maxBytes) {
      const excess = this.#kept - this.maxBytes;
      this.#parts[0] = (this.#parts[0] as Buffer).subarray(excess);
      this.#kept = this.maxBytes;
    }
  }

  result(): CapturedOutput {
    const joined = Buffer.concat(this.#parts, this.#kept);
    this.#parts = [joined];
    return Object.freeze({ text: joined.toString('utf8'), keptBytes: this.#kept, totalBytes: this.#total, truncated: this.#total > this.#kept });
  }
}
