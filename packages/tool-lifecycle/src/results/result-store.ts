import type { InjectionToken } from 'tsyringe';

/** How a stored document reads: the text a tool returned, or its output as JSON (indented by two spaces). */
export type StoredResultFormat = 'text' | 'json';

/** What identifies a stored result: its plan and handle, and the execution that produced it. */
export interface ResultRecord {
  readonly planId: string;
  /** `res-` and 24 letters and digits, unique in the plan. */
  readonly handle: string;
  readonly toolName: string;
  readonly executionId: string;
  readonly format: StoredResultFormat;
  /** ISO-8601. */
  readonly createdAt: string;
}

/**
 * The size of a stored document and where some of its lines begin, so that a
 * read by lines seeks instead of scanning from the start: `[line, offset]`
 * pairs (line numbers from 1, byte offsets from 0), one at least every 1,024
 * lines and at the first line that begins 64 KiB or more after the last one.
 */
export interface ResultSummary {
  readonly bytes: number;
  readonly lines: number;
  readonly lineMarks: readonly (readonly [line: number, offset: number])[];
}

/** A document the store holds whole. */
export interface StoredResult extends ResultRecord, ResultSummary {}

/** Writes one document, in order; nothing of it can be read before `finish`. */
export interface ResultWriter {
  /** Appends bytes (already redacted) to the document. */
  append(chunk: Uint8Array): Promise<void>;
  /** Completes the document: from now on `get` and `read` see it. */
  finish(summary: ResultSummary): Promise<void>;
  /** Gives the document up and removes what was written of it. Never throws. */
  abort(): Promise<void>;
}

/**
 * Where the runtime keeps outputs over the budget, per plan, for the time the
 * plan runs: `MemoryResultStore` in a process, a folder of files in the
 * `agents` command, Redis for a fleet (`@ca/plan-registry-redis`). The
 * runtime redacts secrets before anything reaches a store, reads only the
 * plan's own documents through it, and calls `dropPlan` when the plan ends.
 *
 * Plan ids and handles reach a store as given by the runtime (plan ids are
 * the service's, handles the runtime's own): a store that turns them into
 * names of files or keys must still not trust them to be safe names.
 */
export interface ResultStore {
  /** Says where the results are kept, for messages (`memory`, `files in /…`, `redis://…`). */
  readonly description?: string;
  /** Starts a document. */
  create(record: ResultRecord): Promise<ResultWriter>;
  /** The finished document of this plan with this handle, or `undefined`. */
  get(planId: string, handle: string): Promise<StoredResult | undefined>;
  /**
   * Bytes `[start, end)` of a finished document (`end` at most its size).
   * @throws when the document is not there (any error; the runtime reports it).
   */
  read(planId: string, handle: string, start: number, end: number): Promise<Uint8Array>;
  /** Forgets every document of the plan. Idempotent. */
  dropPlan(planId: string): Promise<void>;
}

/** The result store `registerToolRuntime` hands to the runtime (optional: a memory store when an output budget is set). */
export const RESULT_STORE: InjectionToken<ResultStore> = Symbol.for('ca.tool-lifecycle.ResultStore');

const HANDLE_PATTERN = /^res-[a-z0-9]{24}$/;

/** True when `value` has the form of a handle the runtime makes (`res-` and 24 lowercase letters and digits). */
export function isResultHandle(value: unknown): value is string {
  return typeof value === 'string' && HANDLE_PATTERN.test(value);
}

/** @internal True when `store` has the methods of a {@link ResultStore}. */
export function isResultStore(store: unknown): store is ResultStore {
  const candidate = store as Partial<Record<keyof ResultStore, unknown>> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.create === 'function' &&
    typeof candidate.get === 'function' &&
    typeof candidate.read === 'function' &&
    typeof candidate.dropPlan === 'function'
  );
}
