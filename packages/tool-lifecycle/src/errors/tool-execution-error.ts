import { ToolRuntimeError, hasBrand, type ToolRuntimeErrorOptions } from './tool-runtime-error';

const brand = Symbol.for('ca.error.ToolExecutionError');

/**
 * Wraps a tool's own failure (a thrown value, a rejection or a failed result). The original failure is the `cause`.
 *
 * Code: `TOOL_EXECUTION_FAILED`.
 */
export class ToolExecutionError extends ToolRuntimeError {
  declare readonly code: 'TOOL_EXECUTION_FAILED';

  constructor(options: ToolRuntimeErrorOptions) {
    super('TOOL_EXECUTION_FAILED', options);
    Object.defineProperty(this, brand, { value: true });
    this.name = 'ToolExecutionError';
  }

  /** True for this error from any copy of this package. */
  static override isInstance(value: unknown): value is ToolExecutionError {
    return hasBrand(value, brand);
  }
}
