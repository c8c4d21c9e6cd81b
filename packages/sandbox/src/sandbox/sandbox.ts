import { planAllowsNetwork, sandboxWritesForPlan, type BoundResource, type PlanPolicy } from '@ca/tool-context';
import { createSandboxLauncher, type SandboxLauncher, type SandboxLaunchOptions } from './sandbox-launcher';
import { probePrograms, type SandboxSupport } from './sandbox-probe';
import { resolveSandboxSettings, type ResolvedSandboxSettings, type SandboxMode, type SandboxSetting } from './sandbox-settings';
import { SANDBOX_INSTALL_COMMAND, SandboxUnavailableError } from './sandbox-unavailable-error';

/** The sandbox as an adapter holds it: its settings, and launchers for runs. Made by {@link createSandbox}. */
export interface Sandbox {
  /** The settings, defaults filled in. */
  readonly settings: ResolvedSandboxSettings;
  /**
   * Whether programs run in the sandbox: `false` for `'off'`, `true` for
   * `'required'` (whether or not it works: see {@link Sandbox.ensureAvailable}),
   * the probe's answer for `'auto'` — a `false` there is told once through
   * `warn` (see {@link CreateSandboxOptions.warn}). Never rejects.
   */
  isEnabled(): Promise<boolean>;
  /** What the probe found (probing once per process). Never rejects. */
  support(): Promise<SandboxSupport>;
  /**
   * Resolves when nothing stands in the way: the mode is `'off'` or `'auto'`,
   * or the sandbox works. Call it from a tool's `activate`.
   *
   * @throws {SandboxUnavailableError} `SANDBOX_UNAVAILABLE` when the mode is
   *   `'required'` and the sandbox does not work here; the message names the
   *   reason and the install command.
   */
  ensureAvailable(details?: { readonly toolName?: string; readonly planId?: string }): Promise<void>;
  /**
   * The launcher of one run (pass it as `launcher` to `runProcess` or
   * `startProcess`), or `undefined` when programs run without the sandbox
   * (`'off'`, or `'auto'` where it does not work). With `network: false` in
   * the settings the program never gets the network, whatever `options` say.
   *
   * @throws {SandboxUnavailableError} As {@link Sandbox.ensureAvailable}.
   */
  launcher(options: SandboxLaunchOptions): Promise<SandboxLauncher | undefined>;
}

/** Options of {@link createSandbox}. */
export interface CreateSandboxOptions {
  /** The mode when the setting is `undefined` (default `'auto'`). */
  readonly defaultMode?: SandboxMode;
  /** How the setting is named in messages (`'command.sandbox'`; default `'sandbox'`). */
  readonly setting?: string;
  /**
   * Told when `'auto'` runs programs without the sandbox because it does not
   * work here, with the reason and what to do — once per process for a
   * setting and a reason, however many sandboxes and calls see it. An adapter
   * passes its logger's `warn`. Default: a `[ca] warn:` line on stderr (`console.error`).
   */
  readonly warn?: (message: string) => void;
}

/** The downgrades already told, by setting and reason: a silent fall back to no confinement is the failure to avoid, a repeated one is noise. */
const toldDowngrades = new Set<string>();

/** The warning of an `'auto'` sandbox that runs programs without confinement. */
function describeSandboxDowngrade(setting: string, reason: string): string {
  return (
    `The kernel sandbox is off: ${setting} is 'auto' and the sandbox does not work here (${reason}). ` +
    "Programs run unconfined: the whole file system and the network, with the service's rights (tools that run programs then declare that they write, so read-only and checkpoint plans refuse them). " +
    `Install bubblewrap (${SANDBOX_INSTALL_COMMAND}) where it should work, set ${setting} to 'required' to refuse to run programs without it, or to 'off' to choose this knowingly.`
  );
}

/**
 * Makes the sandbox of an adapter from its setting: a mode, or
 * `{ mode, network?, bwrapPath? }`.
 *
 * @example
 * const sandbox = createSandbox(settings.sandbox, { setting: 'command.sandbox' });
 * const launcher = await sandbox.launcher({ ...sandboxOptionsForPlan(ctx), toolName, planId: ctx.planId });
 * const result = await runProcess({ command: 'make', cwd, ...(launcher === undefined ? {} : { launcher }) });
 *
 * @throws {SandboxSettingsError} `SANDBOX_INVALID_SETTINGS` for a setting of the wrong shape.
 */
export function createSandbox(setting?: SandboxSetting, options: CreateSandboxOptions = {}): Sandbox {
  const settings = resolveSandboxSettings(setting, {
    ...(options.defaultMode === undefined ? {} : { defaultMode: options.defaultMode }),
    ...(options.setting === undefined ? {} : { setting: options.setting }),
  });
  const name = options.setting ?? 'sandbox';
  const warn = options.warn ?? ((message: string) => console.error(`[ca] warn: ${message}`));
  const probe = () => probePrograms(settings.bwrapPath === undefined ? {} : { bwrapPath: settings.bwrapPath });
  /** `'auto'` where the sandbox does not work: said once, loudly, with the reason. */
  const downgraded = (reason: string | undefined): void => {
    const key = `${name}\0${settings.bwrapPath ?? ''}\0${reason ?? ''}`;
    if (toldDowngrades.has(key)) return;
    if (toldDowngrades.size < 1_000) toldDowngrades.add(key);
    try {
      warn(describeSandboxDowngrade(name, reason ?? 'no reason given'));
    } catch {
      // A logger that throws must not turn the warning into a failure of the call.
    }
  };
  const sandbox: Sandbox = {
    settings,
    isEnabled: async () => {
      if (settings.mode === 'off') return false;
      if (settings.mode === 'required') return true;
      const { support } = await probe();
      if (!support.available) downgraded(support.reason);
      return support.available;
    },
    support: async () => (await probe()).support,
    ensureAvailable: async (details = {}) => {
      if (settings.mode !== 'required') return;
      const { support } = await probe();
      if (!support.available) throw new SandboxUnavailableError({ reason: support.reason ?? 'unknown', setting: name, ...details });
    },
    launcher: async (launchOptions) => {
      if (settings.mode === 'off') return undefined;
      const { support, programs } = await probe();
      if (!support.available || programs === undefined) {
        if (settings.mode === 'auto') {
          downgraded(support.reason);
          return undefined;
        }
        throw new SandboxUnavailableError({
          reason: support.reason ?? 'unknown',
          setting: name,
          ...(launchOptions.toolName === undefined ? {} : { toolName: launchOptions.toolName }),
          ...(launchOptions.planId === undefined ? {} : { planId: launchOptions.planId }),
        });
      }
      return createSandboxLauncher({ ...launchOptions, network: launchOptions.network && settings.network }, programs);
    },
  };
  return Object.freeze(sandbox);
}

/** A plan as {@link sandboxOptionsForPlan} reads it (a `ToolExecutionContext` will do). */
export interface SandboxedPlan {
  readonly policy: PlanPolicy;
  readonly resources: readonly BoundResource[];
}

/**
 * A plan's policy as what its programs may do in the sandbox, through
 * `sandboxWritesForPlan` and `planAllowsNetwork` of `@ca/tool-context` — the
 * functions the runtime also reads a sandboxed tool's capability in a plan
 * with (`capabilityInPlan`), so the kernel and the policy agree:
 * - a read-only plan: nothing writable (`writes: 'none'`);
 * - a plan that requires checkpoints: writes through an overlay, when the
 *   caller turns its changes into undoable ones (`overlay: true`), else
 *   nothing writable — a program's writes must never escape the checkpoint;
 * - any other plan: the write-bound resources, in place.
 *
 * The network is allowed unless the plan denies it: a policy's `network:
 * 'deny'` (the plan-level network switch) is read here, and only here.
 */
export function sandboxOptionsForPlan(
  plan: SandboxedPlan,
  options: { readonly overlay?: boolean } = {},
): Pick<SandboxLaunchOptions, 'resources' | 'writes' | 'network'> {
  const { policy } = plan;
  return { resources: plan.resources, writes: sandboxWritesForPlan(policy, options), network: planAllowsNetwork(policy) };
}
