import { ToolRuntimeError, hasBrand, type ToolRuntimeErrorOptions } from './tool-runtime-error';

const brand = Symbol.for('ca.error.ToolPlanEndedError');

/**
 * Raised when a tool is executed or activated in a plan that has already ended.
 *
 * Code: `TOOL_PLAN_ENDED`.
 */
export class ToolPlanEndedError extends ToolRuntimeError {
  declare readonly code: 'TOOL_PLAN_ENDED';

  constructor(options: ToolRuntimeErrorOptions) {
    super('TOOL_PLAN_ENDED', options);
    Object.defineProperty(this, brand, { value: true });
    this.name = 'ToolPlanEndedError';
  }

  /** True for this error from any copy of this package. */
  static override isInstance(value: unknown): value is ToolPlanEndedError {
    return hasBrand(value, brand);
  }
}
