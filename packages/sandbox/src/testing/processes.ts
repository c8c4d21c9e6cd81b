import { readFileSync } from 'node:fs';

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
