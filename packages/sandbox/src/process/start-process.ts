import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { startManaged, type ManagedProcess, type Stopper } from './managed-process';
import { TailCapture, type CapturedOutput } from './output-capture';
import { checkByteCount, checkProcessOptions } from './process-options';
import { ProcessOptionsError } from './process-options-error';
import type { ProcessExit, RunningProcess, RunningProcessCloseOptions, StartProcessOptions } from './process-types';

/** Default of `maxStderrBytes` for a long-lived process: the end of its stderr. */
const DEFAULT_STDERR_TAIL_BYTES = 64 * 1024;

/**
 * Starts a long-lived program (an MCP stdio server) whose stdin and stdout
 * the caller speaks through, and resolves once it runs.
 *
 * The same rules as `runProcess` — no shell, a built environment, its own
 * process group, SIGTERM then SIGKILL to the group when `signal` aborts,
 * SIGKILL to what is left of the group once it exits — with stderr read all
 * the time (so the program never blocks on it), its end kept, and each piece
 * passed to `onStderr`. `close()` ends it the polite way (stdin closed, then
 * signals); `terminate()` at once. Stdout is the caller's to read: a program
 * whose stdout nobody reads blocks when the pipe is full.
 *
 * @throws {ProcessOptionsError} `PROCESS_INVALID_OPTIONS` (nothing started).
 * @throws {ProcessStartError} `PROCESS_START_FAILED`, the OS error as `cause`.
 * @throws {ProcessLaunchError} `PROCESS_LAUNCH_FAILED`, when the launcher's `prepare` threw.
 * @throws The abort reason of `signal`, when it aborted before the program started.
 */
export async function startProcess(options: StartProcessOptions): Promise<RunningProcess> {
  const calledAt = performance.now();
  const { checked, fail } = checkProcessOptions(options);
  const { onStderr, onError } = options;
  if (onStderr !== undefined && typeof onStderr !== 'function') fail('onStderr', 'a function', onStderr);
  if (onError !== undefined && typeof onError !== 'function') fail('onError', 'a function', onError);
  const stderr = new TailCapture(checkByteCount(options.maxStderrBytes, 'maxStderrBytes', DEFAULT_STDERR_TAIL_BYTES, fail));
  const report = (error: Error): void => {
    try {
      onError?.(error);
    } catch {
      // A listener that throws must not crash the runtime from inside a stream event.
    }
  };
  const decoder = new StringDecoder('utf8');
  const stoppers: Stopper[] = checked.signal === undefined ? [] : [{ signal: checked.signal, reason: 'cancel' }];
  const outcome = await startManaged({
    options: checked,
    stdio: ['pipe', 'pipe', 'pipe'],
    stoppers,
    calledAt,
    onError: report,
    attach: (child: ChildProcess) => {
      child.stdin?.on('error', report);
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr.add(chunk);
        if (onStderr === undefined) return;
        const text = decoder.write(chunk);
        try {
          if (text.length > 0) onStderr(text);
        } catch (error) {
          report(error instanceof Error ? error : new Error(String(error)));
        }
      });
    },
  });
  if (!outcome.started) throw (checked.signal as AbortSignal).reason;
  return new RunningProgram(outcome.process, stderr, report);
}

class RunningProgram implements RunningProcess {
  readonly pid: number;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly exited: Promise<ProcessExit>;
  #exit: ProcessExit | undefined;

  constructor(
    private readonly managed: ManagedProcess,
    private readonly stderrTail: TailCapture,
    report: (error: Error) => void,
  ) {
    this.pid = managed.pid;
    const child = managed.child;
    this.stdin = child.stdin as Writable;
    this.stdout = child.stdout as Readable;
    this.exited = managed.settled.then((exit) => {
      this.#exit = exit;
      if (managed.releaseError !== undefined) report(managed.releaseError);
      return exit;
    });
  }

  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  stderr(): CapturedOutput {
    return this.stderrTail.result();
  }

  terminate(): Promise<void> {
    return this.managed.terminate();
  }

  close(options: RunningProcessCloseOptions = {}): Promise<void> {
    const { exitWaitMs } = options;
    if (exitWaitMs !== undefined && !(typeof exitWaitMs === 'number' && exitWaitMs >= 0 && exitWaitMs <= 2_147_483_647)) {
      return Promise.reject(new ProcessOptionsError({ option: 'exitWaitMs', expected: 'a number of milliseconds from 0 to 2147483647', received: exitWaitMs }));
    }
    return this.managed.close(exitWaitMs);
  }
}
