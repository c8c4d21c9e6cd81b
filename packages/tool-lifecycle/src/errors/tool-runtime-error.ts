import { CaError, type CaErrorOptions } from '@ca/domain';

/** Stable codes of the {@link ToolRuntimeError} hierarchy. */
export type ToolRuntimeErrorCode =
  | 'TOOL_ACCESS_DENIED'
  | 'TOOL_APPROVAL_DENIED'
  | 'TOOL_LIMIT_EXCEEDED'
  | 'TOOL_RULE_INVALID'
  | 'TOOL_CHECKPOINT_REQUIRED'
  | 'TOOL_NOT_ACTIVATED'
  | 'TOOL_ACTIVATION_FAILED'
  | 'TOOL_EXECUTION_FAILED'
  | 'TOOL_DEACTIVATION_FAILED'
  | 'TOOL_NOT_FOUND'
  | 'TOOL_REGISTRATION_FAILED'
  | 'TOOL_PLAN_ENDED'
  | 'TOOL_INVALID_ARGUMENT'
  | 'TOOL_HOOK_FAILED'
  | 'TOOL_HOOK_REFUSED'
  | 'TOOL_DEFINITION_CHANGED'
  | 'TOOL_SEARCH_FAILED'
  | 'TOOL_RESULT_NOT_FOUND'
  | 'TOOL_RESULT_READ_INVALID'
  | 'TOOL_RESULT_STORE_FAILED'
  | 'TOOL_JOURNAL_FAILED'
  | 'TOOL_JOURNAL_MISMATCH'
  | 'TOOL_OUTCOME_UNKNOWN';

/** The tool and plan an error of the hierarchy is about, and its cause. */
export interface ToolRuntimeErrorOptions extends CaErrorOptions {
  readonly toolName?: string;
  readonly planId?: string;
  readonly cause?: unknown;
}

/**
 * Base of every error the runtime raises about a tool in a plan. Each
 * subclass builds its message from its fields. Tell errors apart by `code` or
 * by the static `isInstance` guards (inherited from `CaError`), which work
 * even when two copies of this package are installed.
 */
export abstract class ToolRuntimeError extends CaError {
  declare readonly code: ToolRuntimeErrorCode;

  protected constructor(code: ToolRuntimeErrorCode, message: string, options: ToolRuntimeErrorOptions) {
    super(code, message, options);
  }
}

/** @internal `Tool 'x' in plan 'p'` (or without the plan) for messages. */
export function describeTool(toolName: string | undefined, planId: string | undefined): string {
  const tool = toolName === undefined ? 'A tool' : `Tool '${toolName}'`;
  return planId === undefined ? tool : `${tool} in plan '${planId}'`;
}
