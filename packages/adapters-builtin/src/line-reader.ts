import type { FileHandle } from 'node:fs/promises';

/** One line of a file, as {@link readLines} yields it. */
export interface FileLine {
  /** 0-based line number. */
  readonly index: number;
  /** The line's bytes including its `\n`, cut to `maxLineBytes`. */
  readonly bytes: Buffer;
  /** Full length of the line in bytes, including the `\n`. */
  readonly length: number;
}

const NEWLINE = 0x0a;

/**
 * Yields the lines of an open file, reading it in fixed chunks from
 * `position` 0: memory stays bounded by the chunk size plus `maxLineBytes`,
 * whatever the size of the file or the length of a line. `check` runs before
 * every chunk (cancellation).
 */
export async function* readLines(
  handle: FileHandle,
  options: { readonly maxLineBytes: number; readonly check: () => void; readonly chunkBytes?: number },
): AsyncGenerator<FileLine> {
  const chunk = Buffer.allocUnsafe(options.chunkBytes ?? 64 * 1024);
  let parts: Buffer[] = [];
  let kept = 0;
  let length = 0;
  let index = 0;
  let position = 0;
  for (;;) {
    options.check();
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const data = chunk.subarray(0, bytesRead);
    let start = 0;
    while (start < bytesRead) {
      const newline = data.indexOf(NEWLINE, start);
      const end = newline === -1 ? bytesRead : newline + 1;
      if (kept < options.maxLineBytes) {
        const piece = data.subarray(start, Math.min(end, start + options.maxLineBytes - kept));
        // The chunk buffer is reused: keep a copy.
        parts.push(Buffer.from(piece));
        kept += piece.length;
      }
      length += end - start;
      start = end;
      if (newline !== -1) {
        yield { index: index++, bytes: parts.length === 1 ? parts[0] : Buffer.concat(parts), length };
        parts = [];
        kept = 0;
        length = 0;
      }
    }
  }
  if (length > 0) yield { index, bytes: parts.length === 1 ? parts[0] : Buffer.concat(parts), length };
}
