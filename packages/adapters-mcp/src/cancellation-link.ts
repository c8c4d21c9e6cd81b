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
