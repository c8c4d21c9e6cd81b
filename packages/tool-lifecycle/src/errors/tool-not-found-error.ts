import { ToolRuntimeError, hasBrand, type ToolRuntimeErrorOptions } from './tool-runtime-error';

const brand = Symbol.for('ca.error.ToolNotFoundError');

/**
 * Raised when no configured source provides a tool of the requested name.
 *
 * Code: `TOOL_NOT_FOUND`.
 */
export class ToolNotFoundError extends ToolRuntimeError {
  declare readonly code: 'TOOL_NOT_FOUND';

  constructor(options: ToolRuntimeErrorOptions) {
    super('TOOL_NOT_FOUND', options);
    Object.defineProperty(this, brand, { value: true });
    this.name = 'ToolNotFoundError';
  }

  /** True for this error from any copy of this package. */
  static override isInstance(value: unknown): value is ToolNotFoundError {
    return hasBrand(value, brand);
  }
}
