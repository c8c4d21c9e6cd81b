import { ContextValidationError } from './context-validation-error';
import { describeType } from './describe-type';

/**
 * What a plan allows, enforced by the runtime before a tool runs (see the
 * tool's `ToolCapability`).
 */
export interface PlanPolicy {
  /** The plan may not change anything: a tool that `writes` is refused with `ToolAccessDeniedError`. */
  readonly readOnly: boolean;
  /** Every change must be undoable: a tool that is not `checkpointable` is refused with `ToolCheckpointRequiredError`. */
  readonly requireCheckpoint: boolean;
}

const POLICY_FIELDS: readonly (keyof PlanPolicy)[] = ['readOnly', 'requireCheckpoint'];

const DEFAULT_PLAN_POLICY: PlanPolicy = Object.freeze({ readOnly: false, requireCheckpoint: false });

/**
 * A complete, frozen policy from a partial one. Unknown keys are refused, so
 * that a typo in a safety setting (`readonly: true`) cannot silently leave a
 * plan writable.
 */
export function normalizePlanPolicy(policy: unknown, planId: string): PlanPolicy {
  if (policy === undefined) return DEFAULT_PLAN_POLICY;
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) {
    throw new ContextValidationError({
      field: 'policy',
      planId,
      message: `expected an object like { readOnly: true, requireCheckpoint: false }, got ${describeType(policy)}.`,
    });
  }
  const record = policy as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!(POLICY_FIELDS as readonly string[]).includes(key)) {
      throw new ContextValidationError({
        field: `policy.${key}`,
        planId,
        message: `unknown policy field; a policy has only ${POLICY_FIELDS.join(' and ')} (check the spelling).`,
      });
    }
  }
  for (const key of POLICY_FIELDS) {
    const value = record[key];
    if (value !== undefined && typeof value !== 'boolean') {
      throw new ContextValidationError({
        field: `policy.${key}`,
        planId,
        message: `expected true or false (or leave it out for false), got ${describeType(value)}.`,
      });
    }
  }
  return Object.freeze({ readOnly: record['readOnly'] === true, requireCheckpoint: record['requireCheckpoint'] === true });
}
