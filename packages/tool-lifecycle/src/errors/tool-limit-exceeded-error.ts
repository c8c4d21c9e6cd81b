import { ToolRuntimeError } from './tool-runtime-error';

/** Which limit a call ran into: the most calls at once, or the most calls per interval. */
export type ToolLimitKind = 'concurrency' | 'rate';

/** Options of {@link ToolLimitExceededError}. */
export interface ToolLimitExceededErrorOptions {
  readonly toolName: string;
  readonly planId: string;
  /** The limit that was reached. */
  readonly limit: ToolLimitKind;
  /** Whose limit: the plan's (`perPlan`) or the runtime's (`perRuntime`). */
  readonly scope: 'plan' | 'runtime';
  /** The limit's value, for the message: `3 calls at once`, `10 calls per 1000 ms`. */
  readonly detail: string;
  /** How long the call waited before giving up, in ms; absent when it did not wait (`onLimit: 'fail'`). */
  readonly waitedMs?: number;
}

/**
 * A call was over a limit of its tool (`calls[].perPlan` / `perRuntime` of the
 * runtime options) and the settings say not to wait (`onLimit: 'fail'`), or
 * it waited `maxWaitMs` without getting a turn. The tool did not run.
 *
 * Code: `TOOL_LIMIT_EXCEEDED`.
 */
export class ToolLimitExceededError extends ToolRuntimeError {
  declare readonly code: 'TOOL_LIMIT_EXCEEDED';
  declare readonly toolName: string;
  declare readonly planId: string;
  /** The limit that was reached. */
  readonly limit: ToolLimitKind;
  /** Whose limit it is. */
  readonly scope: 'plan' | 'runtime';

  constructor(options: ToolLimitExceededErrorOptions) {
    const { toolName, planId, limit, scope, detail, waitedMs } = options;
    const whose = scope === 'plan' ? `plan '${planId}'` : 'the runtime';
    const what = limit === 'concurrency' ? `the limit of ${detail} for ${whose}` : `the rate limit of ${detail} for ${whose}`;
    const outcome =
      waitedMs === undefined ? 'and the settings say not to wait (onLimit: fail)' : `and no turn came within ${Math.round(waitedMs)} ms (maxWaitMs)`;
    super(
      'TOOL_LIMIT_EXCEEDED',
      `Tool '${toolName}' in plan '${planId}' was not called: it is at ${what}, ${outcome}. Try again later, or raise the limit in the runtime's calls settings.`,
      options,
    );
    this.limit = limit;
    this.scope = scope;
  }
}
