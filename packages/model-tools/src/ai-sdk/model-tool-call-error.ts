import { CaError } from '@ca/domain';
import type { ModelToolCallOutcome } from '../calls/model-tools';

/**
 * A call a framework made that failed or was refused. Its `message` is the
 * text for the model (built from the error's fields: code, what to change;
 * no stack, no secret, no host path outside the plan), so a framework that
 * shows a thrown error's message to the model shows that. `code` is the
 * underlying error's; `outcome` has the rest (trace, repairs, the runtime's
 * error as `cause`).
 */
export class ModelToolCallError extends CaError {
  readonly outcome: ModelToolCallOutcome;

  constructor(outcome: ModelToolCallOutcome) {
    super(outcome.rendered.code ?? 'UNKNOWN', outcome.rendered.text, {
      ...(outcome.toolName === undefined ? {} : { toolName: outcome.toolName }),
      ...(outcome.trace === undefined ? {} : { planId: outcome.trace.planId }),
      cause: outcome.error,
    });
    this.outcome = outcome;
  }
}
