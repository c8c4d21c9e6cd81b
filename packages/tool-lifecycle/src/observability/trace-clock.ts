import type { RuntimeClock } from './runtime-clock';

/**
 * Timestamps for traces from one monotonic clock read: wall-clock time is the
 * monotonic time plus an offset re-anchored every second (so it follows
 * adjustments of the system clock), and ISO-8601 strings are shared by the
 * executions of one millisecond (formatting is the costly part).
 */
export class TraceClock {
  private wallOffset = 0;
  private anchoredAt = Number.NEGATIVE_INFINITY;
  private isoMillisecond = Number.NaN;
  private isoString = '';

  constructor(private readonly clock: RuntimeClock) {}

  /** Monotonic milliseconds, for durations. */
  monotonic(): number {
    return this.clock.monotonic();
  }

  /** Wall-clock milliseconds since the epoch at the given monotonic time. */
  wallTime(monotonic: number): number {
    if (monotonic - this.anchoredAt > 1_000) {
      this.anchoredAt = monotonic;
      this.wallOffset = this.clock.now() - monotonic;
    }
    return monotonic + this.wallOffset;
  }

  /** ISO-8601 of a wall-clock time, in milliseconds. */
  iso(epochMs: number): string {
    const millisecond = Math.floor(epochMs);
    if (millisecond !== this.isoMillisecond) {
      this.isoMillisecond = millisecond;
      this.isoString = new Date(millisecond).toISOString();
    }
    return this.isoString;
  }
}
