import { asClause, messageOf } from '@ca/domain';
import { ToolRuntimeError } from './tool-runtime-error';

/** Options of {@link ToolDeactivationError}. */
export interface ToolDeactivationErrorOptions {
  readonly toolName: string;
  readonly planId: string;
  /** What `deactivate` threw (or the deadline that passed). */
  readonly cause: unknown;
}

/**
 * Wraps a tool's failure to deactivate. Never thrown to the caller of
 * `endPlan`: logged and reported in its return value.
 *
 * Code: `TOOL_DEACTIVATION_FAILED`.
 */
export class ToolDeactivationError extends ToolRuntimeError {
  declare readonly code: 'TOOL_DEACTIVATION_FAILED';
  declare readonly toolName: string;
  declare readonly planId: string;

  constructor(options: ToolDeactivationErrorOptions) {
    const { toolName, planId, cause } = options;
    super(
      'TOOL_DEACTIVATION_FAILED',
      `Tool '${toolName}' failed to deactivate at the end of plan '${planId}': ${asClause(messageOf(cause))}. The other tools were still deactivated; check what the tool holds (sessions, processes) and release it by hand if needed.`,
      options,
    );
  }
}
