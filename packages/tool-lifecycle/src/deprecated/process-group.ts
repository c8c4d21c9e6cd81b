import type { ChildProcess } from 'node:child_process';
import { loadSandbox } from './load-sandbox';

/**
 * True where a child spawned with `detached: true` leads its own process group (POSIX).
 * @deprecated Moved to `@ca/sandbox` with the process runner: import it from there. The main
 * entry of `@ca/tool-lifecycle` loses it in the release after this one.
 */
export const PROCESS_GROUPS_SUPPORTED: boolean = process.platform !== 'win32';

/**
 * Sends `signal` to the process group of `child` (see `signalProcessGroup` of `@ca/sandbox`,
 * which this calls: it needs `@ca/sandbox` installed).
 * @deprecated Moved to `@ca/sandbox` with the process runner: import it from there. The main
 * entry of `@ca/tool-lifecycle` loses it in the release after this one.
 */
export function signalProcessGroup(child: Pick<ChildProcess, 'pid' | 'kill'>, signal: NodeJS.Signals): void {
  loadSandbox().signalProcessGroup(child, signal);
}
