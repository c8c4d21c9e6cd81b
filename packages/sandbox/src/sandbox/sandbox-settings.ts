import { isAbsolute } from 'node:path';
import { SandboxSettingsError } from './sandbox-settings-error';

/**
 * Whether programs run in the kernel sandbox:
 * - `'required'`: always; where it does not work (not Linux, no `bwrap`, user
 *   namespaces not allowed) the tool's activation fails with
 *   `SandboxUnavailableError`, and nothing runs unconfined;
 * - `'auto'`: where it works (probed once per process), otherwise as `'off'`;
 * - `'off'`: never; programs run with the runtime's rights.
 */
export type SandboxMode = 'required' | 'auto' | 'off';

/** The sandbox setting in full. */
export interface SandboxSettings {
  /** See {@link SandboxMode}. */
  readonly mode: SandboxMode;
  /**
   * `false`: programs never reach the network, whatever the plan allows.
   * Default `true`: the network is as the plan allows it.
   */
  readonly network?: boolean;
  /** The `bwrap` program: an absolute path. Default `bwrap` looked up in the folders of the runtime's `PATH`, then in `/usr/local/sbin`, `/usr/local/bin`, `/usr/sbin`, `/usr/bin`, `/sbin` and `/bin`. */
  readonly bwrapPath?: string;
}

/** A mode alone, or the settings in full. */
export type SandboxSetting = SandboxMode | SandboxSettings;

/** A sandbox setting with every default filled in. */
export interface ResolvedSandboxSettings {
  readonly mode: SandboxMode;
  readonly network: boolean;
  readonly bwrapPath: string | undefined;
}

const MODES: readonly SandboxMode[] = ['required', 'auto', 'off'];
const KEYS = new Set(['mode', 'network', 'bwrapPath']);

/**
 * Checks a sandbox setting and fills in the defaults: a mode (`'auto'`), or
 * `{ mode, network?, bwrapPath? }`. `undefined` takes `defaultMode`.
 *
 * @throws {SandboxSettingsError} `SANDBOX_INVALID_SETTINGS` naming the part
 *   that is wrong (`setting` is the name used in the message, default `'sandbox'`).
 */
export function resolveSandboxSettings(
  value: unknown,
  options: { readonly defaultMode?: SandboxMode; readonly setting?: string } = {},
): ResolvedSandboxSettings {
  const setting = options.setting ?? 'sandbox';
  const defaultMode = options.defaultMode ?? 'auto';
  if (value === undefined) return Object.freeze({ mode: defaultMode, network: true, bwrapPath: undefined });
  if (typeof value === 'string') {
    if (!(MODES as readonly string[]).includes(value)) throw new SandboxSettingsError({ setting, expected: "'required', 'auto' or 'off'", received: value });
    return Object.freeze({ mode: value as SandboxMode, network: true, bwrapPath: undefined });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SandboxSettingsError({
      setting,
      expected: "'required', 'auto', 'off' or an object such as { mode: 'required', network: false }",
      received: value,
    });
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!KEYS.has(key))
      throw new SandboxSettingsError({ setting: `${setting}.${key}`, expected: 'one of mode, network, bwrapPath (check the spelling)', received: record[key] });
  }
  const mode = record['mode'];
  if (!(MODES as readonly unknown[]).includes(mode))
    throw new SandboxSettingsError({ setting: `${setting}.mode`, expected: "'required', 'auto' or 'off'", received: mode });
  const network = record['network'];
  if (network !== undefined && typeof network !== 'boolean')
    throw new SandboxSettingsError({ setting: `${setting}.network`, expected: 'true or false', received: network });
  const bwrapPath = record['bwrapPath'];
  if (bwrapPath !== undefined && (typeof bwrapPath !== 'string' || !isAbsolute(bwrapPath) || bwrapPath.includes('\0'))) {
    throw new SandboxSettingsError({ setting: `${setting}.bwrapPath`, expected: 'an absolute path to the bwrap program', received: bwrapPath });
  }
  return Object.freeze({ mode: mode as SandboxMode, network: network !== false, bwrapPath: bwrapPath as string | undefined });
}
