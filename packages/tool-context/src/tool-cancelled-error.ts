import { asClause, CaError } from '@ca/domain';

/** Options of {@link ToolCancelledError}; every field is optional. */
export interface ToolCancelledErrorOptions {
  /** Why the work was cancelled, e.g. `'cancelled by user'` or `'timed out after 50 ms'`. Default `'cancelled'`. */
  readonly reason?: string;
  /** The tool that was running or about to run. */
  readonly toolName?: string;
  /** The plan the tool belongs to. */
  readonly planId?: string;
  /** Replaces the generated message. */
  readonly message?: string;
  /** The underlying error, per ES2022 `cause`. */
  readonly cause?: unknown;
}

/**
 * Work was cancelled: the plan's {@link CancellationToken} was cancelled
 * (by a caller, an outside `AbortSignal` or a deadline) before or while a
 * tool ran.
 *
 * Not a `ToolRuntimeError` (it extends `CaError` directly), because
 * cancellation is an outcome rather than a failure of the tool. It is also the
 * `reason` of every {@link CancellationToken.signal}, so code that passes the
 * signal to `fetch` gets this error back.
 *
 * Tell it apart with {@link ToolCancelledError.isInstance} or `code`, which
 * keep working when two copies of this package are installed.
 */
export class ToolCancelledError extends CaError {
  declare readonly code: 'TOOL_CANCELLED';
  /** Why the work was cancelled. */
  readonly reason: string;

  /**
   * @param options - Reason, tool, plan, message and cause; all optional.
   * @throws Never.
   */
  constructor(options: ToolCancelledErrorOptions = {}) {
    const reason = typeof options.reason === 'string' && options.reason.length > 0 ? options.reason : 'cancelled';
    super('TOOL_CANCELLED', options.message ?? describeCancellation(reason, options.toolName, options.planId), options);
    this.reason = reason;
  }
}

function describeCancellation(reason: string, toolName: string | undefined, planId: string | undefined): string {
  const subject = toolName === undefined ? 'Tool execution' : `Tool "${toolName}"`;
  const where = planId === undefined ? '' : ` in plan "${planId}"`;
  // The runtime's deadlines read "timed out after N ms" (one execution; the
  // plan goes on) and "plan timed out after N ms" (the whole plan).
  const hint = reason.startsWith('plan timed out')
    ? "The plan's deadline passed; raise the plan's timeout if it needs longer."
    : /\btimed out\b/.test(reason)
      ? 'Raise the timeout if the tool needs longer.'
      : "The plan's cancellation token was cancelled; start a new plan (or a new token) to run it again.";
  return `${subject}${where} was cancelled: ${asClause(reason)}. ${hint}`;
}
