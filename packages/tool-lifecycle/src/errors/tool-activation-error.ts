import { asClause, messageOf } from '@ca/domain';
import { ToolRuntimeError } from './tool-runtime-error';

/** Options of {@link ToolActivationError}. */
export interface ToolActivationErrorOptions {
  readonly toolName: string;
  readonly planId: string;
  /** What `activate` threw (or the deadline that passed). */
  readonly cause: unknown;
}

/**
 * A tool's `activate` failed or did not finish in time. The activation is not
 * recorded: a later call may try again. The original failure is the `cause`.
 *
 * Code: `TOOL_ACTIVATION_FAILED`.
 */
export class ToolActivationError extends ToolRuntimeError {
  declare readonly code: 'TOOL_ACTIVATION_FAILED';
  declare readonly toolName: string;
  declare readonly planId: string;

  constructor(options: ToolActivationErrorOptions) {
    const { toolName, planId, cause } = options;
    super(
      'TOOL_ACTIVATION_FAILED',
      `Tool '${toolName}' could not be activated in plan '${planId}': ${asClause(messageOf(cause))}. Fix the cause and execute it again; the activation was not kept.`,
      options,
    );
  }
}
