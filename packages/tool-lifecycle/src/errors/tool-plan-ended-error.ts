import { ToolRuntimeError } from './tool-runtime-error';

/** Options of {@link ToolPlanEndedError}. */
export interface ToolPlanEndedErrorOptions {
  /** The tool asked for, when a tool was. */
  readonly toolName?: string;
  readonly planId: string;
}

/**
 * A tool was executed or activated in a plan that has already ended.
 *
 * Code: `TOOL_PLAN_ENDED`.
 */
export class ToolPlanEndedError extends ToolRuntimeError {
  declare readonly code: 'TOOL_PLAN_ENDED';
  declare readonly planId: string;

  constructor(options: ToolPlanEndedErrorOptions) {
    const { toolName, planId } = options;
    super(
      'TOOL_PLAN_ENDED',
      `Plan '${planId}' has ended, so ${toolName === undefined ? 'it cannot be used again' : `tool '${toolName}' cannot run in it`}. Start a new plan (a new context with a new plan id) for further work.`,
      options,
    );
  }
}
