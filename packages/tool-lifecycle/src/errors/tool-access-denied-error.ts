import { ToolRuntimeError, hasBrand, type ToolRuntimeErrorOptions } from './tool-runtime-error';

const brand = Symbol.for('ca.error.ToolAccessDeniedError');

/**
 * Raised when a read-only plan is asked to run a tool that writes. Nothing of the tool runs.
 *
 * Code: `TOOL_ACCESS_DENIED`.
 */
export class ToolAccessDeniedError extends ToolRuntimeError {
  declare readonly code: 'TOOL_ACCESS_DENIED';

  constructor(options: ToolRuntimeErrorOptions) {
    super('TOOL_ACCESS_DENIED', options);
    Object.defineProperty(this, brand, { value: true });
    this.name = 'ToolAccessDeniedError';
  }

  /** True for this error from any copy of this package. */
  static override isInstance(value: unknown): value is ToolAccessDeniedError {
    return hasBrand(value, brand);
  }
}
