import type { ChangeInput, ToolExecutionTrace } from '@ca/tool-context';

/**
 * A piece of content a tool produced besides its structured output — text,
 * an image, a resource link — in the shape of MCP content blocks, which most
 * sources already speak. `type` says how to read the rest.
 */
export interface ToolContent {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** A tool ran and produced `output`. */
export interface ToolSuccess<O = unknown> {
  readonly ok: true;
  readonly output: O;
  /** Content blocks kept as the source produced them (MCP `content`, …). */
  readonly content?: readonly ToolContent[];
  /** What the tool changed; the runtime attributes and records them. */
  readonly changes?: readonly ChangeInput[];
  /** Source-specific details (e.g. MCP `_meta`), JSON-serialisable. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** A tool ran, or was stopped before running, and failed. */
export interface ToolFailure {
  readonly ok: false;
  /**
   * Why it failed. From the runtime this is a `ToolSchemaValidationError`,
   * a `ToolCancelledError` or an error of the `ToolRuntimeError` hierarchy;
   * every one carries a stable `code`.
   */
  readonly error: Error & { readonly code?: string };
  /** Whatever output the tool produced anyway (e.g. an MCP error payload). */
  readonly output?: unknown;
  readonly content?: readonly ToolContent[];
  readonly changes?: readonly ChangeInput[];
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** What a tool's `execute` resolves to. */
export type ToolResult<O = unknown> = ToolSuccess<O> | ToolFailure;

/**
 * What a caller gets instead of an output over the runtime's output budget:
 * the handle the output is kept under for the rest of the plan, and a
 * preview — the head and tail of a text, the shape of JSON. It is the
 * result's `output`, and its `handle` as well.
 */
export interface ResultHandle {
  /** `res-` and 24 lowercase letters and digits. */
  readonly handle: string;
  /** `'text'` for a text output (read it by lines or bytes), `'json'` for any other (by JSON pointer, lines or bytes). */
  readonly format: 'text' | 'json';
  /** Size of the output as the tool returned it: UTF-8 bytes of the text, or of its JSON. */
  readonly bytes: number;
  /** Lines of the text (a text output). */
  readonly lines?: number;
  /** The first lines of the text (at most 2,000 characters), secrets redacted. */
  readonly head?: string;
  /** The last lines of the text (at most 1,000 characters), secrets redacted. */
  readonly tail?: string;
  /** The structure of the JSON output: `{ "items": [ 12000 × { "id": number } ] }`. */
  readonly shape?: string;
  /** How to read the rest, in a sentence a model can follow. */
  readonly note: string;
}

/**
 * What `runtime.execute` resolves to: the tool's result plus the id of the
 * execution and its trace (the same object appended to the context).
 *
 * With an output budget (`options.outputBudget`), a successful output over it
 * is kept in the result store and the result carries `handle`: its `output`
 * is then that same {@link ResultHandle}, not the tool's output (the type
 * keeps `O` so that callers without a budget are not burdened). Where a
 * budget is configured, check `result.handle` before reading `output` as the
 * tool's own.
 */
export type ExecutionResult<O = unknown> = ToolResult<O> & {
  readonly executionId: string;
  readonly toolName: string;
  readonly trace: ToolExecutionTrace;
  /** Set when the output was over the budget and is kept behind this handle (then `output` is this object too). */
  readonly handle?: ResultHandle;
};

/** Builds a successful {@link ToolResult}. */
export function toolSuccess<O>(output: O, extra?: Omit<ToolSuccess<O>, 'ok' | 'output'>): ToolSuccess<O> {
  return extra === undefined ? { ok: true, output } : { ...extra, ok: true, output };
}

/** Builds a failed {@link ToolResult}. */
export function toolFailure(error: Error & { readonly code?: string }, extra?: Omit<ToolFailure, 'ok' | 'error'>): ToolFailure {
  return extra === undefined ? { ok: false, error } : { ...extra, ok: false, error };
}
