import { callerOptions, describeSandboxCaller, SandboxError } from './sandbox-error';

/** The command that installs bubblewrap on Debian and Ubuntu, named in every {@link SandboxUnavailableError}. */
export const SANDBOX_INSTALL_COMMAND = 'apt-get install bubblewrap';

/** Options of {@link SandboxUnavailableError}. */
export interface SandboxUnavailableErrorOptions {
  /** Why the sandbox does not work here, as the probe found it. */
  readonly reason: string;
  /** Where `sandbox: 'required'` was set, for the message (`'command.sandbox'`, `"MCP server 'files'"`). */
  readonly setting?: string;
  readonly toolName?: string;
  readonly planId?: string;
  readonly cause?: unknown;
}

/**
 * The settings require the sandbox (`sandbox: 'required'`) and it does not
 * work on this machine: not Linux, `bwrap` missing, user namespaces not
 * allowed, or an overlay that cannot be mounted. Nothing was started.
 *
 * Code: `SANDBOX_UNAVAILABLE`.
 */
export class SandboxUnavailableError extends SandboxError {
  declare readonly code: 'SANDBOX_UNAVAILABLE';
  /** Why the sandbox does not work here. */
  readonly reason: string;

  /** @throws Never. */
  constructor(options: SandboxUnavailableErrorOptions) {
    const { reason, setting, toolName, planId, cause } = options;
    super(
      'SANDBOX_UNAVAILABLE',
      `${describeSandboxCaller(toolName, planId)}the sandbox is required${setting === undefined ? '' : ` (${setting})`} but does not work on this machine: ${reason.trim().replace(/\.+$/, '')}. ` +
        `Install bubblewrap (${SANDBOX_INSTALL_COMMAND}) on Linux with unprivileged user namespaces allowed, or set the sandbox to 'auto' or 'off'.`,
      { ...callerOptions(toolName, planId), ...(cause === undefined ? {} : { cause }) },
    );
    this.reason = reason;
  }
}
