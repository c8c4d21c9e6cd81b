import { CaError } from '@ca/domain';

/** Stable codes of {@link DurablePlanError}. */
export type DurablePlanErrorCode =
  | 'DURABLE_PLAN_INVALID_ARGUMENT'
  | 'DURABLE_PLAN_UNKNOWN'
  | 'DURABLE_PLAN_NOT_FOUND'
  | 'DURABLE_PLAN_APPROVAL_NOT_FOUND'
  | 'DURABLE_PLAN_UNAVAILABLE'
  | 'DURABLE_PLAN_FAILED'
  | 'DURABLE_PLAN_DUPLICATE';

/** Options of {@link DurablePlanError}. */
export interface DurablePlanErrorOptions {
  readonly code: DurablePlanErrorCode;
  /** What happened, in a sentence. */
  readonly message: string;
  /** What to do next. */
  readonly advice?: string;
  readonly planId?: string;
  readonly cause?: unknown;
}

/**
 * A durable plan could not be started, reached, answered or cancelled, or it
 * failed. The message says which plan and what to do.
 */
export class DurablePlanError extends CaError {
  declare readonly code: DurablePlanErrorCode;

  constructor(options: DurablePlanErrorOptions) {
    const { code, message, advice, planId, cause } = options;
    super(code, `${message}${advice === undefined ? '' : ` ${advice}`}`, {
      ...(planId === undefined ? {} : { planId }),
      ...(cause === undefined ? {} : { cause }),
    });
  }
}
