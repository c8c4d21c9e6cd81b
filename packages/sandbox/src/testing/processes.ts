import { readdirSync, readFileSync } from 'node:fs';

/**
 * True while the process `pid` runs. A zombie (exited, waiting for its parent
 * to reap it) counts as gone: it runs nothing. Reads `/proc` on Linux; other
 * platforms rely on signal 0 alone.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return true; // no /proc: signal 0 said it exists
  }
  // The state follows the command name, which may itself contain ') '.
  return stat.charAt(stat.lastIndexOf(')') + 2) !== 'Z';
}

/**
 * Resolves `true` once none of `pids` is alive (see {@link isProcessAlive}),
 * `false` after `timeoutMs`. A hang guard for tests that check that a tool
 * left no process behind, not a speed requirement.
 */
export async function waitUntilProcessesGone(pids: readonly number[], timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!pids.some(isProcessAlive)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Pids of the live processes whose command line holds `argument` as one of
 * its words (Linux: reads `/proc`). With {@link uniqueSleep}, how a test finds
 * the process a tool started — and checks that it is gone.
 */
export function processesWithArgument(argument: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(argument) && isProcessAlive(Number(entry))) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * A `sleep` duration (about `seconds`) that no other process of the machine
 * uses: a test starts `sleep <it>` and finds that process by it.
 */
export function uniqueSleep(seconds = 60): string {
  return `${seconds}.${process.pid}${Math.floor(Math.random() * 1e6)}`;
}

/** Resolves `true` once `condition` holds, `false` after `timeoutMs`: a hang guard, not a speed requirement. */
export async function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

/** Sends SIGKILL to each of `pids` that still runs (what a test left behind when it failed midway). */
export function killProcesses(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
