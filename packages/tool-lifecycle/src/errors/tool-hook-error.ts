import { messageOf } from '@ca/domain';
import type { ToolHookStage } from '@ca/tool-context';
import { ToolRuntimeError } from './tool-runtime-error';

/**
 * How a hook failed:
 * - `'threw'`: the hook threw, or its promise rejected (the cause is what it threw);
 * - `'timed-out'`: its promise did not settle within its `timeoutMs`;
 * - `'invalid-decision'`: it answered something that is not a decision of its stage;
 * - `'invalid-input'`: its `rewrite` gave an input that does not match the tool's input schema;
 * - `'invalid-output'`: its `replace` or `redact` gave an output that does not match the tool's output schema.
 */
export type ToolHookFailure = 'threw' | 'timed-out' | 'invalid-decision' | 'invalid-input' | 'invalid-output';

/** Options of {@link ToolHookError}. */
export interface ToolHookErrorOptions {
  readonly hook: string;
  readonly stage: ToolHookStage;
  readonly failure: ToolHookFailure;
  readonly toolName: string;
  readonly planId: string;
  /** What is wrong with the decision, for `invalid-decision`. */
  readonly detail?: string;
  /** For `timed-out`: the hook's deadline, in ms. */
  readonly timeoutMs?: number;
  /** What the hook threw, or the schema error of its rewrite or replacement. */
  readonly cause?: unknown;
}

const WHEN: Readonly<Record<ToolHookStage, string>> = {
  before: 'before the call; the tool did not run',
  after: 'after the call; the tool ran (its changes are recorded) but its output was not given back',
  error: 'on the failure of the call',
};

function explain(options: ToolHookErrorOptions): string {
  const { hook, stage, failure, toolName, planId, detail, timeoutMs, cause } = options;
  const subject = `Hook '${hook}' failed ${WHEN[stage]} (tool '${toolName}', plan '${planId}')`;
  switch (failure) {
    case 'timed-out':
      return `${subject}: it did not answer within ${timeoutMs ?? '?'} ms. Hooks fail closed: make the hook answer sooner, or raise its timeoutMs.`;
    case 'invalid-decision':
      return `${subject}: it answered ${detail ?? 'something that is not a decision'}. Hooks fail closed: return nothing to let the call go on, or a decision of its stage (see ToolHook).`;
    case 'invalid-input':
      return `${subject}: the input it rewrote does not match the tool's input schema (${messageOf(cause)}). Hooks fail closed: rewrite to an input the schema accepts.`;
    case 'invalid-output':
      return `${subject}: the output it gave does not match the tool's output schema (${messageOf(cause)}). Hooks fail closed: replace with an output the schema accepts, or withhold it.`;
    default:
      return `${subject}: ${messageOf(cause)}. Hooks fail closed: fix the hook (the cause has its error).`;
  }
}

/**
 * A hook around a call failed — it threw, did not answer in time, answered
 * something that is not a decision, or rewrote the input or replaced the
 * output with one the tool's schema refuses — so the call failed closed:
 * nothing the hook did not vouch for reached the caller. Names the hook, the
 * stage, the tool and the plan.
 *
 * Code: `TOOL_HOOK_FAILED`.
 */
export class ToolHookError extends ToolRuntimeError {
  declare readonly code: 'TOOL_HOOK_FAILED';
  declare readonly toolName: string;
  declare readonly planId: string;
  /** The hook that failed. */
  readonly hook: string;
  /** Where it ran. */
  readonly stage: ToolHookStage;
  /** How it failed. */
  readonly failure: ToolHookFailure;

  constructor(options: ToolHookErrorOptions) {
    super('TOOL_HOOK_FAILED', explain(options), options);
    this.hook = options.hook;
    this.stage = options.stage;
    this.failure = options.failure;
  }
}
