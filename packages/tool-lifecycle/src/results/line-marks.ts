import type { ResultSummary } from './result-store';

/** Lines between two marks at most. */
const LINES_PER_MARK = 1_024;
/** Bytes after a mark from which the next line start gets a mark. */
const BYTES_PER_MARK = 64 * 1024;
const LINE_FEED = 0x0a;

/**
 * Counts the bytes and lines of a document as it is written and notes where
 * some lines begin (see `ResultSummary.lineMarks`), so that a read by lines
 * scans at most 1,024 lines or 64 KiB plus one line.
 */
export class LineMarker {
  private bytes = 0;
  private newlines = 0;
  private lastByte = -1;
  private readonly marks: [number, number][] = [[1, 0]];
  private markedLine = 1;
  private markedOffset = 0;

  /** Takes the next bytes of the document. */
  add(chunk: Uint8Array): void {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let at = buffer.indexOf(LINE_FEED);
    while (at !== -1) {
      this.newlines++;
      const line = this.newlines + 1;
      const offset = this.bytes + at + 1;
      if (line - this.markedLine >= LINES_PER_MARK || offset - this.markedOffset >= BYTES_PER_MARK) {
        this.marks.push([line, offset]);
        this.markedLine = line;
        this.markedOffset = offset;
      }
      at = buffer.indexOf(LINE_FEED, at + 1);
    }
    if (buffer.length > 0) this.lastByte = buffer[buffer.length - 1] as number;
    this.bytes += buffer.length;
  }

  /** The summary of what was added: a last line without a line feed counts as a line. */
  summary(): ResultSummary {
    const lines = this.bytes === 0 ? 0 : this.newlines + (this.lastByte === LINE_FEED ? 0 : 1);
    // A mark at the very end (after a final line feed) names no line.
    const marks = this.marks.filter(([line]) => line <= Math.max(1, lines));
    return { bytes: this.bytes, lines, lineMarks: marks };
  }
}

/** The last mark at or before `line`. */
export function markBefore(summary: ResultSummary, line: number): readonly [number, number] {
  const marks = summary.lineMarks;
  let low = 0;
  let high = marks.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((marks[middle] as readonly [number, number])[0] <= line) low = middle;
    else high = middle - 1;
  }
  return marks[low] ?? [1, 0];
}
