/**
 * Time as the runtime sees it, injectable under `RUNTIME_CLOCK` so tests and
 * replays can control it.
 */
export interface RuntimeClock {
  /** Wall-clock milliseconds since the epoch, for ISO-8601 timestamps. */
  now(): number;
  /** Monotonic milliseconds with sub-millisecond precision, for durations. */
  monotonic(): number;
}

/** The real clock: `Date.now()` and `performance.now()`. */
export const systemClock: RuntimeClock = Object.freeze({
  now: () => Date.now(),
  monotonic: () => performance.now(),
});
