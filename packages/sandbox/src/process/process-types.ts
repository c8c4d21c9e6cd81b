import type { ChildProcess, SpawnOptions } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { CapturedOutput } from './output-capture';
import type { ProcessExit } from './process-exit';
import type { ProcessLauncher } from './process-launcher';

export type { ProcessDurations, ProcessExit } from './process-exit';

/**
 * Starts a process, with the signature of `child_process.spawn` restricted to
 * what the runner uses. An injected one (to count or wrap spawns) must honour
 * `detached`, `stdio`, `cwd` and `env`.
 */
export type ProcessSpawn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

/** Options of both {@link runProcess} and {@link startProcess}. */
export interface ProcessOptions {
  /** The program: a name looked up on the `PATH` of its environment, or a path. Run without a shell. */
  readonly command: string;
  /** Its arguments, passed as they are (nothing is expanded or split). */
  readonly args?: readonly string[];
  /** Its working folder (default: the runtime's own). */
  readonly cwd?: string;
  /** Variables set on top of the inherited ones; `undefined` removes one. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Names taken from the runtime's environment (default `MINIMAL_ENVIRONMENT_VARIABLES`). */
  readonly inheritEnv?: readonly string[];
  /** Cancels the run: the process group gets SIGTERM, then SIGKILL after `killGraceMs`. */
  readonly signal?: AbortSignal;
  /** Milliseconds between SIGTERM and SIGKILL when the run is stopped (default 2,000). */
  readonly killGraceMs?: number;
  /**
   * Milliseconds to wait, once the program has exited and its group was
   * killed, for its output pipes to close (default 1,000). Only a process
   * that left the group can still hold them; after this the runner stops reading.
   */
  readonly outputDrainMs?: number;
  /** Starts the process (default `child_process.spawn`). */
  readonly spawn?: ProcessSpawn;
  /** Rewrites the launch before it is spawned: the seam of a sandbox. */
  readonly launcher?: ProcessLauncher;
  /** Named in error messages. */
  readonly toolName?: string;
  /** Named in error messages. */
  readonly planId?: string;
}

/** Options of {@link runProcess}. */
export interface RunProcessOptions extends ProcessOptions {
  /** Written to the standard input, which is then closed. Absent: no standard input (as `/dev/null`). */
  readonly stdin?: string | Uint8Array;
  /** Deadline in milliseconds from the call; then the run is stopped as on cancellation and `timedOut` is set. */
  readonly timeoutMs?: number;
  /** Most bytes of stdout kept (default 1 MiB); the rest is read, counted and dropped. */
  readonly maxStdoutBytes?: number;
  /** Most bytes of stderr kept (default 1 MiB); the rest is read, counted and dropped. */
  readonly maxStderrBytes?: number;
}

/** Options of {@link startProcess}. */
export interface StartProcessOptions extends ProcessOptions {
  /** Most bytes of the **end** of stderr kept (default 64 KiB). */
  readonly maxStderrBytes?: number;
  /** Called with each piece of stderr, decoded as UTF-8 (characters are never split). */
  readonly onStderr?: (text: string) => void;
  /** Called with an error of the running process or its stdin (a broken pipe); the process is not stopped by it. */
  readonly onError?: (error: Error) => void;
}

/** What {@link runProcess} returns. */
export interface ProcessResult extends ProcessExit {
  /** The first `maxStdoutBytes` of stdout. */
  readonly stdout: CapturedOutput;
  /** The first `maxStderrBytes` of stderr. */
  readonly stderr: CapturedOutput;
}

/** A long-lived program started by {@link startProcess}. */
export interface RunningProcess {
  /** Its pid, also its process group id. */
  readonly pid: number;
  /** Its standard input. Errors on it (a broken pipe) go to `onError`. */
  readonly stdin: Writable;
  /** Its standard output, for the caller to read. */
  readonly stdout: Readable;
  /** The end of its stderr so far (at most `maxStderrBytes`). */
  stderr(): CapturedOutput;
  /** How it ended; `undefined` until {@link RunningProcess.exited} resolves. */
  readonly exit: ProcessExit | undefined;
  /** Resolves once it has exited, its group was killed and its pipes are closed (or `outputDrainMs` passed). Never rejects. */
  readonly exited: Promise<ProcessExit>;
  /**
   * Stops it: SIGTERM to its group, then SIGKILL after `killGraceMs`.
   * Resolves when it has ended (bounded: at most about twice `killGraceMs`
   * after the SIGKILL for a process the kernel cannot end at once). Idempotent.
   */
  terminate(): Promise<void>;
  /**
   * Ends it the polite way, as the MCP stdio transport specifies: closes
   * stdin and waits up to `exitWaitMs` (default `killGraceMs`) for it to
   * exit, then {@link RunningProcess.terminate}. Idempotent: a second call
   * returns the first one's promise, whatever its options.
   */
  close(options?: RunningProcessCloseOptions): Promise<void>;
}

/** Options of {@link RunningProcess.close}. */
export interface RunningProcessCloseOptions {
  /** How long to wait for the program to exit on its own after its stdin is closed (default `killGraceMs`; 0: SIGTERM at once). */
  readonly exitWaitMs?: number;
}
