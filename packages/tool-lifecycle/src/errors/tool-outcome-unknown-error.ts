import { ToolRuntimeError } from './tool-runtime-error';

/** Options of {@link ToolOutcomeUnknownError}. */
export interface ToolOutcomeUnknownErrorOptions {
  readonly toolName: string;
  readonly planId: string;
  /** The caller's step id of the call. */
  readonly step: string;
  /** The call's idempotency key, which the other side may know the call by. */
  readonly idempotencyKey: string;
  /** Where the call was in flight when its host stopped, as the journal recorded it. */
  readonly host?: string;
  /** Who decided not to run it again (a person's name, `rule:<name>`, `runtime` when nobody could be asked). */
  readonly decidedBy: string;
  /** Why, as they said. */
  readonly reason?: string;
  readonly cause?: unknown;
}

/**
 * A call was in flight when its plan's host stopped, the tool may have done
 * its effect, and it is not safe to run it again without asking (it is not
 * idempotent and its reconciliation, if any, could not tell): a person was
 * asked and declined to run it again, or nobody could be asked. The call is
 * not made again; check on the other side (by its idempotency key) whether it
 * happened.
 *
 * Code: `TOOL_OUTCOME_UNKNOWN`.
 */
export class ToolOutcomeUnknownError extends ToolRuntimeError {
  declare readonly code: 'TOOL_OUTCOME_UNKNOWN';
  declare readonly toolName: string;
  declare readonly planId: string;
  readonly step: string;
  readonly idempotencyKey: string;
  readonly host: string | undefined;
  readonly decidedBy: string;
  readonly reason: string | undefined;

  constructor(options: ToolOutcomeUnknownErrorOptions) {
    const { toolName, planId, step, idempotencyKey, host, decidedBy, reason } = options;
    super(
      'TOOL_OUTCOME_UNKNOWN',
      `Tool '${toolName}' in plan '${planId}', step '${step}': the call was in flight${host === undefined ? '' : ` on ${host}`} when its host stopped, and its outcome is unknown; it was not run again (${decidedBy === 'runtime' ? 'nobody could be asked' : `declined by ${decidedBy}`}${reason === undefined ? '' : `: ${reason}`}). Check on the other side whether it happened — it was made with idempotency key ${idempotencyKey}.`,
      options,
    );
    this.step = step;
    this.idempotencyKey = idempotencyKey;
    this.host = host;
    this.decidedBy = decidedBy;
    this.reason = reason;
  }
}
