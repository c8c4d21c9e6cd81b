import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { startManaged, type Stopper } from './managed-process';
import { HeadCapture } from './output-capture';
import { checkByteCount, checkDelay, checkProcessOptions } from './process-options';
import type { ProcessResult, RunProcessOptions } from './process-types';

/** Default cap of each of stdout and stderr in {@link runProcess}. */
const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

/**
 * Runs a program to its end and returns how it ended with what it wrote.
 *
 * - No shell: `command` and `args` are passed as they are.
 * - The environment is built, never inherited whole: `inheritEnv` (default
 *   `MINIMAL_ENVIRONMENT_VARIABLES`) from the runtime's, then `env`.
 * - It leads its own process group. On `signal`'s abort or at `timeoutMs` the
 *   group gets SIGTERM, then SIGKILL after `killGraceMs`; once the program has
 *   exited, whatever it left in its group gets SIGKILL. A descendant that
 *   left the group (`setsid`, a daemon) is not reached unless a `launcher`
 *   runs the program in its own PID namespace.
 * - stdout and stderr are read to the end; the first `maxStdoutBytes` /
 *   `maxStderrBytes` are kept, the rest counted.
 * - A cancelled or timed-out run **resolves** (with `cancelled` or
 *   `timedOut`), as does a non-zero exit: the caller decides what they mean.
 *   A run whose signal had aborted before the start resolves at once,
 *   `cancelled`, with no `pid`. Every listener and timer is removed when it
 *   resolves.
 *
 * @throws {ProcessOptionsError} `PROCESS_INVALID_OPTIONS`, when an option has the wrong shape (nothing started).
 * @throws {ProcessStartError} `PROCESS_START_FAILED`, when the program could not be started (the OS error as `cause`).
 * @throws {ProcessLaunchError} `PROCESS_LAUNCH_FAILED`, when the launcher's `prepare` or `release` threw.
 */
export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  const calledAt = performance.now();
  const { checked, fail } = checkProcessOptions(options);
  const { stdin } = options;
  if (stdin !== undefined && typeof stdin !== 'string' && !(stdin instanceof Uint8Array)) fail('stdin', 'a string or a Uint8Array', stdin);
  const timeoutMs = options.timeoutMs === undefined ? undefined : checkDelay(options.timeoutMs, 'timeoutMs', 0, fail);
  const stdout = new HeadCapture(checkByteCount(options.maxStdoutBytes, 'maxStdoutBytes', DEFAULT_MAX_OUTPUT_BYTES, fail));
  const stderr = new HeadCapture(checkByteCount(options.maxStderrBytes, 'maxStderrBytes', DEFAULT_MAX_OUTPUT_BYTES, fail));

  const deadline = timeoutMs === undefined ? undefined : new AbortController();
  const timer = deadline === undefined ? undefined : setTimeout(() => deadline.abort(), timeoutMs);
  const stoppers: Stopper[] = [];
  if (checked.signal !== undefined) stoppers.push({ signal: checked.signal, reason: 'cancel' });
  if (deadline !== undefined) stoppers.push({ signal: deadline.signal, reason: 'timeout' });
  try {
    const outcome = await startManaged({
      options: checked,
      stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      stoppers,
      calledAt,
      attach: (child: ChildProcess) => {
        child.stdout?.on('data', (chunk: Buffer) => stdout.add(chunk));
        child.stderr?.on('data', (chunk: Buffer) => stderr.add(chunk));
        if (stdin !== undefined && child.stdin !== null) {
          child.stdin.on('error', () => undefined); // the program may exit without reading it
          child.stdin.end(stdin);
        }
      },
    });
    const exit = outcome.started ? await outcome.process.settled : outcome.exit;
    if (outcome.started && outcome.process.releaseError !== undefined) throw outcome.process.releaseError;
    return Object.freeze({ ...exit, stdout: stdout.result(), stderr: stderr.result() });
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
