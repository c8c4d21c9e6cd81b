import { ToolRuntimeError, hasBrand, type ToolRuntimeErrorOptions } from './tool-runtime-error';

const brand = Symbol.for('ca.error.ToolActivationError');

/**
 * Raised when a tool's `activate` fails. The activation is not recorded: a later call may try again. The original failure is the `cause`.
 *
 * Code: `TOOL_ACTIVATION_FAILED`.
 */
export class ToolActivationError extends ToolRuntimeError {
  declare readonly code: 'TOOL_ACTIVATION_FAILED';

  constructor(options: ToolRuntimeErrorOptions) {
    super('TOOL_ACTIVATION_FAILED', options);
    Object.defineProperty(this, brand, { value: true });
    this.name = 'ToolActivationError';
  }

  /** True for this error from any copy of this package. */
  static override isInstance(value: unknown): value is ToolActivationError {
    return hasBrand(value, brand);
  }
}
