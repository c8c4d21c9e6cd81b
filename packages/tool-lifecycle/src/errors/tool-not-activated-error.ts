import { ToolRuntimeError } from './tool-runtime-error';

/** Options of {@link ToolNotActivatedError}. */
export interface ToolNotActivatedErrorOptions {
  readonly toolName: string;
  readonly planId: string;
}

/**
 * A tool was executed in a plan where it is not active: the runtime does not
 * auto-activate (`autoActivate: false`), or a tool instance was called
 * directly without `activate`.
 *
 * Code: `TOOL_NOT_ACTIVATED`.
 */
export class ToolNotActivatedError extends ToolRuntimeError {
  declare readonly code: 'TOOL_NOT_ACTIVATED';
  declare readonly toolName: string;
  declare readonly planId: string;

  constructor(options: ToolNotActivatedErrorOptions) {
    const { toolName, planId } = options;
    super(
      'TOOL_NOT_ACTIVATED',
      `Tool '${toolName}' is not active in plan '${planId}'. Call runtime.activate('${toolName}', ctx) first, or use a runtime created with autoActivate: true (the default), whose execute activates it.`,
      options,
    );
  }
}
