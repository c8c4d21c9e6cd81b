import { ToolRuntimeError, hasBrand, type ToolRuntimeErrorOptions } from './tool-runtime-error';

const brand = Symbol.for('ca.error.ToolInvalidArgumentError');

/**
 * Raised when a public entry point of the runtime is called with an argument of the wrong shape (not a tool's input: that gives a failed result).
 *
 * Code: `TOOL_INVALID_ARGUMENT`.
 */
export class ToolInvalidArgumentError extends ToolRuntimeError {
  declare readonly code: 'TOOL_INVALID_ARGUMENT';

  constructor(options: ToolRuntimeErrorOptions) {
    super('TOOL_INVALID_ARGUMENT', options);
    Object.defineProperty(this, brand, { value: true });
    this.name = 'ToolInvalidArgumentError';
  }

  /** True for this error from any copy of this package. */
  static override isInstance(value: unknown): value is ToolInvalidArgumentError {
    return hasBrand(value, brand);
  }
}
