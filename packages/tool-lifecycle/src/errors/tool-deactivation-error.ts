import { ToolRuntimeError, hasBrand, type ToolRuntimeErrorOptions } from './tool-runtime-error';

const brand = Symbol.for('ca.error.ToolDeactivationError');

/**
 * Wraps a tool's failure to deactivate. Never thrown to the caller of `endPlan`: logged and reported in its return value.
 *
 * Code: `TOOL_DEACTIVATION_FAILED`.
 */
export class ToolDeactivationError extends ToolRuntimeError {
  declare readonly code: 'TOOL_DEACTIVATION_FAILED';

  constructor(options: ToolRuntimeErrorOptions) {
    super('TOOL_DEACTIVATION_FAILED', options);
    Object.defineProperty(this, brand, { value: true });
    this.name = 'ToolDeactivationError';
  }

  /** True for this error from any copy of this package. */
  static override isInstance(value: unknown): value is ToolDeactivationError {
    return hasBrand(value, brand);
  }
}
