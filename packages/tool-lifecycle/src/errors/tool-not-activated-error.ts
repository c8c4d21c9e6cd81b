import { ToolRuntimeError, hasBrand, type ToolRuntimeErrorOptions } from './tool-runtime-error';

const brand = Symbol.for('ca.error.ToolNotActivatedError');

/**
 * Raised when a tool is executed in a plan where it was not activated and the runtime does not auto-activate (`autoActivate: false`).
 *
 * Code: `TOOL_NOT_ACTIVATED`.
 */
export class ToolNotActivatedError extends ToolRuntimeError {
  declare readonly code: 'TOOL_NOT_ACTIVATED';

  constructor(options: ToolRuntimeErrorOptions) {
    super('TOOL_NOT_ACTIVATED', options);
    Object.defineProperty(this, brand, { value: true });
    this.name = 'ToolNotActivatedError';
  }

  /** True for this error from any copy of this package. */
  static override isInstance(value: unknown): value is ToolNotActivatedError {
    return hasBrand(value, brand);
  }
}
