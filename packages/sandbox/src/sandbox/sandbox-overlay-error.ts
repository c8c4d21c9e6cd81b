import { callerOptions, describeSandboxCaller, SandboxError } from './sandbox-error';

/** Where a {@link SandboxOverlayError} happened. */
export type SandboxOverlayStage = 'mount' | 'read' | 'apply';

/** Options of {@link SandboxOverlayError}. */
export interface SandboxOverlayErrorOptions {
  /** `mount`: the overlay could not be set up; `read`: its upper layer could not be read; `apply`: a change could not be made to the real tree. */
  readonly stage: SandboxOverlayStage;
  /** What went wrong. */
  readonly problem: string;
  /** The real path concerned, when there is one. */
  readonly path?: string;
  /** At `apply`: how many changes were applied (and reported) before the failure. */
  readonly appliedCount?: number;
  readonly toolName?: string;
  readonly planId?: string;
  readonly cause?: unknown;
}

/**
 * The overlay of a checkpoint plan failed. At `mount` and `read` nothing was
 * applied to the real tree; at `apply`, `appliedCount` changes were applied
 * and reported with undo data, the rest were not.
 *
 * Code: `SANDBOX_OVERLAY_FAILED`.
 */
export class SandboxOverlayError extends SandboxError {
  declare readonly code: 'SANDBOX_OVERLAY_FAILED';
  /** Where it failed. */
  readonly stage: SandboxOverlayStage;
  /** The real path concerned, when there is one. */
  readonly path: string | undefined;
  /** At `apply`: how many changes were applied before the failure. */
  readonly appliedCount: number;

  /** @throws Never. */
  constructor(options: SandboxOverlayErrorOptions) {
    const { stage, problem, path, appliedCount = 0, toolName, planId, cause } = options;
    const what =
      stage === 'mount'
        ? 'the overlay of the writable resources could not be mounted, so the program did not run on it'
        : stage === 'read'
          ? 'the overlay the program wrote to could not be read back; nothing was applied'
          : `a change the program made could not be applied${path === undefined ? '' : ` to "${path}"`} (${appliedCount === 0 ? 'nothing was applied' : `${appliedCount} other change(s) were applied and recorded, with undo data; the rest were not`})`;
    const advice =
      stage === 'apply'
        ? 'Roll back to the checkpoint, or fix the cause and run the command again.'
        : 'Check that the temporary folder is on a file system that supports overlays and user extended attributes (ext4, xfs, tmpfs), or run the plan without checkpoints.';
    super('SANDBOX_OVERLAY_FAILED', `${describeSandboxCaller(toolName, planId)}${what}: ${withoutFinalStop(problem)}. ${advice}`, {
      ...callerOptions(toolName, planId),
      ...(cause === undefined ? {} : { cause }),
    });
    this.stage = stage;
    this.path = path;
    this.appliedCount = appliedCount;
  }
}

function withoutFinalStop(text: string): string {
  return text.trim().replace(/\.+$/, '');
}
