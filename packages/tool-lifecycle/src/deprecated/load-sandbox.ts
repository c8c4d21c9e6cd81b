import type { ChildProcess } from 'node:child_process';

// The main and testing entries keep a few names of the process runner for one
// release. They load `@ca/sandbox` only when one of them is used, so that a
// service that starts no program need not install it — nor have it to compile
// against: the shapes used here are written out, not imported.

/** What the deprecated names of the main entry call in `@ca/sandbox`. */
export interface SandboxProcessGroups {
  signalProcessGroup(child: Pick<ChildProcess, 'pid' | 'kill'>, signal: NodeJS.Signals): void;
}

/** What the deprecated names of the testing entry call in `@ca/sandbox/testing`. */
export interface SandboxTestHelpers {
  isProcessAlive(pid: number): boolean;
  waitUntilProcessesGone(pids: readonly number[], timeoutMs?: number): Promise<boolean>;
  sandboxAvailableForTests(suite: string): boolean;
}

/** `@ca/sandbox`, loaded on first use. */
export function loadSandbox(): SandboxProcessGroups {
  return require('@ca/sandbox') as SandboxProcessGroups;
}

/** `@ca/sandbox/testing`, loaded on first use. */
export function loadSandboxTesting(): SandboxTestHelpers {
  return require('@ca/sandbox/testing') as SandboxTestHelpers;
}
