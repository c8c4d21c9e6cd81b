import { loadSandboxTesting } from './load-sandbox';

/**
 * True while the process `pid` runs; a zombie counts as gone (see `@ca/sandbox/testing`, which
 * this calls: it needs `@ca/sandbox` installed).
 * @deprecated Moved to `@ca/sandbox/testing`: import it from there. `@ca/tool-lifecycle/testing`
 * loses it in the release after this one.
 */
export function isProcessAlive(pid: number): boolean {
  return loadSandboxTesting().isProcessAlive(pid);
}

/**
 * Resolves `true` once none of `pids` is alive, `false` after `timeoutMs` (see `@ca/sandbox/testing`,
 * which this calls: it needs `@ca/sandbox` installed).
 * @deprecated Moved to `@ca/sandbox/testing`: import it from there. `@ca/tool-lifecycle/testing`
 * loses it in the release after this one.
 */
export function waitUntilProcessesGone(pids: readonly number[], timeoutMs?: number): Promise<boolean> {
  return loadSandboxTesting().waitUntilProcessesGone(pids, timeoutMs);
}

/**
 * For test files that need the kernel sandbox: `true` when it works here, otherwise a `NOT RUN`
 * notice on stderr (a failure under `CI=true`). See `@ca/sandbox/testing`, which this calls: it
 * needs `@ca/sandbox` installed.
 * @deprecated Moved to `@ca/sandbox/testing`: import it from there. `@ca/tool-lifecycle/testing`
 * loses it in the release after this one.
 * @throws Error under `CI=true` when the sandbox does not work.
 */
export function sandboxAvailableForTests(suite: string): boolean {
  return loadSandboxTesting().sandboxAvailableForTests(suite);
}
