import { describeValue } from '@ca/domain';
import { SandboxError } from './sandbox-error';

/** Options of {@link SandboxSettingsError}. */
export interface SandboxSettingsErrorOptions {
  /** The setting, as the caller wrote it: `'sandbox'`, `'sandbox.network'`. */
  readonly setting: string;
  /** What it must be. */
  readonly expected: string;
  /** What was given (described, never printed whole). */
  readonly received: unknown;
}

/**
 * A sandbox setting has the wrong shape. Adapters catch it and report it as
 * their own settings error, with this one as the cause.
 *
 * Code: `SANDBOX_INVALID_SETTINGS`.
 */
export class SandboxSettingsError extends SandboxError {
  declare readonly code: 'SANDBOX_INVALID_SETTINGS';
  /** The setting concerned. */
  readonly setting: string;

  /** @throws Never. */
  constructor(options: SandboxSettingsErrorOptions) {
    const { setting, expected, received } = options;
    super('SANDBOX_INVALID_SETTINGS', `The sandbox setting ${setting} must be ${expected}; got ${describeValue(received)}.`, {});
    this.setting = setting;
  }
}
