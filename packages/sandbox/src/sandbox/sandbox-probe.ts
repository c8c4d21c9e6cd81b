import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourceFromPath } from '@ca/tool-context';
import { runProcess } from '../process';
import { describeSystemProgramSearch, findProgram, findSystemProgram } from './find-program';
import { createSandboxLauncher, type SandboxPrograms } from './sandbox-launcher';

/** What {@link probeSandbox} found. */
export interface SandboxSupport {
  /** True when programs can run in the sandbox here, checkpoint overlays included. */
  readonly available: boolean;
  /** Why not, when not: not Linux, a program missing, or what bubblewrap or the overlay said. */
  readonly reason?: string;
  /** The `bwrap` program used, when it was found. */
  readonly bwrapPath?: string;
  /** What `bwrap --version` printed (`bubblewrap 0.8.0`), when it ran. */
  readonly bwrapVersion?: string;
}

/** @internal The support and, when available, the programs the launcher starts. */
export interface ProbedSandbox {
  readonly support: SandboxSupport;
  readonly programs?: SandboxPrograms;
}

/** Options of {@link probeSandbox}. */
export interface ProbeSandboxOptions {
  /** The `bwrap` program to try (an absolute path); default `bwrap` found in the folders of the runtime's `PATH`, then in `/usr/local/sbin`, `/usr/local/bin`, `/usr/sbin`, `/usr/bin`, `/sbin` and `/bin`. */
  readonly bwrapPath?: string;
  /** Probe again instead of answering from the cache. */
  readonly refresh?: boolean;
}

/** Longest a probe run may take; a machine under load is slow, not broken. */
const PROBE_TIMEOUT_MS = 20_000;

const probes = new Map<string, Promise<ProbedSandbox>>();

/**
 * Finds out, once per process (per `bwrapPath`), whether the kernel sandbox
 * works here, by using it: `bwrap` runs a program with a read-only root, its
 * own PID namespace and no network, and a program in an overlay (in a user
 * and mount namespace, `unshare`) deletes and re-creates a folder, whose
 * change must be read back. Takes tens of milliseconds; later calls answer
 * from the cache. Never rejects.
 */
export async function probeSandbox(options: ProbeSandboxOptions = {}): Promise<SandboxSupport> {
  return (await probePrograms(options)).support;
}

/** @internal {@link probeSandbox} with the programs found. */
export function probePrograms(options: ProbeSandboxOptions = {}): Promise<ProbedSandbox> {
  const key = options.bwrapPath ?? '';
  let probe = probes.get(key);
  if (probe === undefined || options.refresh === true) {
    probe = runProbe(options.bwrapPath).catch((error: unknown) => ({
      support: { available: false, reason: `the probe failed: ${String((error as Error)?.message ?? error)}` },
    }));
    probes.set(key, probe);
  }
  return probe;
}

async function runProbe(bwrapPath: string | undefined): Promise<ProbedSandbox> {
  if (process.platform !== 'linux') {
    return { support: { available: false, reason: `the sandbox runs on Linux only (bubblewrap and namespaces); this is ${process.platform}` } };
  }
  const bwrap = bwrapPath ?? findSystemProgram('bwrap');
  if (bwrap === undefined) return { support: { available: false, reason: `bwrap (bubblewrap) was not found in ${describeSystemProgramSearch()}` } };
  const given = findProgram(bwrap, undefined, undefined);
  if (!given.found)
    return { support: { available: false, bwrapPath: bwrap, reason: `${bwrap} ${given.code === 'ENOENT' ? 'does not exist' : 'is not an executable file'}` } };
  const version = await runProcess({ command: bwrap, args: ['--version'], inheritEnv: [], timeoutMs: PROBE_TIMEOUT_MS }).catch(
    (error: unknown) => error as Error,
  );
  if (version instanceof Error || version.exitCode !== 0) {
    const why = version instanceof Error ? version.message : version.stderr.text.trim() || `exit ${String(version.exitCode ?? version.signal)}`;
    return { support: { available: false, bwrapPath: bwrap, reason: `${bwrap} --version failed: ${why}` } };
  }
  const bwrapVersion = version.stdout.text.trim();
  const found = { bwrapPath: bwrap, bwrapVersion };
  const [unshare, mount, tar] = [findSystemProgram('unshare'), findSystemProgram('mount'), findSystemProgram('tar')];
  const missing = Object.entries({ unshare, mount, tar })
    .filter(([, path]) => path === undefined)
    .map(([name]) => name);
  if (missing.length > 0)
    return { support: { available: false, ...found, reason: `${missing.join(', ')} (util-linux, tar) not found in ${describeSystemProgramSearch()}` } };
  const programs: SandboxPrograms = { bwrap, unshare: unshare as string, mount: mount as string, tar: tar as string };
  const problems = (await Promise.all([tryInPlace(programs), tryOverlay(programs)])).filter((problem): problem is string => problem !== undefined);
  if (problems.length > 0) return { support: { available: false, ...found, reason: problems.join('; ') } };
  return { support: { available: true, ...found }, programs };
}

/** A program in the sandbox with no network, writing nothing: exit 0 expected. */
async function tryInPlace(programs: SandboxPrograms): Promise<string | undefined> {
  const launcher = createSandboxLauncher({ writes: 'none', network: false }, programs);
  const result = await runProcess({ command: '/bin/sh', args: ['-c', 'exit 0'], cwd: '/', inheritEnv: [], launcher, timeoutMs: PROBE_TIMEOUT_MS });
  if (result.exitCode === 0) return undefined;
  return `bubblewrap could not start a program (${result.timedOut ? 'timed out' : `exit ${String(result.exitCode ?? result.signal)}`}): ${result.stderr.text.trim().slice(0, 500) || 'no message'}`;
}

/** A folder deleted and made again through an overlay: the probe reads back a deletion and a creation. */
async function tryOverlay(programs: SandboxPrograms): Promise<string | undefined> {
  const folder = await realpath(await mkdtemp(join(tmpdir(), 'ca-sandbox-probe-')));
  try {
    await mkdir(join(folder, 'd'));
    await writeFile(join(folder, 'd', 'f'), 'f');
    const launcher = createSandboxLauncher(
      { resources: [resourceFromPath({ id: 'probe', path: folder, access: 'write' })], writes: 'overlay', network: false },
      programs,
    );
    const result = await runProcess({
      command: '/bin/sh',
      args: ['-c', 'rm -r d && mkdir d && : > d/g'],
      cwd: folder,
      inheritEnv: [],
      launcher,
      timeoutMs: PROBE_TIMEOUT_MS,
    }).catch((error: unknown) => error as Error);
    if (result instanceof Error) {
      // The launcher's own error says more than the runner's wrapping of it.
      const cause = (result as { readonly cause?: { readonly message?: unknown } }).cause;
      return `an overlay in a user namespace could not be used: ${typeof cause?.message === 'string' ? cause.message : result.message}`;
    }
    const overlay = launcher.overlay();
    const seen = overlay?.changes.map((change) => `${change.kind} ${change.relativePath}`).sort() ?? [];
    await overlay?.discard();
    if (result.exitCode !== 0)
      return `a program on an overlay failed (exit ${String(result.exitCode ?? result.signal)}): ${result.stderr.text.trim().slice(0, 500) || 'no message'}`;
    if (seen.join(',') !== 'create d/g,delete d/f') return `the overlay's changes could not be read back (found: ${seen.join(', ') || 'none'})`;
    return undefined;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
