import { ContextValidationError } from './context-validation-error';
import { describeType } from './describe-type';

/** Whether a plan may reach the network: `'allow'` (the default) or `'deny'`. */
export type PlanNetworkAccess = 'allow' | 'deny';

/** A capability for which a plan's policy may ask a person before the call. */
export type ApprovalCapability = 'writes' | 'destructive' | 'openWorld';

/**
 * Which calls of a plan need a person's approval before they run. A call
 * needs it when any field says so. The runtime asks after the capability
 * check and the input validation and before the call; the service's rules
 * (allow / deny / ask) are applied first and win over this.
 */
export interface PlanApprovalPolicy {
  /** Every call needs approval. */
  readonly always?: boolean;
  /** Calls of tools whose capability has any of these (`writes`, `destructive`, `openWorld`). */
  readonly capabilities?: readonly ApprovalCapability[];
  /**
   * Calls of tools whose name matches any of these patterns: `*` stands for
   * any run of characters (dots included), `?` for one; the rest is literal,
   * and the whole name must match (`builtin.fs.*`, `mcp.github.create_*`).
   */
  readonly tools?: readonly string[];
}

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
  /**
   * Which calls need a person's approval (see {@link PlanApprovalPolicy}).
   * Absent when no call needs it — also when it was given with nothing that
   * asks (`{}`, `always: false`, empty lists).
   */
  readonly approval?: PlanApprovalPolicy;
}

const BOOLEAN_FIELDS = ['readOnly', 'requireCheckpoint'] as const;
const POLICY_FIELDS: readonly string[] = [...BOOLEAN_FIELDS, 'network', 'approval'];
const NETWORK_ACCESS: readonly PlanNetworkAccess[] = ['allow', 'deny'];
const APPROVAL_FIELDS: readonly string[] = ['always', 'capabilities', 'tools'];
const APPROVAL_CAPABILITIES: readonly ApprovalCapability[] = ['writes', 'destructive', 'openWorld'];
// Tool-name characters (see isValidToolName of @ca/domain) plus the two wildcards.
const TOOL_PATTERN = /^[A-Za-z0-9_.:*?-]{1,200}$/;

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
        message: `unknown policy field; a policy has only readOnly, requireCheckpoint, network and approval (check the spelling).`,
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
  const approval = normalizeApproval(record['approval'], planId);
  const normalized: { -readonly [K in keyof PlanPolicy]: PlanPolicy[K] } = {
    readOnly: record['readOnly'] === true,
    requireCheckpoint: record['requireCheckpoint'] === true,
    network: network === 'deny' ? 'deny' : 'allow',
  };
  if (approval !== undefined) normalized.approval = approval;
  return Object.freeze(normalized);
}

/** A frozen approval policy, or `undefined` when it asks for nothing. */
function normalizeApproval(value: unknown, planId: string): PlanApprovalPolicy | undefined {
  if (value === undefined) return undefined;
  const fail = (field: string, message: string): never => {
    throw new ContextValidationError({ field: `policy.approval${field}`, planId, message });
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail('', `expected an object like { capabilities: ['writes'], tools: ['mcp.github.*'], always: false }, got ${describeType(value)}.`);
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!APPROVAL_FIELDS.includes(key)) fail(`.${key}`, 'unknown approval field; it has only always, capabilities and tools (check the spelling).');
  }
  const { always, capabilities, tools } = record;
  if (always !== undefined && typeof always !== 'boolean') fail('.always', `expected true or false, got ${describeType(always)}.`);
  const capabilityList = list(capabilities, '.capabilities', fail).map((item, index) => {
    if (!(APPROVAL_CAPABILITIES as readonly unknown[]).includes(item)) {
      fail(`.capabilities[${index}]`, `expected 'writes', 'destructive' or 'openWorld', got ${describeType(item)}.`);
    }
    return item as ApprovalCapability;
  });
  const toolList = list(tools, '.tools', fail).map((item, index) => {
    if (typeof item !== 'string' || !TOOL_PATTERN.test(item)) {
      fail(
        `.tools[${index}]`,
        `expected a tool-name pattern of 1–200 letters, digits, '_', '.', ':', '-' and the wildcards '*' and '?', such as 'mcp.github.*', got ${describeType(item)}.`,
      );
    }
    return item as string;
  });
  if (always !== true && capabilityList.length === 0 && toolList.length === 0) return undefined;
  const approval: { -readonly [K in keyof PlanApprovalPolicy]: PlanApprovalPolicy[K] } = {};
  if (always === true) approval.always = true;
  if (capabilityList.length > 0) approval.capabilities = Object.freeze([...new Set(capabilityList)]);
  if (toolList.length > 0) approval.tools = Object.freeze([...new Set(toolList)]);
  return Object.freeze(approval);
}

function list(value: unknown, field: string, fail: (field: string, message: string) => never): readonly unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return fail(field, `expected a list, got ${describeType(value)}.`);
  return value;
}
