import { ToolInvalidArgumentError } from '../errors';
import type { CallLimits, LimitWaitPolicy } from './call-limiter';
import { compileToolPattern, type PatternMatcher } from '../approval';

/**
 * Retries of a tool's failed calls. Only failures the tool marks retryable
 * are retried: a thrown error, or the `error` of a failed result, whose
 * `retryable` is `true` (an HTTP 503, a connection reset), never a
 * cancellation. Every attempt has the same idempotency key. The wait before
 * retry n is `backoffMs × multiplier^(n-1)`, at most `maxBackoffMs`, with a
 * random part (between half and all of it) so that concurrent calls spread
 * out; a `retryAfterMs` on the error (an HTTP `Retry-After`) makes it at
 * least that long, up to `maxBackoffMs`.
 */
export interface ToolRetrySettings {
  /** Most calls in all, the first one included: 2 to 10. */
  readonly attempts: number;
  /** Wait before the first retry, in ms. Default 200. */
  readonly backoffMs?: number;
  /** Growth of the wait from one retry to the next, 1 to 10. Default 2. */
  readonly multiplier?: number;
  /** Longest wait before a retry, in ms. Default 10,000. */
  readonly maxBackoffMs?: number;
}

/** Limits of one tool in one scope: the most calls at once, and the most calls per interval. */
export interface ToolLimitSettings {
  /** The most calls of the tool running at once (1 or more). */
  readonly maxConcurrent?: number;
  /** The most calls of the tool started per `perMs` milliseconds (a token bucket holding `calls`). */
  readonly rate?: { readonly calls: number; readonly perMs: number };
}

/**
 * Settings of the calls of the tools whose names match `tools`: retries and
 * limits. Every entry that matches a tool applies its limits (a call takes a
 * turn of each); the first matching entry with `retry` gives the retries.
 * Limits count per tool: two tools matching one entry have a limit each.
 */
export interface ToolCallSettings {
  /** Tool-name globs (`*` any run of characters, `?` one), one or a list. */
  readonly tools: string | readonly string[];
  readonly retry?: ToolRetrySettings;
  /** Limits within each plan. */
  readonly perPlan?: ToolLimitSettings;
  /** Limits across every plan of the runtime. */
  readonly perRuntime?: ToolLimitSettings;
  /** A call over a limit waits for its turn (`wait`, the default; cancellable) or fails at once (`fail`, `ToolLimitExceededError`). */
  readonly onLimit?: 'wait' | 'fail';
  /** With `wait`: give up after this many ms (`ToolLimitExceededError`). Default: wait as long as the plan runs. */
  readonly maxWaitMs?: number;
}

/** A tool's retry settings with the defaults filled in. */
export interface RetryPlan {
  readonly attempts: number;
  readonly backoffMs: number;
  readonly multiplier: number;
  readonly maxBackoffMs: number;
}

/** One limit that applies to a tool: which entry, whose counters, the limits, and how to wait. */
export interface LimitPlan {
  /** `<entry index>\0<tool name>`: the counters' key in their scope. */
  readonly key: string;
  readonly scope: 'plan' | 'runtime';
  readonly limits: CallLimits;
  readonly policy: LimitWaitPolicy;
}

/** What applies to the calls of one tool. */
export interface ToolCallPlan {
  readonly retry: RetryPlan | undefined;
  readonly limits: readonly LimitPlan[];
}

interface CompiledEntry {
  readonly index: number;
  readonly matchers: readonly PatternMatcher[];
  readonly retry: RetryPlan | undefined;
  readonly perPlan: CallLimits | undefined;
  readonly perRuntime: CallLimits | undefined;
  readonly policy: LimitWaitPolicy;
}

const ENTRY_FIELDS = new Set(['tools', 'retry', 'perPlan', 'perRuntime', 'onLimit', 'maxWaitMs']);
const MAX_TIMER_MS = 2_147_483_647;

/** The `calls` settings of a runtime, checked, with each tool's plan kept once computed. */
export class CallSettings {
  private readonly entries: readonly CompiledEntry[];
  private readonly byTool = new Map<string, ToolCallPlan | null>();

  /** @throws ToolInvalidArgumentError naming the offending setting (`calls[1].retry.attempts`). */
  constructor(settings: unknown) {
    if (!Array.isArray(settings)) {
      throw new ToolInvalidArgumentError({
        argument: 'calls',
        expected: 'a list of { tools, retry?, perPlan?, perRuntime?, onLimit?, maxWaitMs? }',
        received: settings,
      });
    }
    this.entries = settings.map((entry, index) => compileEntry(entry, index));
  }

  /** True when there is nothing to apply to any tool. */
  get empty(): boolean {
    return this.entries.length === 0;
  }

  /** What applies to calls of this tool, or `undefined` when nothing does. */
  forTool(toolName: string): ToolCallPlan | undefined {
    let plan = this.byTool.get(toolName);
    if (plan === undefined) {
      plan = this.resolve(toolName);
      if (this.byTool.size >= 10_000) this.byTool.clear();
      this.byTool.set(toolName, plan);
    }
    return plan ?? undefined;
  }

  private resolve(toolName: string): ToolCallPlan | null {
    let retry: RetryPlan | undefined;
    const limits: LimitPlan[] = [];
    for (const entry of this.entries) {
      if (!entry.matchers.some((matches) => matches(toolName))) continue;
      retry ??= entry.retry;
      const key = `${entry.index}\0${toolName}`;
      if (entry.perPlan !== undefined) limits.push({ key, scope: 'plan', limits: entry.perPlan, policy: entry.policy });
      if (entry.perRuntime !== undefined) limits.push({ key, scope: 'runtime', limits: entry.perRuntime, policy: entry.policy });
    }
    return retry === undefined && limits.length === 0 ? null : { retry, limits };
  }
}

function compileEntry(entry: unknown, index: number): CompiledEntry {
  const at = `calls[${index}]`;
  const fail = (field: string, expected: string, received: unknown): never => {
    throw new ToolInvalidArgumentError({ argument: `${at}${field}`, expected, received });
  };
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    return fail('', 'an object { tools, retry?, perPlan?, perRuntime?, onLimit?, maxWaitMs? }', entry);
  }
  const record = entry as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!ENTRY_FIELDS.has(key))
      fail(`.${key}`, 'absent: the fields are tools, retry, perPlan, perRuntime, onLimit and maxWaitMs (check the spelling)', record[key]);
  }
  const toolsValue = record['tools'];
  const tools = typeof toolsValue === 'string' ? [toolsValue] : toolsValue;
  if (!Array.isArray(tools) || tools.length === 0 || tools.some((pattern) => typeof pattern !== 'string' || pattern.length === 0 || pattern.length > 200)) {
    fail('.tools', "a tool-name glob or a non-empty list of them, e.g. 'builtin.http.*'", toolsValue);
  }
  const onLimit = record['onLimit'] ?? 'wait';
  if (onLimit !== 'wait' && onLimit !== 'fail') fail('.onLimit', "'wait' or 'fail'", onLimit);
  const maxWaitMs = record['maxWaitMs'];
  if (maxWaitMs !== undefined && !isCount(maxWaitMs, 1, MAX_TIMER_MS)) fail('.maxWaitMs', 'a whole number of milliseconds, 1 to 2147483647', maxWaitMs);
  return {
    index,
    matchers: (tools as string[]).map((pattern) => compileToolPattern(pattern)),
    retry: record['retry'] === undefined ? undefined : compileRetry(record['retry'], `${at}.retry`),
    perPlan: record['perPlan'] === undefined ? undefined : compileLimits(record['perPlan'], `${at}.perPlan`),
    perRuntime: record['perRuntime'] === undefined ? undefined : compileLimits(record['perRuntime'], `${at}.perRuntime`),
    policy: { onLimit: onLimit as 'wait' | 'fail', maxWaitMs: maxWaitMs as number | undefined },
  };
}

function compileRetry(value: unknown, at: string): RetryPlan {
  const fail = (field: string, expected: string, received: unknown): never => {
    throw new ToolInvalidArgumentError({ argument: `${at}${field}`, expected, received });
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fail('', 'an object { attempts, backoffMs?, multiplier?, maxBackoffMs? }', value);
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!['attempts', 'backoffMs', 'multiplier', 'maxBackoffMs'].includes(key))
      fail(`.${key}`, 'absent: the fields are attempts, backoffMs, multiplier and maxBackoffMs', record[key]);
  }
  const { attempts, backoffMs = 200, multiplier = 2, maxBackoffMs = 10_000 } = record;
  if (!isCount(attempts, 2, 10)) fail('.attempts', 'a whole number of calls in all, 2 to 10', attempts);
  if (!isCount(backoffMs, 0, MAX_TIMER_MS)) fail('.backoffMs', 'a whole number of milliseconds ≥ 0', backoffMs);
  if (typeof multiplier !== 'number' || !(multiplier >= 1 && multiplier <= 10)) fail('.multiplier', 'a number from 1 to 10', multiplier);
  if (!isCount(maxBackoffMs, 0, MAX_TIMER_MS)) fail('.maxBackoffMs', 'a whole number of milliseconds ≥ 0', maxBackoffMs);
  return Object.freeze({
    attempts: attempts as number,
    backoffMs: backoffMs as number,
    multiplier: multiplier as number,
    maxBackoffMs: maxBackoffMs as number,
  });
}

function compileLimits(value: unknown, at: string): CallLimits {
  const fail = (field: string, expected: string, received: unknown): never => {
    throw new ToolInvalidArgumentError({ argument: `${at}${field}`, expected, received });
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('', 'an object { maxConcurrent?, rate?: { calls, perMs } }', value);
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key !== 'maxConcurrent' && key !== 'rate') fail(`.${key}`, 'absent: the fields are maxConcurrent and rate', record[key]);
  }
  const { maxConcurrent, rate } = record;
  if (maxConcurrent !== undefined && !isCount(maxConcurrent, 1, Number.MAX_SAFE_INTEGER)) fail('.maxConcurrent', 'a whole number ≥ 1', maxConcurrent);
  let compiledRate: CallLimits['rate'];
  if (rate !== undefined) {
    const { calls, perMs, ...rest } = (typeof rate === 'object' && rate !== null ? rate : {}) as Record<string, unknown>;
    if (typeof rate !== 'object' || rate === null || Object.keys(rest).length > 0) fail('.rate', 'an object { calls, perMs }', rate);
    if (!isCount(calls, 1, 1_000_000)) fail('.rate.calls', 'a whole number of calls ≥ 1', calls);
    if (!isCount(perMs, 1, MAX_TIMER_MS)) fail('.rate.perMs', 'a whole number of milliseconds ≥ 1', perMs);
    compiledRate = Object.freeze({ calls: calls as number, perMs: perMs as number });
  }
  if (maxConcurrent === undefined && compiledRate === undefined) fail('', 'at least one of maxConcurrent and rate', value);
  return Object.freeze({
    ...(maxConcurrent === undefined ? {} : { maxConcurrent: maxConcurrent as number }),
    ...(compiledRate === undefined ? {} : { rate: compiledRate }),
  });
}

function isCount(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;
}
