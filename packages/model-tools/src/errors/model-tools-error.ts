import { CaError, type CaErrorOptions } from '@ca/domain';

/** Stable codes of {@link ModelToolsError}. */
export type ModelToolsErrorCode = 'MODEL_TOOLS_INVALID_ARGUMENT' | 'MODEL_TOOLS_INVALID_CALL';

/** Options of {@link ModelToolsError}. */
export interface ModelToolsErrorOptions extends CaErrorOptions {
  /** What was wrong: `invalid-argument`, a public entry point got a value it cannot use; `invalid-call`, a provider's tool call does not have the provider's shape. */
  readonly problem: 'invalid-argument' | 'invalid-call';
  /** The argument or field concerned (`format`, `plan`, `call.function.arguments`). */
  readonly field: string;
  /** What was expected there. */
  readonly expected: string;
  /** What was received, described (never the value itself when it may be large). */
  readonly received: string;
  /** What to do. */
  readonly advice?: string;
}

/**
 * A front-door entry point was used wrongly: an unknown format, something
 * that is not a plan, a provider call without the provider's fields. What a
 * *model* gets wrong (an unknown tool name, arguments that are not JSON) is
 * never thrown: it goes back to the model as an error result.
 *
 * Codes: `MODEL_TOOLS_INVALID_ARGUMENT`, `MODEL_TOOLS_INVALID_CALL`.
 */
export class ModelToolsError extends CaError {
  declare readonly code: ModelToolsErrorCode;
  readonly problem: ModelToolsErrorOptions['problem'];
  readonly field: string;

  constructor(options: ModelToolsErrorOptions) {
    const code: ModelToolsErrorCode = options.problem === 'invalid-call' ? 'MODEL_TOOLS_INVALID_CALL' : 'MODEL_TOOLS_INVALID_ARGUMENT';
    const where = options.planId === undefined ? '' : ` (plan '${options.planId}')`;
    const subject = options.problem === 'invalid-call' ? 'The tool call' : 'The argument';
    super(
      code,
      `${subject} ${options.field}${where} is not valid: expected ${options.expected}, got ${options.received}.${options.advice === undefined ? '' : ` ${options.advice}`}`,
      options,
    );
    this.problem = options.problem;
    this.field = options.field;
  }
}
