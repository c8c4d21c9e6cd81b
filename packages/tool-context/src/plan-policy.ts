import { ContextValidationError } from './context-validation-error';
import { describeType } from './describe-type';

/** Whether a plan may reach the network: `'allow'` (the default) or `'deny'`. */
export type PlanNetworkAccess = 'allow' | 'deny';

/**
 * What a plan allows, enforced by the runtime before a tool runs (see the
 * tool's `ToolCapability`).
 */
export interface PlanPolicy {
  /** The plan may not change anything: a tool that `writes` is refused with `ToolAccessDeniedError`. */
  readonly readOnly: boolean;
  /** Every change must be undoable: a tool that is not `checkpointable` is refused with `ToolCheckpointRequiredError`. */
  readonly requireCheckpoint: boolean;
  /**
   * `'deny'`: the plan may not reach the network. The runtime refuses every
   * `openWorld` tool with `ToolAccessDeniedError` (rule `'network'`), and
   * programs the runtime starts are to get no network either. The one switch
   * for the network of a plan. A policy made by `createExecutionContext`
   * always has it (`'allow'` unless given); absent counts as `'allow'`.
   */
  readonly network?: PlanNetworkAccess;
}

const BOOLEAN_FIELDS = ['readOnly', 'requireCheckpoint'] as const;
const POLICY_FIELDS: readonly string[] = [...BOOLEAN_FIELDS, 'network'];
const NETWORK_ACCESS: readonly PlanNetworkAccess[] = ['allow', 'deny'];

const DEFAULT_PLAN_POLICY: PlanPolicy = Object.freeze({ readOnly: false, requireCheckpoint: false, network: 'allow' });

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
      message: `expected an object like { readOnly: true, requireCheckpoint: false, network: 'deny' }, got ${describeType(policy)}.`,
    });
  }
  const record = policy as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!POLICY_FIELDS.includes(key)) {
      throw new ContextValidationError({
        field: `policy.${key}`,
        planId,
        message: `unknown policy field; a policy has only readOnly, requireCheckpoint and network (check the spelling).`,
      });
    }
  }
  for (const key of BOOLEAN_FIELDS) {
    const value = record[key];
    if (value !== undefined && typeof value !== 'boolean') {
      throw new ContextValidationError({
        field: `policy.${key}`,
        planId,
        message: `expected true or false (or leave it out for false), got ${describeType(value)}.`,
      });
    }
  }
  const network = record['network'];
  if (network !== undefined && !(NETWORK_ACCESS as readonly unknown[]).includes(network)) {
    throw new ContextValidationError({
      field: 'policy.network',
      planId,
      message: `expected 'allow' or 'deny' (or leave it out for 'allow'), got ${describeType(network)}.`,
    });
  }
  return Object.freeze({
    readOnly: record['readOnly'] === true,
    requireCheckpoint: record['requireCheckpoint'] === true,
    network: network === 'deny' ? 'deny' : 'allow',
  });
}
