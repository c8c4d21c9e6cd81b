// How a process ended: what the runner reports and a launcher's `release`
// receives, in a file of its own so that neither imports the other for it.

/** Milliseconds spent in each part of a run. */
export interface ProcessDurations {
  /** From the call to the process running (includes building the environment and the launcher's `prepare`). */
  readonly startMs: number;
  /** From the process running to its exit (0 when it never ran). */
  readonly runMs: number;
  /** From the call to the end: the exit, the group's clean-up, the pipes and the launcher's `release`. */
  readonly totalMs: number;
}

/** How a process ended. */
export interface ProcessExit {
  /** Pid of the process (also its process group id); `undefined` when it never ran. */
  readonly pid: number | undefined;
  /** Exit code, or `null` when a signal ended it or it never ran. */
  readonly exitCode: number | null;
  /** The signal that ended it, if any. */
  readonly signal: NodeJS.Signals | null;
  /** True when `timeoutMs` passed before it exited and it was stopped. */
  readonly timedOut: boolean;
  /** True when the caller's `signal` aborted before it exited (also before it started) and it was stopped. */
  readonly cancelled: boolean;
  readonly durations: ProcessDurations;
}
