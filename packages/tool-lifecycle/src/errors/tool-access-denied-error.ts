import { ToolRuntimeError } from './tool-runtime-error';

/** The rule of the plan's policy that refused a tool. */
export type ToolAccessDeniedRule = 'read-only';

/** Options of {@link ToolAccessDeniedError}. */
export interface ToolAccessDeniedErrorOptions {
  readonly toolName: string;
  readonly planId: string;
  /** Which rule refused the tool: `'read-only'`, a read-only plan and a tool that writes. */
  readonly rule: ToolAccessDeniedRule;
}

const EXPLANATION: Readonly<Record<ToolAccessDeniedRule, (toolName: string, planId: string) => string>> = {
  'read-only': (toolName, planId) =>
    `Tool '${toolName}' writes, but plan '${planId}' is read-only. Run it in a plan whose policy has readOnly: false, or choose a tool that does not write.`,
};

/**
 * The plan's policy refuses the tool (a read-only plan and a tool that
 * writes). Raised before anything of the tool runs.
 *
 * Code: `TOOL_ACCESS_DENIED`.
 */
export class ToolAccessDeniedError extends ToolRuntimeError {
  declare readonly code: 'TOOL_ACCESS_DENIED';
  declare readonly toolName: string;
  declare readonly planId: string;
  /** The rule that refused the tool. */
  readonly rule: ToolAccessDeniedRule;

  constructor(options: ToolAccessDeniedErrorOptions) {
    super('TOOL_ACCESS_DENIED', EXPLANATION[options.rule](options.toolName, options.planId), options);
    this.rule = options.rule;
  }
}
