/** Stable codes of the {@link ToolRuntimeError} hierarchy. */
export type ToolRuntimeErrorCode =
  | 'TOOL_ACCESS_DENIED'
  | 'TOOL_CHECKPOINT_REQUIRED'
  | 'TOOL_NOT_ACTIVATED'
  | 'TOOL_ACTIVATION_FAILED'
  | 'TOOL_EXECUTION_FAILED'
  | 'TOOL_DEACTIVATION_FAILED'
  | 'TOOL_NOT_FOUND'
  | 'TOOL_REGISTRATION_FAILED'
  | 'TOOL_PLAN_ENDED'
  | 'TOOL_INVALID_ARGUMENT';

/** Options shared by every error of the hierarchy. */
export interface ToolRuntimeErrorOptions {
  readonly message: string;
  readonly toolName?: string;
  readonly planId?: string;
  readonly cause?: unknown;
}

const brand = Symbol.for('ca.error.ToolRuntimeError');

/**
 * Base of every error the runtime raises about a tool in a plan. Tell errors
 * apart by `code` or by the static `isInstance` guards, which work even when
 * two copies of this package are installed (they check a `Symbol.for` brand,
 * not only the prototype chain).
 */
export class ToolRuntimeError extends Error {
  readonly code: ToolRuntimeErrorCode;
  readonly toolName?: string;
  readonly planId?: string;
  declare readonly cause?: unknown;

  constructor(code: ToolRuntimeErrorCode, options: ToolRuntimeErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ToolRuntimeError';
    this.code = code;
    Object.defineProperty(this, brand, { value: true });
    if (options.toolName !== undefined) this.toolName = options.toolName;
    if (options.planId !== undefined) this.planId = options.planId;
  }

  /** True for any error of the hierarchy, from any copy of this package. */
  static isInstance(value: unknown): value is ToolRuntimeError {
    return hasBrand(value, brand);
  }
}

/** @internal checks a `Symbol.for` brand on an object. */
export function hasBrand(value: unknown, symbol: symbol): boolean {
  try {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[symbol] === true;
  } catch {
    // A hostile value (a Proxy whose traps throw) is not one of ours.
    return false;
  }
}

/** @internal `'tool' in plan 'p'` for messages. */
export function describeTarget(toolName?: string, planId?: string): string {
  const tool = toolName === undefined ? 'tool' : `tool '${toolName}'`;
  return planId === undefined ? tool : `${tool} in plan '${planId}'`;
}
