import { ToolRuntimeError, hasBrand, type ToolRuntimeErrorOptions } from './tool-runtime-error';

const brand = Symbol.for('ca.error.ToolCheckpointRequiredError');

/**
 * Raised when a plan that requires checkpoints is asked to run a tool that is not checkpointable. Nothing of the tool runs.
 *
 * Code: `TOOL_CHECKPOINT_REQUIRED`.
 */
export class ToolCheckpointRequiredError extends ToolRuntimeError {
  declare readonly code: 'TOOL_CHECKPOINT_REQUIRED';

  constructor(options: ToolRuntimeErrorOptions) {
    super('TOOL_CHECKPOINT_REQUIRED', options);
    Object.defineProperty(this, brand, { value: true });
    this.name = 'ToolCheckpointRequiredError';
  }

  /** True for this error from any copy of this package. */
  static override isInstance(value: unknown): value is ToolCheckpointRequiredError {
    return hasBrand(value, brand);
  }
}
