import { randomBytes } from 'node:crypto';
import { messageOf } from '@ca/domain';
import { compileLinearPattern, PatternCompileError, type LinearPattern } from '@ca/schema';
import type { PlanContext } from '@ca/tool-context';
import type { RuntimeLogger } from '../observability';
import type { ExecutionResult, ResultHandle, ToolContent } from '../tool';
import { findPointer, pointerTokens } from './json-pointer-scan';
import { LineMarker, markBefore } from './line-marks';
import { OutputBudget } from './output-budget';
import { jsonShape, textPreview } from './result-preview';
import { notInPair, redactedJson, redactedPieces } from './redact-document';
import type { ResultRecord, ResultStore, StoredResult, StoredResultFormat } from './result-store';
import { isResultHandle } from './result-store';
import { ToolResultError } from './tool-result-error';

/** A read of part of a stored result (`results.read`). */
export interface ResultReadRequest {
  readonly handle: string;
  /** Lines `from` to `to`, both included, from 1 (default: 100 lines). */
  readonly lines?: { readonly from: number; readonly to?: number };
  /** Bytes `[start, end)`, from 0. */
  readonly bytes?: { readonly start: number; readonly end?: number };
  /** A JSON pointer (RFC 6901) into a JSON result: `/items/0/name`; `''` is the whole document. */
  readonly pointer?: string;
  /** Most bytes of text returned (default 16,384; 256 to 262,144). */
  readonly maxBytes?: number;
}

/** What a read returns. */
export interface ResultRead {
  readonly handle: string;
  readonly format: StoredResultFormat;
  readonly text: string;
  /** Size of the stored document (JSON indented by two spaces; where secrets were redacted, a little shorter than the output). */
  readonly totalBytes: number;
  readonly totalLines: number;
  /** What was read: bytes `[start, end)` of the document and, for a read by lines, the lines. */
  readonly range: { readonly bytes: { readonly start: number; readonly end: number }; readonly lines?: { readonly from: number; readonly to: number } };
  /** True when `maxBytes` cut the read short of what was asked. */
  readonly truncated: boolean;
  /** The read that continues this one, when something is left. */
  readonly next?: Pick<ResultReadRequest, 'lines' | 'bytes'>;
}

/** A search of a stored result (`results.grep`). */
export interface ResultGrepRequest {
  readonly handle: string;
  /** A regular expression in RE2 syntax (no lookaround, no backreferences), at most 1,000 characters. */
  readonly pattern: string;
  readonly ignoreCase?: boolean;
  /** Most matching lines returned (default 50, at most 1,000). */
  readonly maxMatches?: number;
}

/** What a search returns: matching lines (each at most 300 characters), in order. */
export interface ResultGrep {
  readonly handle: string;
  readonly matches: readonly { readonly line: number; readonly text: string }[];
  /** True when more lines matched than `maxMatches`. */
  readonly truncated: boolean;
  readonly linesSearched: number;
}

const DEFAULT_READ_BYTES = 16_384;
const MAX_READ_BYTES = 262_144;
const DEFAULT_READ_LINES = 100;
const DEFAULT_MATCHES = 50;
const MAX_MATCHES = 1_000;
const MATCH_CHARACTERS = 300;
const MAX_PATTERN_LENGTH = 1_000;
/** Bytes read at a time when scanning a stored document. */
const SCAN_BYTES = 1024 * 1024;
/** Characters of JSON written to the store at a time. */
const JSON_PIECE_CHARACTERS = 1024 * 1024;
/** Lines of grep longer than this are tested in pieces of this size. */
const MAX_LINE_TEST_BYTES = 1024 * 1024;

/** Run on an empty text once a document is written: the engine's last input is then that, not a piece of the output. */
const FORGET_INPUT = /^$/;

/** The tools whose outputs are never stored (the runtime's own readers and the search). */
export const UNSTORED_TOOLS: ReadonlySet<string> = new Set(['results.read', 'results.grep', 'tools.search']);

interface PlanResults {
  /** Bytes of output the plan got back whole. */
  inline: number;
  /** Documents still being written, by handle. */
  readonly pending: Map<string, Promise<void>>;
  /** Documents that could not be stored, with why. */
  readonly failed: Map<string, unknown>;
  readonly abort: AbortController;
}

/**
 * The runtime's results over the budget: step 6½ of an execution (an output
 * over the budget goes to the store behind a handle; the caller gets a
 * preview), the reads and searches of `results.read` and `results.grep`, and
 * the plan's documents dropped when it ends.
 */
export class ResultHandles {
  private readonly plans = new Map<string, PlanResults>();
  private readonly ended = new WeakSet<object>();

  constructor(
    readonly store: ResultStore,
    readonly budget: OutputBudget,
    private readonly logger: RuntimeLogger,
  ) {}

  /**
   * Step 6½: a successful output over its budget (the tool's, or what is left
   * of the plan's) is kept behind a handle: the text of its content blocks
   * when it has some (what a model is shown), else the output itself (a text,
   * or JSON indented by two spaces). The result is changed in place:
   * `output` and `handle` become the {@link ResultHandle}, and its content
   * keeps only resource links and images (the text is in the stored
   * document). Secrets are redacted before anything is written; the writing
   * goes on after this returns, and reads of the handle wait for it. With
   * `force`, the output is kept whatever its size (a front door whose own
   * limit is smaller than the budget).
   */
  limit<R extends ExecutionResult<never>>(result: R, ctx: PlanContext, options: { readonly force?: boolean } = {}): R {
    if (!result.ok || result.handle !== undefined || UNSTORED_TOOLS.has(result.toolName) || this.ended.has(ctx)) return result;
    const output = result.output as unknown;
    const size = Math.max(result.trace.resultSizeBytes, contentTextLength(result.content));
    const plan = this.planOf(ctx.planId);
    const planBytes = this.budget.planBytes;
    const over =
      options.force === true ||
      size > this.budget.forTool(result.toolName) ||
      (planBytes !== undefined && size > OutputBudget.PLAN_FLOOR_BYTES && plan.inline + size > planBytes);
    if (!over) {
      plan.inline += size;
      return result;
    }
    // What is stored is what a model is shown of a result: its content's text when it has some (an MCP
    // tool's text blocks), else its output — a text as it is, anything else as JSON.
    const text = contentText(result.content) ?? (typeof output === 'string' ? output : undefined);
    const handle = `res-${randomBytes(18)
      .toString('base64url')
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '0')}`;
    const record: ResultRecord = {
      planId: ctx.planId,
      handle,
      toolName: result.toolName,
      executionId: result.executionId,
      format: text === undefined ? 'json' : 'text',
      createdAt: new Date().toISOString(),
    };
    let preview: ResultHandle;
    if (text !== undefined) {
      const { head, tail } = textPreview(text);
      const bytes = Buffer.byteLength(text, 'utf8');
      const lines = countLines(text);
      preview = {
        handle,
        format: 'text',
        bytes,
        lines,
        head,
        tail,
        note: `The output (${bytes} bytes, ${lines} lines) is kept as ${handle} for the rest of the plan; its first and last lines are shown. Read other lines with results.read { "handle": "${handle}", "lines": { "from": 1, "to": 100 } } (or "bytes"), or find lines with results.grep { "handle": "${handle}", "pattern": "…" }.`,
      };
    } else {
      preview = {
        handle,
        format: 'json',
        bytes: size,
        shape: jsonShape(output),
        note: `The output (JSON, ${size} bytes) is kept as ${handle} for the rest of the plan; its shape is shown. Read a part with results.read { "handle": "${handle}", "pointer": "/…" } (or "lines" of the JSON, indented), or find lines with results.grep { "handle": "${handle}", "pattern": "…" }.`,
      };
    }
    const writing = this.write(record, plan, text === undefined ? { json: output } : { text });
    plan.pending.set(handle, writing);
    void writing.finally(() => plan.pending.delete(handle));
    const changed = result as unknown as { output: unknown; handle: ResultHandle; content?: readonly ToolContent[] };
    changed.output = preview;
    changed.handle = preview;
    const kept = result.content?.filter((block) => block?.type === 'resource_link' || block?.type === 'image');
    if (kept === undefined || kept.length === 0) delete changed.content;
    else changed.content = kept;
    return result;
  }

  /**
   * Part of a stored result: lines, a byte range, or the value at a JSON pointer.
   * @throws ToolResultError (`TOOL_RESULT_NOT_FOUND`, `TOOL_RESULT_READ_INVALID`, `TOOL_RESULT_STORE_FAILED`).
   */
  async read(planId: string, request: ResultReadRequest, signal?: AbortSignal): Promise<ResultRead> {
    const stored = await this.lookup(planId, request?.handle);
    const fail = (detail: string, advice: string): never => {
      throw new ToolResultError({ problem: 'invalid-read', handle: stored.handle, planId, detail, advice });
    };
    const maxBytes = request.maxBytes ?? DEFAULT_READ_BYTES;
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 256 || maxBytes > MAX_READ_BYTES)
      fail(`maxBytes ${String(maxBytes)} is out of range`, `Ask for 256 to ${MAX_READ_BYTES} bytes.`);
    const asked = [request.lines, request.bytes, request.pointer].filter((value) => value !== undefined).length;
    if (asked > 1) fail('a read takes one of lines, bytes and pointer', 'Ask for one of them.');
    const total = { bytes: stored.bytes, lines: stored.lines };
    if (request.pointer !== undefined) return this.readPointer(stored, request.pointer, maxBytes, fail, signal);
    if (request.bytes !== undefined) {
      const { start, end = start + maxBytes } = request.bytes;
      if (!Number.isSafeInteger(start) || start < 0 || (start >= total.bytes && total.bytes > 0)) {
        fail(`byte ${String(start)} is not in it (it has ${total.bytes} bytes, from 0)`, `Ask for a start from 0 to ${Math.max(0, total.bytes - 1)}.`);
      }
      if (!Number.isSafeInteger(end) || end <= start)
        fail(`the end ${String(end)} is not after the start ${start}`, 'Ask for an end after the start, or leave it out.');
      return this.readBytes(stored, start, end, maxBytes);
    }
    const from = request.lines?.from ?? 1;
    const to = request.lines?.to ?? from + DEFAULT_READ_LINES - 1;
    if (!Number.isSafeInteger(from) || from < 1 || from > Math.max(1, total.lines)) {
      fail(`line ${String(from)} is not in it (it has ${total.lines} lines, from 1)`, `Ask for lines from 1 to ${total.lines}.`);
    }
    if (!Number.isSafeInteger(to) || to < from) fail(`line ${String(to)} comes before line ${from}`, 'Ask for "to" at or after "from", or leave it out.');
    return this.readLines(stored, from, Math.min(to, Math.max(1, total.lines)), maxBytes);
  }

  /**
   * The lines of a stored result that match a pattern, on the linear-time engine.
   * @throws ToolResultError (`TOOL_RESULT_NOT_FOUND`, `TOOL_RESULT_READ_INVALID` for a bad pattern, `TOOL_RESULT_STORE_FAILED`).
   */
  async grep(planId: string, request: ResultGrepRequest, signal?: AbortSignal): Promise<ResultGrep> {
    const stored = await this.lookup(planId, request?.handle);
    const fail = (detail: string, advice: string): never => {
      throw new ToolResultError({ problem: 'invalid-read', handle: stored.handle, planId, detail, advice });
    };
    const maxMatches = request.maxMatches ?? DEFAULT_MATCHES;
    if (!Number.isSafeInteger(maxMatches) || maxMatches < 1 || maxMatches > MAX_MATCHES)
      fail(`maxMatches ${String(maxMatches)} is out of range`, `Ask for 1 to ${MAX_MATCHES}.`);
    if (typeof request.pattern !== 'string' || request.pattern.length === 0 || request.pattern.length > MAX_PATTERN_LENGTH) {
      fail('the pattern is empty or longer than 1,000 characters', 'Give a regular expression of 1 to 1,000 characters.');
    }
    let pattern: LinearPattern | undefined;
    try {
      pattern = compileLinearPattern(request.pattern, { syntax: 're2', ignoreCase: request.ignoreCase === true });
    } catch (error) {
      if (!PatternCompileError.isInstance(error)) throw error;
      fail(`the pattern cannot be used: ${error.message}`, 'Write it in RE2 syntax, without lookaround or backreferences.');
    }
    const matcher = pattern as LinearPattern;
    const matches: { line: number; text: string }[] = [];
    let line = 1;
    let truncated = false;
    let carry: Buffer | undefined;
    let carryMatched = false;
    const test = (bytes: Buffer): boolean => matcher.test(bytes.toString('utf8'));
    const note = (bytes: Buffer): void => {
      if (matches.length >= maxMatches) truncated = true;
      else matches.push({ line, text: matchText(bytes) });
    };
    scan: for (let offset = 0; offset < stored.bytes; offset += SCAN_BYTES) {
      signal?.throwIfAborted();
      if (offset > 0) await turn();
      const piece = Buffer.from(await this.readStored(stored, offset, Math.min(stored.bytes, offset + SCAN_BYTES)));
      let start = 0;
      for (let at = piece.indexOf(0x0a); ; at = piece.indexOf(0x0a, start)) {
        const end = at === -1 ? piece.length : at;
        const part = piece.subarray(start, end);
        const whole: Buffer = carry === undefined ? part : Buffer.concat([carry, part]);
        if (at === -1) {
          // The line goes on in the next piece; a very long one is tested as it grows.
          if (whole.length >= MAX_LINE_TEST_BYTES) {
            if (!carryMatched && test(whole)) {
              note(whole);
              carryMatched = true;
            }
            carry = whole.subarray(whole.length - 4_096);
          } else carry = whole;
          break;
        }
        if (!carryMatched && test(whole)) note(whole);
        carry = undefined;
        carryMatched = false;
        line++;
        start = at + 1;
        if (truncated) break scan;
      }
    }
    if (carry !== undefined && carry.length > 0 && !carryMatched && !truncated && test(carry)) note(carry);
    return { handle: stored.handle, matches, truncated, linesSearched: truncated ? line : stored.lines };
  }

  /** Drops what the plan stored: writes still going are stopped, then the store forgets the plan. Never throws. */
  async endPlan(ctx: PlanContext): Promise<void> {
    this.ended.add(ctx);
    const plan = this.plans.get(ctx.planId);
    this.plans.delete(ctx.planId);
    if (plan !== undefined) {
      plan.abort.abort();
      await Promise.allSettled([...plan.pending.values()]);
    }
    try {
      await this.store.dropPlan(ctx.planId);
    } catch (error) {
      this.logger.warn(`The results of plan '${ctx.planId}' could not be removed from the result store: ${messageOf(error)}`, { planId: ctx.planId });
    }
  }

  private planOf(planId: string): PlanResults {
    let plan = this.plans.get(planId);
    if (plan === undefined) {
      plan = { inline: 0, pending: new Map(), failed: new Map(), abort: new AbortController() };
      this.plans.set(planId, plan);
    }
    return plan;
  }

  /** Redacts and writes a document, a piece at a time, each piece on a turn of the event loop of its own. */
  private async write(record: ResultRecord, plan: PlanResults, source: { readonly text: string } | { readonly json: unknown }): Promise<void> {
    await turn();
    const signal = plan.abort.signal;
    let writer: Awaited<ReturnType<ResultStore['create']>> | undefined;
    try {
      signal.throwIfAborted();
      writer = await this.store.create(record);
      const marks = new LineMarker();
      const append = async (piece: string): Promise<void> => {
        signal.throwIfAborted();
        const bytes = Buffer.from(piece, 'utf8');
        marks.add(bytes);
        await (writer as NonNullable<typeof writer>).append(bytes);
        await turn();
      };
      if ('text' in source) {
        for (const piece of redactedPieces(source.text)) await append(piece);
      } else {
        const json = redactedJson(source.json);
        for (let start = 0; start < json.length;) {
          const end = notInPair(json, Math.min(json.length, start + JSON_PIECE_CHARACTERS));
          await append(json.slice(start, end));
          start = end;
        }
      }
      await writer.finish(marks.summary());
      // The last input of a regular expression stays reachable (RegExp.input): make it a small one, so the output is not kept.
      FORGET_INPUT.test('');
    } catch (error) {
      await writer?.abort().catch(() => undefined);
      if (signal.aborted) return;
      plan.failed.set(record.handle, error);
      this.logger.warn(`The output of tool '${record.toolName}' in plan '${record.planId}' could not be stored as ${record.handle}: ${messageOf(error)}`, {
        toolName: record.toolName,
        planId: record.planId,
        executionId: record.executionId,
      });
    }
  }

  /** The finished document of the plan with this handle, once written. */
  private async lookup(planId: string, handle: unknown): Promise<StoredResult> {
    const given = typeof handle === 'string' ? handle : String(handle);
    const notFound = (): never => {
      throw new ToolResultError({
        problem: 'not-found',
        handle: given,
        planId,
        detail: 'this plan has no stored result with that handle',
        advice: 'Use a handle this plan got back (res-…) before it ended; run the tool again if the plan that had it is over.',
      });
    };
    if (!isResultHandle(handle)) return notFound();
    const plan = this.plans.get(planId);
    const pending = plan?.pending.get(handle);
    if (pending !== undefined) await pending;
    const failure = plan?.failed.get(handle);
    if (failure !== undefined) {
      throw new ToolResultError({
        problem: 'store-failed',
        handle,
        planId,
        detail: `it could not be stored (${messageOf(failure)})`,
        advice: 'Run the tool again with arguments that ask for less.',
        cause: failure,
      });
    }
    let stored: StoredResult | undefined;
    try {
      stored = await this.store.get(planId, handle);
    } catch (error) {
      throw new ToolResultError({
        problem: 'store-failed',
        handle,
        planId,
        detail: `the result store failed (${messageOf(error)})`,
        advice: 'Try again.',
        cause: error,
      });
    }
    if (stored === undefined || stored.planId !== planId || stored.handle !== handle) return notFound();
    return stored;
  }

  private async readStored(stored: StoredResult, start: number, end: number): Promise<Uint8Array> {
    try {
      return await this.store.read(stored.planId, stored.handle, start, end);
    } catch (error) {
      throw new ToolResultError({
        problem: 'store-failed',
        handle: stored.handle,
        planId: stored.planId,
        detail: `the result store failed to read it (${messageOf(error)})`,
        advice: 'Try again.',
        cause: error,
      });
    }
  }

  private async readBytes(stored: StoredResult, askedStart: number, askedEnd: number, maxBytes: number): Promise<ResultRead> {
    const limit = Math.min(stored.bytes, askedEnd, askedStart + maxBytes);
    const raw = Buffer.from(await this.readStored(stored, askedStart, Math.min(stored.bytes, limit + 4)));
    // Whole characters only: a start inside a character moves to its end, an end inside one moves to its start.
    let start = 0;
    while (start < raw.length && start < 4 && isContinuation(raw[start] as number)) start++;
    let end = limit - askedStart;
    while (end > start && end < raw.length && isContinuation(raw[end] as number)) end--;
    const absoluteEnd = askedStart + end;
    const wanted = Math.min(stored.bytes, askedEnd);
    const truncated = absoluteEnd < wanted;
    return {
      handle: stored.handle,
      format: stored.format,
      text: raw.subarray(start, end).toString('utf8'),
      totalBytes: stored.bytes,
      totalLines: stored.lines,
      range: { bytes: { start: askedStart + start, end: absoluteEnd } },
      truncated,
      ...(truncated ? { next: { bytes: { start: absoluteEnd, end: wanted } } } : {}),
    };
  }

  private async readLines(stored: StoredResult, from: number, to: number, maxBytes: number): Promise<ResultRead> {
    const start = await this.lineStart(stored, from);
    const end = to >= stored.lines ? stored.bytes : await this.lineStart(stored, to + 1);
    const limit = Math.min(end, start + maxBytes);
    const raw = Buffer.from(await this.readStored(stored, start, limit));
    let cut = raw.length;
    let lastLine = to;
    let truncated = false;
    if (limit < end) {
      truncated = true;
      const lastFeed = raw.lastIndexOf(0x0a);
      if (lastFeed !== -1) {
        cut = lastFeed + 1;
        lastLine = from + countFeeds(raw.subarray(0, cut)) - 1;
      } else {
        while (cut > 0 && isContinuation(raw[cut] as number)) cut--;
        lastLine = from;
      }
    }
    const text = raw.subarray(0, cut).toString('utf8');
    const readEnd = start + cut;
    const wholeLines = !truncated || cut === 0 || raw[cut - 1] === 0x0a;
    return {
      handle: stored.handle,
      format: stored.format,
      text,
      totalBytes: stored.bytes,
      totalLines: stored.lines,
      range: { bytes: { start, end: readEnd }, lines: { from, to: lastLine } },
      truncated,
      ...(truncated
        ? { next: wholeLines ? { lines: { from: lastLine + 1, to } } : { bytes: { start: readEnd, end } } }
        : to < stored.lines
          ? { next: { lines: { from: to + 1 } } }
          : {}),
    };
  }

  /** The byte offset where `line` begins (1-based), scanning from the closest mark. */
  private async lineStart(stored: StoredResult, line: number): Promise<number> {
    const [markLine, markOffset] = markBefore(stored, line);
    let current = markLine;
    let offset = markOffset;
    while (current < line && offset < stored.bytes) {
      const piece = Buffer.from(await this.readStored(stored, offset, Math.min(stored.bytes, offset + SCAN_BYTES)));
      let at = piece.indexOf(0x0a);
      while (at !== -1 && current < line) {
        current++;
        if (current === line) return offset + at + 1;
        at = piece.indexOf(0x0a, at + 1);
      }
      offset += piece.length;
      if (piece.length === 0) break;
      await turn();
    }
    return current === line ? offset : stored.bytes;
  }

  private async readPointer(
    stored: StoredResult,
    pointer: string,
    maxBytes: number,
    fail: (detail: string, advice: string) => never,
    signal: AbortSignal | undefined,
  ): Promise<ResultRead> {
    if (stored.format !== 'json') fail('it is text, which has no JSON pointer', 'Read it by lines or bytes.');
    const tokens = typeof pointer === 'string' && pointer.length <= MAX_PATTERN_LENGTH ? pointerTokens(pointer) : undefined;
    if (tokens === undefined)
      fail(
        `${JSON.stringify(String(pointer).slice(0, 100))} is not a JSON pointer`,
        "Write one as '/key/0/name' ('' for the whole document; ~1 for '/', ~0 for '~').",
      );
    let found;
    try {
      found = await findPointer((start, end) => this.readStored(stored, start, end), stored.bytes, tokens as string[], signal);
    } catch (error) {
      if (ToolResultError.isInstance(error) || signal?.aborted === true) throw error;
      throw new ToolResultError({
        problem: 'store-failed',
        handle: stored.handle,
        planId: stored.planId,
        detail: `its JSON could not be read (${messageOf(error)})`,
        advice: 'Read it by lines or bytes instead.',
        cause: error,
      });
    }
    if ('reason' in found) return fail(`${found.reason}`, 'Read the shape in the preview, or the object around it with a shorter pointer.');
    const read = await this.readBytes(stored, found.start, found.end, maxBytes);
    return read;
  }
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

function countFeeds(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) count++;
  return count;
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return text.endsWith('\n') ? count : count + 1;
}

function contentTextLength(content: readonly ToolContent[] | undefined): number {
  let length = 0;
  for (const block of content ?? []) {
    if (typeof block?.text === 'string') length += block.text.length;
    const resource = block?.resource as { text?: unknown } | undefined;
    if (typeof resource?.text === 'string') length += resource.text.length;
  }
  return length;
}

/** The text of content blocks (text blocks, and embedded resources' text), one after another. */
function contentText(content: readonly ToolContent[] | undefined): string | undefined {
  const texts: string[] = [];
  for (const block of content ?? []) {
    if (block?.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    const resource = block?.resource as { text?: unknown } | undefined;
    if (block?.type === 'resource' && typeof resource?.text === 'string') texts.push(resource.text);
  }
  return texts.length === 0 ? undefined : texts.join('\n');
}

function matchText(bytes: Buffer): string {
  const text = bytes.subarray(0, MATCH_CHARACTERS * 4).toString('utf8');
  if (text.length <= MATCH_CHARACTERS) return text.replace(/\r$/, '');
  return `${text.slice(0, notInPair(text, MATCH_CHARACTERS - 1))}…`;
}

/** One turn of the event loop, so that a long store or scan never holds it. */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
