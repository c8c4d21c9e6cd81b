import type { ChildProcess, StdioOptions } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import type { LaunchPipe, PreparedLaunch } from './process-launcher';
import { ProcessLaunchError } from './process-launch-error';
import { PROCESS_GROUPS_SUPPORTED, signalProcessGroup } from './process-group';
import type { CheckedProcessOptions } from './process-options';
import { ProcessStartError } from './process-start-error';
import type { ProcessExit } from './process-types';

/** Why the runner stopped a process. */
export type StopReason = 'timeout' | 'cancel' | 'close';

/** @internal A signal that stops the process, and what its abort means. */
export interface Stopper {
  readonly signal: AbortSignal;
  readonly reason: StopReason;
}

/** @internal What starting a managed process needs. */
export interface ManagedStart {
  readonly options: CheckedProcessOptions;
  readonly stdio: StdioOptions;
  readonly stoppers: readonly Stopper[];
  /** `performance.now()` when the caller was called. */
  readonly calledAt: number;
  /** Attaches the caller's readers to the streams, synchronously after spawn, before any output can arrive. */
  attach(child: ChildProcess): void;
  /** Errors of the running process (its `error` event after the start). */
  readonly onError?: (error: Error) => void;
}

/** @internal Either the running process, or how a run ended that never started (stopped first). */
export type ManagedOutcome = { readonly started: true; readonly process: ManagedProcess } | { readonly started: false; readonly exit: ProcessExit };

/** What the kernel said when the process exited. */
interface ExitEvent {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly at: number;
}

/** @internal Watches a child from the moment it is spawned, so no event is missed while the start is awaited. */
export class ChildWatch {
  event: ExitEvent | undefined;
  readonly exited: Promise<ExitEvent>;
  readonly closed: Promise<void>;

  constructor(child: ChildProcess) {
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.event = { code, signal, at: performance.now() };
        resolve(this.event);
      }),
    );
    this.closed = new Promise((resolve) => child.once('close', () => resolve()));
  }
}

/**
 * @internal Listens to the stoppers from the call on (so an abort during the
 * launcher's prepare or the start is not missed), remembers the first
 * reason, and stops the process once there is one.
 */
export class StopLatch {
  reason: StopReason | undefined;
  #target: ManagedProcess | undefined;
  readonly #unsubscribe: (() => void)[] = [];

  constructor(stoppers: readonly Stopper[]) {
    for (const { signal, reason } of stoppers) {
      if (signal.aborted) {
        this.reason ??= reason;
        continue;
      }
      const listener = (): void => {
        this.reason ??= reason;
        this.#target?.stop(reason);
      };
      signal.addEventListener('abort', listener, { once: true });
      this.#unsubscribe.push(() => signal.removeEventListener('abort', listener));
    }
  }

  /** Stops `target` on the next abort, or now if one came already. */
  attach(target: ManagedProcess): void {
    this.#target = target;
    if (this.reason !== undefined) target.stop(this.reason);
  }

  /** Removes every listener. Idempotent. */
  dispose(): void {
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    this.#target = undefined;
  }
}

/**
 * @internal Starts a process the runner's way: the environment built, the
 * launcher's rewrite, its own process group, no shell. Resolves once it runs,
 * or with the exit of a run stopped before it started.
 *
 * @throws {ProcessLaunchError} When the launcher's `prepare` throws.
 * @throws {ProcessStartError} When the operating system refuses to start it.
 */
export async function startManaged(start: ManagedStart): Promise<ManagedOutcome> {
  const latch = new StopLatch(start.stoppers);
  try {
    const outcome = await startWithLatch(start, latch);
    if (!outcome.started) latch.dispose();
    return outcome;
  } catch (error) {
    latch.dispose();
    throw error;
  }
}

async function startWithLatch(start: ManagedStart, latch: StopLatch): Promise<ManagedOutcome> {
  const { options, stoppers, calledAt } = start;
  const stoppedBy = (): StopReason | undefined => latch.reason;
  const details = {
    ...(options.toolName === undefined ? {} : { toolName: options.toolName }),
    ...(options.planId === undefined ? {} : { planId: options.planId }),
  };
  const neverRan = (reason: StopReason | undefined): ProcessExit => {
    const elapsed = performance.now() - calledAt;
    return Object.freeze({
      pid: undefined,
      exitCode: null,
      signal: null,
      timedOut: reason === 'timeout',
      cancelled: reason === 'cancel',
      durations: Object.freeze({ startMs: elapsed, runMs: 0, totalMs: elapsed }),
    });
  };
  const releaseUnstarted = async (launch: PreparedLaunch, reason: StopReason | undefined): Promise<void> => {
    try {
      await launch.release?.(neverRan(reason));
    } catch {
      // The failure to start (or the stop) is what the caller must hear about.
    }
  };

  const before = stoppedBy();
  if (before !== undefined) return { started: false, exit: neverRan(before) };

  let launch: PreparedLaunch = { command: options.command, args: options.args, cwd: options.cwd, env: options.env };
  const launcher = options.launcher;
  if (launcher !== undefined) {
    try {
      launch = await launcher.prepare(launch, combinedSignal(stoppers));
      if (typeof launch?.command !== 'string' || !Array.isArray(launch.args) || typeof launch.env !== 'object' || launch.env === null) {
        throw new TypeError('prepare() must return { command, args, cwd, env }');
      }
      if (launch.pipes !== undefined && (!Array.isArray(launch.pipes) || !launch.pipes.every(isLaunchPipe))) {
        throw new TypeError('prepare() must return pipes as a list of { input: Uint8Array } or { onOutput(chunk) }');
      }
    } catch (cause) {
      // A launcher that looked for the program (a sandbox starts another one first) reports a missing one as the runner would.
      if (ProcessStartError.isInstance(cause)) {
        throw new ProcessStartError({ command: options.command, ...(options.cwd === undefined ? {} : { cwd: options.cwd }), cause: cause.cause, ...details });
      }
      throw new ProcessLaunchError({ launcher: launcher.name, stage: 'prepare', command: options.command, cause, ...details });
    }
    const during = stoppedBy();
    if (during !== undefined) {
      await releaseUnstarted(launch, during);
      return { started: false, exit: neverRan(during) };
    }
  }

  const pipes = launch.pipes ?? [];
  const stdio: StdioOptions = pipes.length === 0 ? start.stdio : [...(start.stdio as readonly StdioNull[]), ...pipes.map(() => 'pipe' as const)];
  let child: ChildProcess;
  try {
    child = options.spawn(launch.command, [...launch.args], {
      ...(launch.cwd === undefined ? {} : { cwd: launch.cwd }),
      env: { ...launch.env },
      // Its own process group, so that stopping it reaches everything it started that stayed in the group.
      detached: PROCESS_GROUPS_SUPPORTED,
      shell: false,
      windowsHide: true,
      stdio,
    });
  } catch (cause) {
    await releaseUnstarted(launch, undefined);
    throw new ProcessStartError({ command: options.command, ...(options.cwd === undefined ? {} : { cwd: options.cwd }), cause, ...details });
  }
  const watch = new ChildWatch(child);
  start.attach(child);
  attachPipes(child, pipes);
  try {
    await new Promise<void>((resolve, reject) => {
      const onSpawn = (): void => {
        child.off('error', onError);
        resolve();
      };
      const onError = (error: Error): void => {
        child.off('spawn', onSpawn);
        reject(error);
      };
      child.once('spawn', onSpawn);
      child.once('error', onError);
    });
  } catch (cause) {
    for (const stream of child.stdio) stream?.destroy();
    await releaseUnstarted(launch, undefined);
    throw new ProcessStartError({ command: options.command, ...(options.cwd === undefined ? {} : { cwd: options.cwd }), cause, ...details });
  }
  return { started: true, process: new ManagedProcess(child, watch, start, launch, latch, performance.now()) };
}

/**
 * @internal A running process in its own group: stops it on a stopper's
 * abort (SIGTERM, then SIGKILL after the grace), and once it has exited,
 * kills what it left in its group, waits (bounded) for its pipes, and
 * releases the launch.
 */
export class ManagedProcess {
  readonly pid: number;
  /** Resolves once everything after the exit is done. Never rejects. */
  readonly settled: Promise<ProcessExit>;
  /** Set when the launcher's `release` threw. */
  releaseError: ProcessLaunchError | undefined;

  readonly #child: ChildProcess;
  readonly #watch: ChildWatch;
  readonly #options: CheckedProcessOptions;
  readonly #latch: StopLatch;
  #reason: StopReason | undefined;
  #killTimer: ReturnType<typeof setTimeout> | undefined;
  #terminating: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  constructor(child: ChildProcess, watch: ChildWatch, start: ManagedStart, launch: PreparedLaunch, latch: StopLatch, runningAt: number) {
    this.#child = child;
    this.#watch = watch;
    this.#options = start.options;
    this.pid = child.pid as number;
    const onError = start.onError;
    // After the start, an 'error' comes from a failed kill or a broken pipe; unhandled it would crash the runtime.
    child.on('error', (error) => onError?.(error));
    this.#latch = latch;
    latch.attach(this);
    this.settled = watch.exited.then((event) => this.#afterExit(event, launch, start.calledAt, runningAt));
  }

  /** The child process, for its streams. */
  get child(): ChildProcess {
    return this.#child;
  }

  /** True once the process has exited. */
  get hasExited(): boolean {
    return this.#watch.event !== undefined;
  }

  /** SIGTERM to the group now, SIGKILL after the grace. The first reason stays. */
  stop(reason: StopReason): void {
    if (this.#watch.event !== undefined) return;
    this.#reason ??= reason;
    signalProcessGroup(this.#child, 'SIGTERM');
    this.#killTimer ??= setTimeout(() => signalProcessGroup(this.#child, 'SIGKILL'), this.#options.killGraceMs);
  }

  terminate(): Promise<void> {
    this.#terminating ??= (async () => {
      const grace = this.#options.killGraceMs;
      if (this.#watch.event === undefined) {
        this.stop('close');
        await raceWithDelay(this.#watch.exited, grace + grace);
      }
      if (this.#watch.event === undefined) {
        // Still there after the SIGKILL (a process in uninterruptible sleep): once more, then give up waiting.
        signalProcessGroup(this.#child, 'SIGKILL');
        await raceWithDelay(this.#watch.exited, grace);
      }
      if (this.#watch.event !== undefined) await raceWithDelay(this.settled, this.#options.outputDrainMs + grace);
    })();
    return this.#terminating;
  }

  close(exitWaitMs: number = this.#options.killGraceMs): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#watch.event === undefined) {
        try {
          this.#child.stdin?.end();
        } catch {
          // A broken pipe: the signals of terminate() end the process anyway.
        }
        if (exitWaitMs > 0) await raceWithDelay(this.#watch.exited, exitWaitMs);
      }
      await this.terminate();
    })();
    return this.#closing;
  }

  async #afterExit(event: ExitEvent, launch: PreparedLaunch, calledAt: number, runningAt: number): Promise<ProcessExit> {
    if (this.#killTimer !== undefined) clearTimeout(this.#killTimer);
    this.#latch.dispose();
    // Whatever the program left running in its group goes with it, also after a clean exit.
    signalProcessGroup(this.#child, 'SIGKILL');
    // Only a process that left the group can still hold the pipes; do not wait for it for long.
    await raceWithDelay(this.#watch.closed, this.#options.outputDrainMs);
    for (const stream of this.#child.stdio) {
      if (stream !== null && stream !== undefined && !stream.destroyed) stream.destroy();
    }
    const exit: ProcessExit = Object.freeze({
      pid: this.pid,
      exitCode: event.code,
      signal: event.signal,
      timedOut: this.#reason === 'timeout',
      cancelled: this.#reason === 'cancel',
      durations: Object.freeze({ startMs: runningAt - calledAt, runMs: event.at - runningAt, totalMs: performance.now() - calledAt }),
    });
    if (launch.release !== undefined) {
      try {
        await launch.release(exit);
      } catch (cause) {
        const options = this.#options;
        this.releaseError = new ProcessLaunchError({
          launcher: options.launcher?.name ?? 'launcher',
          stage: 'release',
          command: options.command,
          cause,
          ...(options.toolName === undefined ? {} : { toolName: options.toolName }),
          ...(options.planId === undefined ? {} : { planId: options.planId }),
        });
      }
    }
    return Object.freeze({ ...exit, durations: Object.freeze({ ...exit.durations, totalMs: performance.now() - calledAt }) });
  }
}

type StdioNull = 'pipe' | 'ignore' | 'inherit';

function isLaunchPipe(pipe: unknown): pipe is LaunchPipe {
  if (typeof pipe !== 'object' || pipe === null) return false;
  const { input, onOutput } = pipe as { readonly input?: unknown; readonly onOutput?: unknown };
  return input instanceof Uint8Array !== (typeof onOutput === 'function');
}

/** Writes the input pipes and closes them; reads the output pipes. Synchronously after spawn, before output can arrive. */
function attachPipes(child: ChildProcess, pipes: readonly LaunchPipe[]): void {
  pipes.forEach((pipe, index) => {
    const stream = child.stdio[3 + index] as Duplex | null | undefined;
    if (stream === null || stream === undefined) return;
    // A program that exits without reading (or closes the descriptor early) breaks the pipe: that is its business.
    stream.on('error', () => undefined);
    if ('input' in pipe) stream.end(pipe.input);
    else
      stream.on('data', (chunk: Buffer) => {
        try {
          pipe.onOutput(chunk);
        } catch {
          // A reader that throws must not crash the runtime from inside a stream event.
        }
      });
  });
}

/** One signal that aborts when any stopper's does (a signal that never aborts when there is none). */
function combinedSignal(stoppers: readonly Stopper[]): AbortSignal {
  if (stoppers.length === 1) return (stoppers[0] as Stopper).signal;
  if (stoppers.length === 0) return new AbortController().signal;
  return AbortSignal.any(stoppers.map((stopper) => stopper.signal));
}

/** Waits for `promise` or `ms`, whichever comes first, leaving no timer behind. */
export async function raceWithDelay(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
