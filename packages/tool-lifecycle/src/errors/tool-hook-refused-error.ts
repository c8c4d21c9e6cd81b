import { ToolRuntimeError } from './tool-runtime-error';

/** Options of {@link ToolHookRefusedError}. */
export interface ToolHookRefusedErrorOptions {
  readonly hook: string;
  /** `before`: the call was refused; `after`: the output was withheld. */
  readonly stage: 'before' | 'after';
  readonly toolName: string;
  readonly planId: string;
  /** Why, as the hook said it. */
  readonly reason: string;
}

/**
 * A hook of the service refused a call before it ran (`stage: 'before'`,
 * thrown by `execute`), or withheld the output of a call that ran
 * (`stage: 'after'`, a failed result: the tool's changes are recorded).
 * The message carries the hook's reason, for the model.
 *
 * Code: `TOOL_HOOK_REFUSED`.
 */
export class ToolHookRefusedError extends ToolRuntimeError {
  declare readonly code: 'TOOL_HOOK_REFUSED';
  declare readonly toolName: string;
  declare readonly planId: string;
  /** The hook that refused. */
  readonly hook: string;
  readonly stage: 'before' | 'after';
  /** Why, as the hook said it. */
  readonly reason: string;

  constructor(options: ToolHookRefusedErrorOptions) {
    const { hook, stage, toolName, planId, reason } = options;
    const because = reason.trim() === '' ? '' : `: ${reason.trim()}`;
    super(
      'TOOL_HOOK_REFUSED',
      stage === 'before'
        ? `Tool '${toolName}' in plan '${planId}' was refused by hook '${hook}'${because}. The tool did not run. Change the call, or the hook.`
        : `The output of tool '${toolName}' in plan '${planId}' was withheld by hook '${hook}'${because}. The tool ran and its changes are recorded; its output was not given back.`,
      options,
    );
    this.hook = hook;
    this.stage = stage;
    this.reason = reason;
  }
}
