/** One folder (or file) made visible inside the sandbox. */
export interface SandboxMount {
  /** Where it is outside the sandbox. */
  readonly source: string;
  /** Where the program sees it. */
  readonly target: string;
  /** `false`: read-only. */
  readonly writable: boolean;
}

/** What {@link bubblewrapArguments} builds the command line from. */
export interface BubblewrapLayout {
  /** Folders and files bound over the read-only root, in any order: the deeper target is always mounted later. */
  readonly mounts: readonly SandboxMount[];
  /** `false`: a network namespace of its own (only a loopback device). */
  readonly network: boolean;
  /** The program's working folder inside the sandbox. */
  readonly cwd: string | undefined;
  /** The program's whole environment; `bwrap` itself gets none of it. */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * @internal The arguments of `bwrap` before `--`, in the order bubblewrap
 * applies them:
 *
 * 1. `--ro-bind / /`: the whole file system, read-only.
 * 2. `--tmpfs /tmp` and the mounts, shallowest target first, so that a
 *    resource under `/tmp` is bound over the private `/tmp`, a read-only
 *    resource nested in a writable one stays read-only, and a writable one
 *    nested in a read-only one stays writable.
 * 3. `--dev /dev` and `--proc /proc`: a minimal `/dev` and the `/proc` of the
 *    new PID namespace, last, so no mount covers them; `/proc/sys` bound
 *    read-only over it, since a program running as uid 0 may write
 *    `kernel.core_pattern` through it even without capabilities (and so run
 *    code outside the sandbox).
 * 4. `--cap-drop ALL`: bubblewrap started by root (or inside the user namespace
 *    of a checkpoint overlay) keeps the capabilities otherwise, and one with
 *    `CAP_SYS_ADMIN` remounts the read-only root read-write.
 *    `--unshare-ipc`: no System V shared memory or semaphores of the host.
 *    `--unshare-pid --die-with-parent`: the program is pid 2 under bubblewrap's
 *    reaper; when it exits the namespace ends and the kernel kills every
 *    process left in it, `setsid` or not; when the runtime dies, so does the
 *    sandbox. No `--new-session`: the runner starts the program in a session
 *    of its own already (no controlling terminal to inject into), and the
 *    program must stay in the runner's process group to get its SIGTERM.
 * 5. `--unshare-net` unless the network is allowed.
 * 6. `--clearenv` and one `--setenv` per variable: the environment reaches the
 *    program only, never `bwrap` (a loader variable in it cannot act on the
 *    sandbox itself). The launcher passes all of these through a descriptor
 *    (`--args`), never on a command line, which every user may read.
 */
export function bubblewrapArguments(layout: BubblewrapLayout): string[] {
  const args = ['--ro-bind', '/', '/'];
  const layered: { readonly depth: number; readonly order: number; readonly args: readonly string[] }[] = [
    { depth: depthOf('/tmp'), order: -1, args: ['--tmpfs', '/tmp'] },
    ...layout.mounts.map((mount, order) => ({
      depth: depthOf(mount.target),
      order,
      args: [mount.writable ? '--bind' : '--ro-bind', mount.source, mount.target],
    })),
  ];
  layered.sort((left, right) => left.depth - right.depth || left.order - right.order);
  for (const layer of layered) args.push(...layer.args);
  args.push('--dev', '/dev', '--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys');
  args.push('--unshare-pid', '--unshare-ipc', '--die-with-parent', '--cap-drop', 'ALL');
  if (!layout.network) args.push('--unshare-net');
  args.push('--clearenv');
  for (const [name, value] of Object.entries(layout.env)) args.push('--setenv', name, value);
  if (layout.cwd !== undefined) args.push('--chdir', layout.cwd);
  return args;
}

function depthOf(path: string): number {
  return path.split('/').filter((part) => part.length > 0).length;
}
