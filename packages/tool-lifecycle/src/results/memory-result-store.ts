import { ToolInvalidArgumentError } from '../errors';
import type { ResultRecord, ResultStore, ResultSummary, ResultWriter, StoredResult } from './result-store';

/** Settings of a {@link MemoryResultStore}. */
export interface MemoryResultStoreOptions {
  /** Most bytes the store holds, all plans together (default 512 MiB); a document that would go past it is refused. */
  readonly maxBytes?: number;
}

interface Document {
  readonly record: ResultRecord;
  readonly chunks: Uint8Array[];
  /** Byte offset where each chunk starts. */
  readonly starts: number[];
  bytes: number;
  summary: ResultSummary | undefined;
}

const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;

/**
 * Keeps results in the process's memory, per plan: the default store of a
 * runtime with an output budget. The chunks written are kept as they are (no
 * copy into one buffer), and a read returns a view of them when the range
 * lies in one chunk.
 */
export class MemoryResultStore implements ResultStore {
  readonly description = 'memory';
  private readonly plans = new Map<string, Map<string, Document>>();
  private readonly maxBytes: number;
  private held = 0;

  /** @throws ToolInvalidArgumentError for a `maxBytes` that is not a positive whole number. */
  constructor(options: MemoryResultStoreOptions = {}) {
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
      throw new ToolInvalidArgumentError({ argument: 'maxBytes', expected: 'a positive whole number of bytes', received: options.maxBytes });
    }
    this.maxBytes = maxBytes;
  }

  /** Bytes held now, all plans together. */
  get bytesHeld(): number {
    return this.held;
  }

  async create(record: ResultRecord): Promise<ResultWriter> {
    const document: Document = { record, chunks: [], starts: [], bytes: 0, summary: undefined };
    let plan = this.plans.get(record.planId);
    if (plan === undefined) {
      plan = new Map();
      this.plans.set(record.planId, plan);
    }
    plan.set(record.handle, document);
    let open = true;
    const present = (): boolean => this.plans.get(record.planId)?.get(record.handle) === document;
    const release = (): void => {
      if (!open) return;
      open = false;
      if (!present()) return;
      this.plans.get(record.planId)?.delete(record.handle);
      this.held -= document.bytes;
    };
    return {
      append: async (chunk) => {
        if (!open || document.summary !== undefined || !present()) throw new Error('the document was given up, finished, or its plan ended');
        if (this.held + chunk.byteLength > this.maxBytes) {
          release();
          throw new Error(`the memory store holds ${this.held} bytes and takes at most ${this.maxBytes}`);
        }
        document.starts.push(document.bytes);
        document.chunks.push(chunk);
        document.bytes += chunk.byteLength;
        this.held += chunk.byteLength;
      },
      finish: async (summary) => {
        if (!open || !present()) throw new Error('the document was given up, or its plan ended');
        document.summary = summary;
      },
      abort: async () => release(),
    };
  }

  async get(planId: string, handle: string): Promise<StoredResult | undefined> {
    const document = this.plans.get(planId)?.get(handle);
    if (document?.summary === undefined) return undefined;
    return { ...document.record, ...document.summary };
  }

  async read(planId: string, handle: string, start: number, end: number): Promise<Uint8Array> {
    const document = this.plans.get(planId)?.get(handle);
    if (document?.summary === undefined) throw new Error(`no result '${handle}' in plan '${planId}'`);
    const from = Math.max(0, Math.min(start, document.bytes));
    const to = Math.max(from, Math.min(end, document.bytes));
    if (from === to) return new Uint8Array(0);
    const first = chunkAt(document.starts, from);
    const last = chunkAt(document.starts, to - 1);
    if (first === last) {
      const offset = document.starts[first] ?? 0;
      return (document.chunks[first] as Uint8Array).subarray(from - offset, to - offset);
    }
    const out = new Uint8Array(to - from);
    let written = 0;
    for (let index = first; index <= last; index++) {
      const chunk = document.chunks[index] as Uint8Array;
      const offset = document.starts[index] ?? 0;
      const piece = chunk.subarray(Math.max(0, from - offset), Math.min(chunk.byteLength, to - offset));
      out.set(piece, written);
      written += piece.byteLength;
    }
    return out;
  }

  async dropPlan(planId: string): Promise<void> {
    const plan = this.plans.get(planId);
    if (plan === undefined) return;
    this.plans.delete(planId);
    for (const document of plan.values()) this.held -= document.bytes;
  }
}

/** The index of the chunk holding byte `offset` (the last start ≤ offset). */
function chunkAt(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((starts[middle] as number) <= offset) low = middle;
    else high = middle - 1;
  }
  return low;
}
