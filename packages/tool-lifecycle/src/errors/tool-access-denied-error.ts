import { ToolRuntimeError } from './tool-runtime-error';

/**
 * The rule of the plan's policy that refused a tool: `'read-only'`, a
 * read-only plan and a tool that writes; `'network'`, a plan whose policy
 * denies the network and a tool that is `openWorld`.
 */
export type ToolAccessDeniedRule = 'read-only' | 'network';

/** Options of {@link ToolAccessDeniedError}. */
export interface ToolAccessDeniedErrorOptions {
  readonly toolName: string;
  readonly planId: string;
  /** Which rule refused the tool (see {@link ToolAccessDeniedRule}). */
  readonly rule: ToolAccessDeniedRule;
}

const EXPLANATION: Readonly<Record<ToolAccessDeniedRule, (toolName: string, planId: string) => string>> = {
  'read-only': (toolName, planId) =>
    `Tool '${toolName}' writes, but plan '${planId}' is read-only. Run it in a plan whose policy has readOnly: false, or choose a tool that does not write.`,
  network: (toolName, planId) =>
    `Tool '${toolName}' reaches outside the plan (it is openWorld: network, remote services), but plan '${planId}' denies the network. Run it in a plan whose policy has network: 'allow', or choose a tool that is not openWorld.`,
};

/**
 * The plan's policy refuses the tool (a read-only plan and a tool that
 * writes; a plan that denies the network and an open-world tool). Raised
 * before anything of the tool runs.
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
