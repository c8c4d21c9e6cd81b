import type { ProcessExit } from './process-exit';

/** What the runner is about to start, its environment already built. */
export interface ProcessLaunch {
  /** The program asked for. */
  readonly command: string;
  /** Its arguments. */
  readonly args: readonly string[];
  /** Its working folder; `undefined`: the runtime's own. */
  readonly cwd: string | undefined;
  /** Its whole environment (see `buildProcessEnvironment`). */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * A further pipe a launch gives the program, as descriptor 3, 4, … in the
 * order of {@link PreparedLaunch.pipes}:
 * - `{ input }`: the runner writes these bytes and closes its end, so the
 *   program reads them to the end of file. What must not appear on a command
 *   line — every user of the machine may read `/proc/<pid>/cmdline` — goes
 *   here (`bwrap --args 3` reads its options from such a pipe);
 * - `{ onOutput }`: what the program writes there is passed on as it comes
 *   (`bwrap --info-fd 4` tells the namespace it made).
 */
export type LaunchPipe = { readonly input: Uint8Array } | { readonly onOutput: (chunk: Buffer) => void };

/** A launch as a {@link ProcessLauncher} rewrote it, with what to do once the program is gone. */
export interface PreparedLaunch extends ProcessLaunch {
  /**
   * Further pipes, from descriptor 3 on (see {@link LaunchPipe}). The runner
   * waits for them to close, like stdout and stderr, and destroys them once
   * the program has exited.
   */
  readonly pipes?: readonly LaunchPipe[];
  /**
   * Called once the program has exited and the runner has killed what was
   * left of its process group — after a success, a failure, a timeout or a
   * cancellation alike, and also when the start failed. Undo what `prepare`
   * set up here (unmount an overlay, turn it into changes, remove a folder).
   * A launcher that must report an outcome keeps it itself; a throw becomes
   * `ProcessLaunchError` (`stage: 'release'`).
   */
  release?(exit: ProcessExit): Promise<void>;
}

/**
 * Where a confinement plugs into the runner: it receives the launch the
 * caller asked for and returns the one to spawn. A kernel sandbox rewrites the
 * command line (`bwrap … -- command args`, or an overlay mount in a user and
 * mount namespace around it), adds writable binds for the resources it was
 * built with, decides the network, and runs the program in a PID namespace
 * (`--unshare-pid --die-with-parent`), where every descendant — `setsid` or
 * not — ends with the program. Everything the launcher needs about the plan
 * (resources, policy) is given to it when it is made, not by the runner.
 *
 * The runner still starts what `prepare` returns in its own process group,
 * with the same signals, deadlines, output caps and clean-up.
 */
export interface ProcessLauncher {
  /** Names the launcher in errors (`'bubblewrap'`). */
  readonly name: string;
  /**
   * Rewrites a launch, preparing what it needs. `signal` aborts when the
   * call is cancelled or times out meanwhile. A throw becomes
   * `ProcessLaunchError` (`stage: 'prepare'`) and nothing is started; a
   * `ProcessStartError` (the program cannot be found, as a launcher that
   * starts another program first must check itself) reaches the caller as it is.
   */
  prepare(launch: ProcessLaunch, signal: AbortSignal): Promise<PreparedLaunch>;
}
