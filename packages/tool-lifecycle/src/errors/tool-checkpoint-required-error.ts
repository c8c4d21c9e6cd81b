import { ToolRuntimeError } from './tool-runtime-error';

/** Options of {@link ToolCheckpointRequiredError}. */
export interface ToolCheckpointRequiredErrorOptions {
  readonly toolName: string;
  readonly planId: string;
}

/**
 * A plan that requires checkpoints was asked to run a tool that is not
 * checkpointable. Raised before anything of the tool runs.
 *
 * Code: `TOOL_CHECKPOINT_REQUIRED`.
 */
export class ToolCheckpointRequiredError extends ToolRuntimeError {
  declare readonly code: 'TOOL_CHECKPOINT_REQUIRED';
  declare readonly toolName: string;
  declare readonly planId: string;

  constructor(options: ToolCheckpointRequiredErrorOptions) {
    const { toolName, planId } = options;
    super(
      'TOOL_CHECKPOINT_REQUIRED',
      `Tool '${toolName}' is not checkpointable, but plan '${planId}' requires checkpoints. Run it in a plan whose policy has requireCheckpoint: false, or choose a tool that records undoable changes.`,
      options,
    );
  }
}
