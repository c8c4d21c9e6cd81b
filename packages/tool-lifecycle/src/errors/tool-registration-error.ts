import { ToolRuntimeError, hasBrand, type ToolRuntimeErrorOptions } from './tool-runtime-error';

const brand = Symbol.for('ca.error.ToolRegistrationError');

/**
 * Raised at discovery or registration when a tool cannot be offered: a duplicate name across sources, an invalid descriptor, a schema that cannot be compiled.
 *
 * Code: `TOOL_REGISTRATION_FAILED`.
 */
export class ToolRegistrationError extends ToolRuntimeError {
  declare readonly code: 'TOOL_REGISTRATION_FAILED';

  constructor(options: ToolRuntimeErrorOptions) {
    super('TOOL_REGISTRATION_FAILED', options);
    Object.defineProperty(this, brand, { value: true });
    this.name = 'ToolRegistrationError';
  }

  /** True for this error from any copy of this package. */
  static override isInstance(value: unknown): value is ToolRegistrationError {
    return hasBrand(value, brand);
  }
}
