import { causeMessage, describeCaller, ProcessError } from './process-error';

/** Where a {@link ProcessLaunchError} happened. */
export type ProcessLaunchStage = 'prepare' | 'release';

/** Options of {@link ProcessLaunchError}. */
export interface ProcessLaunchErrorOptions {
  /** The launcher's `name`. */
  readonly launcher: string;
  /** `prepare` (before the start: nothing ran) or `release` (after the exit). */
  readonly stage: ProcessLaunchStage;
  /** The program that was asked for. */
  readonly command: string;
  /** What the launcher threw. */
  readonly cause: unknown;
  readonly toolName?: string;
  readonly planId?: string;
}

/**
 * A {@link ProcessLauncher} failed: preparing the launch (nothing was
 * started) or releasing it after the program exited (the program ran; what
 * the launcher was to do afterwards did not happen).
 *
 * Code: `PROCESS_LAUNCH_FAILED`.
 */
export class ProcessLaunchError extends ProcessError {
  declare readonly code: 'PROCESS_LAUNCH_FAILED';
  /** The launcher's `name`. */
  readonly launcher: string;
  /** `prepare` or `release`. */
  readonly stage: ProcessLaunchStage;
  /** The program that was asked for. */
  readonly command: string;

  /** @throws Never. */
  constructor(options: ProcessLaunchErrorOptions) {
    const { launcher, stage, command, cause, toolName, planId } = options;
    const what =
      stage === 'prepare'
        ? `the launcher '${launcher}' could not prepare '${command}', which was not started`
        : `the launcher '${launcher}' failed after '${command}' exited`;
    super('PROCESS_LAUNCH_FAILED', `${describeCaller(toolName, planId)}${what}: ${causeMessage(cause)}. Check the launcher's requirements and settings.`, {
      cause,
      ...(toolName === undefined ? {} : { toolName }),
      ...(planId === undefined ? {} : { planId }),
    });
    this.launcher = launcher;
    this.stage = stage;
    this.command = command;
  }
}
