import { close, closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, readlinkSync, realpathSync, statSync, symlinkSync } from 'node:fs';
import { chmod, lstat, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { confinementRootsOf, isPathInside, resourcePath, type BoundResource, type SandboxWrites } from '@ca/tool-context';
import { causeMessage } from '../process/process-error';
import { ProcessStartError, type PreparedLaunch, type ProcessExit, type ProcessLaunch, type ProcessLauncher } from '../process';
import { applyOverlayChanges, ApplyFailure, type OverlayApplyHooks } from './apply-overlay-changes';
import { bubblewrapArguments, type SandboxMount } from './bubblewrap-arguments';
import { findProgram } from './find-program';
import { readOverlayChanges, type OverlayChange, type OverlayLayer, type OverlayReading, type OverlaySkippedEntry } from './overlay-changes';
import { SandboxOverlayError } from './sandbox-overlay-error';

/** What a sandboxed program may write of the write-bound resources: `'none'`, `'in-place'` or `'overlay'` (see `SandboxWrites` of `@ca/tool-context`). */
export type { SandboxWrites };

/** What one sandboxed run may see and do. */
export interface SandboxLaunchOptions {
  /** The plan's bound resources; those with a `file:` URI are bound at their resolved paths, the others are ignored. */
  readonly resources?: readonly BoundResource[];
  /** What may be written of the write-bound resources. */
  readonly writes: SandboxWrites;
  /** `false`: the program gets a network namespace of its own, with only a loopback device. */
  readonly network: boolean;
  /** Further folders or files the program must see, read-only (a skill folder under `/tmp`, which is otherwise private). */
  readonly readablePaths?: readonly string[];
  /** Further folders or files writable in place, from trusted configuration (an MCP server's cache folder). */
  readonly writablePaths?: readonly string[];
  /** Named in errors. */
  readonly toolName?: string;
  /** Named in errors. */
  readonly planId?: string;
}

/** The changes a program made through the overlay of a checkpoint plan, not yet applied. */
export interface SandboxOverlay {
  /** In the order they are applied: a folder's deleted entries before the folder, a created folder before its entries. */
  readonly changes: readonly OverlayChange[];
  /** What the program made that cannot be carried out of the sandbox (FIFOs, sockets, devices); never applied. */
  readonly skipped: readonly OverlaySkippedEntry[];
  /**
   * Applies the changes to the real tree, calling `hooks.capture` for every
   * `modify` and `delete` first (nothing is applied if one throws), then
   * `hooks.applied` after each change; then discards the overlay.
   *
   * @throws {SandboxOverlayError} `SANDBOX_OVERLAY_FAILED` (`stage: 'apply'`)
   *   naming the change that failed and how many were applied before it.
   */
  apply<Captured = unknown>(hooks?: OverlayApplyHooks<Captured>): Promise<void>;
  /** Removes the overlay's folders without applying anything. Idempotent; never throws. */
  discard(): Promise<void>;
}

/** A {@link ProcessLauncher} that runs one program in the kernel sandbox. Made by `Sandbox.launcher`; one per run. */
export interface SandboxLauncher extends ProcessLauncher {
  /** `'bubblewrap'`. */
  readonly name: string;
  /** What the program may write. */
  readonly writes: SandboxWrites;
  /** Whether the program may reach the network. */
  readonly network: boolean;
  /**
   * After the run (`writes: 'overlay'`): the changes the program made, to
   * apply or discard — one or the other must be called. `undefined` before the
   * run has ended, for other modes, and when the run was cancelled, timed out
   * or never started (the overlay was discarded then).
   */
  overlay(): SandboxOverlay | undefined;
}

/** @internal Programs the sandbox starts, found by the probe. */
export interface SandboxPrograms {
  readonly bwrap: string;
  readonly unshare: string;
  readonly mount: string;
  readonly tar: string;
}

// bubblewrap reads its options from descriptor 3 (`--args 3`), NUL-separated, so that nothing of them — the
// program's environment above all — is on a command line, which every user of the machine may read in
// /proc/<pid>/cmdline. It writes the host pid of the namespace's first process and the namespace to
// descriptor 4 (`--info-fd 4`), so that the end of the run can wait for the namespace to be gone (see
// waitForNamespaceEnd). Only the program and its arguments stay on bubblewrap's command line: they are on
// the program's own once it runs.
const OPTIONS_FD = '3';
const INFO_FD = '4';

// Runs in the new user and mount namespace, before bubblewrap; fixed text: every path comes as an argument,
// never spliced in. Relative layer names keep the mount options free of the resources' own paths (a comma or
// colon in a path would split them); l<i> are links to the resources. Descriptors 3 and 4 pass through to
// bubblewrap.
const OVERLAY_SCRIPT = [
  'root=$1; count=$2; mount=$3; shift 3',
  'cd "$root" || exit 125',
  'i=0',
  'while [ "$i" -lt "$count" ]; do',
  '  "$mount" -t overlay overlay -o "userxattr,lowerdir=l$i,upperdir=u$i,workdir=w$i" "m$i" 2>> mount-errors || exit 125',
  '  i=$((i + 1))',
  'done',
  ': > mounted || exit 125',
  'exec "$@"',
].join('\n');

/** Looks at the end of the namespace made at once, before waiting a millisecond between looks. */
const QUICK_LOOKS = 20;

/** How long the end of a run waits for the kernel to empty the PID namespace (a process in uninterruptible sleep can delay it). */
const NAMESPACE_END_WAIT_MS = 5_000;

/** @internal Makes the launcher of one sandboxed run. */
export function createSandboxLauncher(options: SandboxLaunchOptions, programs: SandboxPrograms): SandboxLauncher {
  return new BubblewrapLauncher(options, programs);
}

class BubblewrapLauncher implements SandboxLauncher {
  readonly name = 'bubblewrap';
  readonly writes: SandboxWrites;
  readonly network: boolean;
  #prepared = false;
  #layers: OverlayLayer[] = [];
  #overlay: Overlay | undefined;

  constructor(
    private readonly options: SandboxLaunchOptions,
    private readonly programs: SandboxPrograms,
  ) {
    this.writes = options.writes;
    this.network = options.network;
  }

  overlay(): SandboxOverlay | undefined {
    return this.#overlay;
  }

  async prepare(launch: ProcessLaunch): Promise<PreparedLaunch> {
    if (this.#prepared) throw new Error('a sandbox launcher runs one program only; make another for the next run');
    this.#prepared = true;
    const { options } = this;
    // The file-system work before a start is a handful of stat and realpath calls, done synchronously: on a busy
    // machine each trip through libuv's thread pool costs more than all of them (see tools/bench/sandbox.bench.js).
    const found = findProgram(launch.command, launch.env['PATH'], launch.cwd);
    if (!found.found) {
      // As the runner reports a program that cannot start without the sandbox.
      const cause = Object.assign(new Error(`spawn ${launch.command} ${found.code}`), {
        code: found.code,
        syscall: `spawn ${launch.command}`,
        path: launch.command,
      });
      throw new ProcessStartError({ command: launch.command, ...(launch.cwd === undefined ? {} : { cwd: launch.cwd }), cause, ...details(options) });
    }
    let cwd: string;
    try {
      cwd = realpathSync.native(launch.cwd ?? process.cwd());
    } catch (error) {
      throw new ProcessStartError({ command: launch.command, ...(launch.cwd === undefined ? {} : { cwd: launch.cwd }), cause: error, ...details(options) });
    }
    const mounts = new MountTable();
    const overlaid: { readonly resource: BoundResource; readonly root: string }[] = [];
    for (const resource of options.resources ?? []) {
      if (typeof resource?.uri !== 'string' || !resource.uri.toLowerCase().startsWith('file:')) continue;
      const root = realPathOf(resourcePath(resource));
      if (root === undefined) continue; // nothing to bind: the program sees that it is missing
      const writable = resource.access === 'write' && options.writes !== 'none';
      if (writable && options.writes === 'overlay' && statSync(root).isDirectory()) overlaid.push({ resource, root });
      else mounts.add({ source: root, target: root, writable });
    }
    for (const path of options.writablePaths ?? []) {
      const real = realPathOf(path);
      if (real !== undefined) mounts.add({ source: real, target: real, writable: true });
    }
    const scratch = overlaid.length === 0 ? undefined : mkdtempSync(join(tmpdir(), 'ca-sandbox-'));
    if (scratch !== undefined) {
      try {
        for (const [index, { resource, root }] of overlaid.entries()) {
          const upper = join(scratch, `u${index}`);
          for (const folder of [upper, join(scratch, `w${index}`), join(scratch, `m${index}`)]) mkdirSync(folder);
          symlinkSync(root, join(scratch, `l${index}`));
          this.#layers.push({ resource, root, upper });
          mounts.add({ source: join(scratch, `m${index}`), target: root, writable: true });
        }
      } catch (error) {
        await removeScratch(scratch);
        throw error;
      }
    }
    // /tmp is private: what the program must see there is bound read-only (unless a resource covers it).
    for (const path of [...(options.readablePaths ?? []), cwd]) {
      const real = realPathOf(path);
      if (real !== undefined && isPathInside(real, '/tmp') && !mounts.covers(real)) mounts.add({ source: real, target: real, writable: false });
    }
    const env = { ...launch.env };
    // The runtime's TMPDIR may be read-only in here; the private /tmp is not.
    if (env['TMPDIR'] !== undefined && !mounts.isWritable(env['TMPDIR'])) env['TMPDIR'] = '/tmp';
    const bubblewrapOptions = bubblewrapArguments({ mounts: mounts.list(), network: options.network, cwd, env });
    const info = new NamespaceInfo(scratch === undefined);
    const pipes = [{ input: Buffer.from(bubblewrapOptions.map((option) => `${option}\0`).join('')) }, { onOutput: info.add }];
    const bwrapArgs = ['--args', OPTIONS_FD, '--info-fd', INFO_FD, '--', launch.command, ...launch.args];
    if (scratch === undefined) {
      return {
        command: this.programs.bwrap,
        args: bwrapArgs,
        cwd: launch.cwd,
        env: {},
        pipes,
        release: () => info.release(),
      };
    }
    return {
      command: this.programs.unshare,
      args: [
        '--user',
        '--map-root-user',
        '--mount',
        '/bin/sh',
        '-c',
        OVERLAY_SCRIPT,
        'ca-sandbox',
        scratch,
        String(this.#layers.length),
        this.programs.mount,
        this.programs.bwrap,
        ...bwrapArgs,
      ],
      cwd: launch.cwd,
      env: {},
      pipes,
      release: (exit) => this.#release(exit, scratch, info),
    };
  }

  async #release(exit: ProcessExit, scratch: string, info: NamespaceInfo): Promise<void> {
    const { options } = this;
    await info.release();
    if (exit.pid === undefined || exit.cancelled || exit.timedOut) {
      await removeScratch(scratch);
      return;
    }
    const mounted = await lstat(join(scratch, 'mounted')).catch(() => undefined);
    if (mounted === undefined) {
      const message = (await readFile(join(scratch, 'mount-errors'), 'utf8').catch(() => '')).trim();
      await removeScratch(scratch);
      throw new SandboxOverlayError({
        stage: 'mount',
        problem: message === '' ? `the namespace could not be entered (exit ${String(exit.exitCode ?? exit.signal)})` : message.slice(0, 1000),
        ...details(options),
      });
    }
    let reading: OverlayReading;
    try {
      reading = await readOverlayChanges(this.#layers, this.programs.tar, scratch);
    } catch (cause) {
      await removeScratch(scratch);
      throw new SandboxOverlayError({ stage: 'read', problem: causeMessage(cause), cause, ...details(options) });
    }
    this.#overlay = new Overlay(reading, scratch, options);
  }
}

function realPathOf(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

class Overlay implements SandboxOverlay {
  readonly changes: readonly OverlayChange[];
  readonly skipped: readonly OverlaySkippedEntry[];
  #discarded: Promise<void> | undefined;
  #applying = false;

  constructor(
    private readonly reading: OverlayReading,
    private readonly scratch: string,
    private readonly options: SandboxLaunchOptions,
  ) {
    this.changes = Object.freeze(
      reading.changes.map(({ kind, path, relativePath, resource, before, after }) =>
        Object.freeze({ kind, path, relativePath, resource, ...(before === undefined ? {} : { before }), ...(after === undefined ? {} : { after }) }),
      ),
    );
    this.skipped = Object.freeze([...reading.skipped]);
  }

  async apply<Captured = unknown>(hooks: OverlayApplyHooks<Captured> = {}): Promise<void> {
    if (this.#discarded !== undefined || this.#applying) throw new Error('the overlay was already applied or discarded');
    this.#applying = true;
    const { options } = this;
    // The hooks see the frozen changes of `changes`, not the internal ones (which know the upper layer's paths).
    const shown = new Map<OverlayChange, OverlayChange>(this.reading.changes.map((change, index) => [change, this.changes[index] as OverlayChange]));
    const { capture, applied } = hooks;
    try {
      await applyOverlayChanges<Captured>(
        this.reading.changes,
        {
          ...(capture === undefined ? {} : { capture: (change, target) => capture(shown.get(change) ?? change, target) }),
          ...(applied === undefined ? {} : { applied: (change, captured) => applied(shown.get(change) ?? change, captured) }),
        },
        { roots: await confinementRootsOf(options.resources ?? []), ...details(options) },
      );
    } catch (error) {
      if (error instanceof ApplyFailure) {
        throw new SandboxOverlayError({
          stage: 'apply',
          problem: causeMessage(error.cause),
          path: error.change.path,
          appliedCount: error.appliedCount,
          cause: error.cause,
          ...details(options),
        });
      }
      throw new SandboxOverlayError({ stage: 'apply', problem: causeMessage(error), cause: error, ...details(options) });
    } finally {
      await this.discard();
    }
  }

  discard(): Promise<void> {
    this.#discarded ??= removeScratch(this.scratch);
    return this.#discarded;
  }
}

/**
 * What bubblewrap wrote to its info descriptor: the namespace's first process,
 * once it made one. With `holdMounts`, the sandbox's mount namespace is held
 * open (a descriptor of `/proc/<pid>/ns/mnt`) from then until the run is over:
 * the kernel then tears the sandbox's mounts down when {@link release} closes
 * it, off the path of the run, instead of in the exit of the namespace's last
 * process, which the end of the run waits for (about a millisecond, more on a
 * busy machine). No process can enter a namespace through it; an overlay's
 * run does not hold it (its upper layer is read back after the run).
 */
class NamespaceInfo {
  #text = '';
  #mounts: number | undefined;

  constructor(private readonly holdMounts: boolean) {}

  /** Keeps a chunk; bubblewrap writes a few dozen bytes, once — anything past 4 KiB is not its. */
  readonly add = (chunk: Buffer): void => {
    if (this.#text.length >= 4096) return;
    this.#text += chunk.toString('utf8');
    if (this.holdMounts && this.#mounts === undefined && this.#text.endsWith('}\n')) this.#holdMounts();
  };

  /** The pid and namespace, or `undefined` when bubblewrap never got that far (no namespace was made). */
  read(): { readonly pid: number; readonly namespace: number } | undefined {
    let info: { readonly 'child-pid'?: unknown; readonly 'pid-namespace'?: unknown };
    try {
      info = JSON.parse(this.#text) as typeof info;
    } catch {
      return undefined;
    }
    const pid = info['child-pid'];
    const namespace = info['pid-namespace'];
    return typeof pid === 'number' && typeof namespace === 'number' ? { pid, namespace } : undefined;
  }

  /** Waits for the end of the namespace, then lets its mounts go. */
  async release(): Promise<void> {
    try {
      await waitForNamespaceEnd(this.read());
    } finally {
      const mounts = this.#mounts;
      this.#mounts = undefined;
      // Closed in the thread pool: the kernel's teardown of the mounts happens there, not before the run returns.
      if (mounts !== undefined) close(mounts, () => undefined);
    }
  }

  #holdMounts(): void {
    const leader = this.read();
    if (leader === undefined) return;
    let fd: number | undefined;
    try {
      fd = openSync(`/proc/${leader.pid}/ns/mnt`, 'r');
      // The pid may already be another process's (the program was that quick): only the sandbox's namespace is held.
      if (isNamespaceLeader(leader.pid, leader.namespace)) this.#mounts = fd;
      else closeSync(fd);
    } catch {
      if (fd !== undefined && this.#mounts === undefined) closeSync(fd);
      // Not allowed, or gone already: the run waits for the teardown instead.
    }
  }
}

/**
 * bubblewrap reports the exit of the program as soon as it has it, and its
 * first process then ends the namespace (killing what is left in it) on its
 * own time. The run is over only when that first process is gone: the kernel
 * lets it end only once every other process of the namespace has. Usually it
 * is gone by the time the runner has read the program's output to its end, and
 * a single look at `/proc` settles it; otherwise this looks again, at once a
 * few times (it is usually a matter of microseconds), then every millisecond,
 * for at most {@link NAMESPACE_END_WAIT_MS}.
 */
async function waitForNamespaceEnd(leader: { readonly pid: number; readonly namespace: number } | undefined): Promise<void> {
  if (leader === undefined) return;
  const { pid, namespace } = leader;
  const deadline = Date.now() + NAMESPACE_END_WAIT_MS;
  // Checked by its namespace, so a pid used again meanwhile is not mistaken for it.
  for (let look = 0; isNamespaceLeader(pid, namespace) && Date.now() < deadline; look++) {
    await new Promise((resolve) => (look < QUICK_LOOKS ? setImmediate(resolve) : setTimeout(resolve, 1)));
  }
}

/** True while `pid` runs (not a zombie) as the first process of the PID namespace `namespace`. Reads `/proc`, which answers at once. */
function isNamespaceLeader(pid: number, namespace: number): boolean {
  try {
    if (readlinkSync(`/proc/${pid}/ns/pid`) !== `pid:[${namespace}]`) return false;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2) !== 'Z';
  } catch {
    return false;
  }
}

/** Mounts by target: a read-only one wins over a writable one at the same place. */
class MountTable {
  readonly #mounts = new Map<string, SandboxMount>();

  add(mount: SandboxMount): void {
    const existing = this.#mounts.get(mount.target);
    if (existing !== undefined && !existing.writable) return;
    this.#mounts.set(mount.target, mount);
  }

  covers(path: string): boolean {
    return [...this.#mounts.values()].some((mount) => isPathInside(path, mount.target));
  }

  /** True when the deepest mount holding `path` is writable. */
  isWritable(path: string): boolean {
    let deepest: SandboxMount | undefined;
    for (const mount of this.#mounts.values()) {
      if (isPathInside(path, mount.target) && (deepest === undefined || mount.target.length > deepest.target.length)) deepest = mount;
    }
    return deepest?.writable === true;
  }

  list(): SandboxMount[] {
    return [...this.#mounts.values()];
  }
}

function details(options: SandboxLaunchOptions): { toolName?: string; planId?: string } {
  return { ...(options.toolName === undefined ? {} : { toolName: options.toolName }), ...(options.planId === undefined ? {} : { planId: options.planId }) };
}

/**
 * Removes an overlay's folders. The kernel leaves the work folder's inner
 * folder without permissions, which a user other than root cannot remove
 * before giving them back.
 */
async function removeScratch(scratch: string): Promise<void> {
  try {
    await rm(scratch, { recursive: true, force: true });
    return;
  } catch {
    // Below: make every folder writable again, then remove.
  }
  const open = async (folder: string): Promise<void> => {
    await chmod(folder, 0o700).catch(() => undefined);
    for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) await open(join(folder, entry.name));
    }
  };
  await open(scratch);
  await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
}
