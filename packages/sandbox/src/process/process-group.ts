import type { ChildProcess } from 'node:child_process';

/**
 * True where a child spawned with `detached: true` leads its own process
 * group (POSIX), so that {@link signalProcessGroup} reaches everything it
 * started. On Windows a tool signals the child alone.
 */
export const PROCESS_GROUPS_SUPPORTED: boolean = process.platform !== 'win32';

/**
 * Sends `signal` to the process group of `child` — the child and every
 * process it started that stayed in its group — or, where process groups are
 * not supported, to the child alone. The child must have been spawned with
 * `detached: PROCESS_GROUPS_SUPPORTED`.
 *
 * Tools that run programs call it with SIGTERM on cancellation (then SIGKILL
 * after a grace period), and with SIGKILL once the program has exited, so that
 * no background process it left outlives the tool call. Never throws: a group
 * that is already gone (ESRCH) is what was wanted.
 */
export function signalProcessGroup(child: Pick<ChildProcess, 'pid' | 'kill'>, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined) return;
  try {
    if (PROCESS_GROUPS_SUPPORTED) process.kill(-pid, signal);
    else child.kill(signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}
