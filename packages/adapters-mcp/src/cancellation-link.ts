import { getEventListeners } from 'node:events';
import { ToolCancelledError, type CancellationToken } from '@ca/tool-context';

/** A per-call `AbortSignal` that follows a token until released. */
export interface CancellationLink {
  readonly signal: AbortSignal;
  /** Stops following the token and frees the signal. Call it once the work settled. Idempotent. */
  release(): void;
  /** Aborts the signal now, with `reason` (before `release`). */
  abort(reason?: unknown): void;
}

const pool: AbortController[] = [];
const POOL_LIMIT = 64;

/**
 * An `AbortSignal`, for one call, that aborts when `token` is cancelled, with
 * a `ToolCancelledError` as reason.
 *
 * Why not pass `token.signal` itself: the MCP SDK adds an `abort` listener
 * to the signal of every request and never removes it, so a plan's signal
 * used for 1,000 calls would collect 1,000 listeners. The link registers one
 * `onCancel` callback on the token instead and removes it on `release()`.
 *
 * Signals are pooled: creating an `AbortSignal` costs Node 20 several
 * microseconds, a noticeable share of a local MCP call. On `release()` a
 * signal that was not aborted loses every listener (the SDK's, whose request
 * has settled) and goes back to the pool.
 *
 * @internal
 */
export function linkToken(token: CancellationToken, details: { readonly toolName?: string; readonly planId?: string } = {}): CancellationLink {
  const controller = pool.pop() ?? new AbortController();
  const signal = controller.signal;
  const unsubscribe = token.onCancel((reason) => {
    controller.abort(new ToolCancelledError({ reason, ...details }));
  });
  let released = false;
  return {
    signal,
    abort: (reason) => controller.abort(reason),
    release: () => {
      if (released) return;
      released = true;
      unsubscribe();
      if (signal.aborted) return;
      for (const listener of getEventListeners(signal, 'abort')) signal.removeEventListener('abort', listener as (event: Event) => void);
      if (pool.length < POOL_LIMIT) pool.push(controller);
    },
  };
}

type AbortListener = (this: AbortSignal, event: Event) => void;

/**
 * The part of `AbortSignal` that the MCP SDK's `Protocol.request` reads
 * (`aborted`, `reason`, `throwIfAborted`, `addEventListener('abort')`), for
 * one `tools/call`.
 *
 * Why not a real `AbortSignal`: on Node 20 an `EventTarget` listener costs
 * microseconds to add and, since the SDK never removes its listener, more to
 * strip before a pooled signal can be reused — a measurable share of a local
 * MCP call. This object holds its listeners in an array and is dropped with
 * the call. It is only given to `Client.callTool`; anything that needs a real
 * signal (connecting, fetch) gets one from {@link linkToken}. The cancellation
 * tests of this package run it against the real SDK and real servers.
 */
class CallSignal {
  aborted = false;
  reason: unknown = undefined;
  onabort: AbortListener | null = null;
  #listeners: AbortListener[] | undefined;

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  addEventListener(type: string, listener: AbortListener | { handleEvent(event: Event): void } | null): void {
    if (type !== 'abort' || listener === null || listener === undefined) return;
    const callable: AbortListener = typeof listener === 'function' ? listener : (event) => listener.handleEvent(event);
    (this.#listeners ??= []).push(callable);
  }

  removeEventListener(type: string, listener: unknown): void {
    if (type !== 'abort' || this.#listeners === undefined) return;
    const index = this.#listeners.indexOf(listener as AbortListener);
    if (index >= 0) this.#listeners.splice(index, 1);
  }

  /**
   * Aborts once: sets `reason`, then calls `onabort` and the listeners. One
   * that throws does not stop the others; the first error is rethrown after
   * all ran (from `CancellationToken.cancel`, which reports it).
   */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.#listeners;
    this.#listeners = undefined;
    const event = { type: 'abort', target: this, currentTarget: this } as unknown as Event;
    const signal = this as unknown as AbortSignal;
    let failed = false;
    let first: unknown;
    for (const listener of this.onabort === null ? (listeners ?? []) : [this.onabort, ...(listeners ?? [])]) {
      try {
        listener.call(signal, event);
      } catch (error) {
        if (!failed) first = error;
        failed = true;
      }
    }
    if (failed) throw first;
  }

  /** Forgets the listeners (those of a settled request): nothing is kept alive by a call that ended. */
  clear(): void {
    this.#listeners = undefined;
    this.onabort = null;
  }
}

/**
 * A {@link CancellationLink} for one `Client.callTool`: a signal that aborts
 * (with a `ToolCancelledError`) when `token` is cancelled. Cheaper than
 * {@link linkToken}; see {@link CallSignal} for what it supports.
 *
 * @internal
 */
export function linkCall(token: CancellationToken, details: { readonly toolName?: string; readonly planId?: string } = {}): CancellationLink {
  const signal = new CallSignal();
  const unsubscribe = token.onCancel((reason) => signal.abort(new ToolCancelledError({ reason, ...details })));
  let released = false;
  return {
    signal: signal as unknown as AbortSignal,
    abort: (reason) => signal.abort(reason),
    release: () => {
      if (released) return;
      released = true;
      unsubscribe();
      signal.clear();
    },
  };
}
