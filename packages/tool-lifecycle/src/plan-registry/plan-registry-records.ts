import { describeValue } from '@ca/domain';
import {
  MAX_LISTED_APPROVALS,
  MAX_LISTED_TOOLS,
  type PendingApprovalSummary,
  type PlanApprovalMessage,
  type PlanCancelMessage,
  type PlanControlMessage,
  type PlanProgress,
  type PlanRegistration,
  type RegisteredPlan,
} from './plan-registry';
import { PlanRegistryError } from './plan-registry-error';

// Limits on what a registry stores and carries. A registry is shared by
// every host: what one process wrote is input for all the others, so the
// same checks guard writing (an error) and reading (the record is skipped).
const MAX_PLAN_ID_LENGTH = 200;
const MAX_REASON_LENGTH = 1_000;
const MAX_SENT_BY_LENGTH = 200;
const MAX_LABELS = 20;
const MAX_LABEL_KEY_LENGTH = 64;
const MAX_LABEL_VALUE_LENGTH = 1_000;
const MAX_POLICY_FIELDS = 20;
const MAX_POLICY_TEXT_LENGTH = 200;
const MAX_TOOL_NAME_LENGTH = 256;
const MAX_HOST_LENGTH = 255;
const MAX_TIMESTAMP_LENGTH = 40;
const MAX_REQUEST_ID_LENGTH = 64;
const APPROVAL_DECISIONS: readonly unknown[] = ['approve', 'deny'];
const APPROVAL_SCOPES: readonly unknown[] = ['once', 'tool', 'call'];

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

type Problem = string | undefined;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function textProblem(value: unknown, name: string, maxLength: number, allowEmpty = false): Problem {
  if (typeof value !== 'string') return `${name} must be a string; got ${describeValue(value)}`;
  if (!allowEmpty && value.length === 0) return `${name} must not be empty`;
  if (value.length > maxLength) return `${name} must be at most ${maxLength} characters; got ${value.length}`;
  if (CONTROL_CHARACTERS.test(value)) return `${name} must not contain control characters`;
  return undefined;
}

function timestampProblem(value: unknown, name: string): Problem {
  return (
    textProblem(value, name, MAX_TIMESTAMP_LENGTH) ??
    (Number.isNaN(Date.parse(value as string)) ? `${name} must be an ISO-8601 time; got '${value as string}'` : undefined)
  );
}

/** Why `planId` cannot name a plan in a registry, or `undefined`. */
export function planIdProblem(planId: unknown): string | undefined {
  return textProblem(planId, 'planId', MAX_PLAN_ID_LENGTH);
}

function labelsProblem(labels: unknown): Problem {
  if (!isRecord(labels)) return `labels must be an object of strings; got ${describeValue(labels)}`;
  const entries = Object.entries(labels);
  if (entries.length > MAX_LABELS) return `at most ${MAX_LABELS} labels are allowed; got ${entries.length}`;
  for (const [key, value] of entries) {
    const problem = textProblem(key, 'a label name', MAX_LABEL_KEY_LENGTH) ?? textProblem(value, `label '${key}'`, MAX_LABEL_VALUE_LENGTH, true);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function policyProblem(policy: unknown): Problem {
  if (!isRecord(policy)) return `policy must be an object; got ${describeValue(policy)}`;
  const entries = Object.entries(policy);
  if (entries.length > MAX_POLICY_FIELDS) return `policy must have at most ${MAX_POLICY_FIELDS} fields; got ${entries.length}`;
  for (const [key, value] of entries) {
    const problem = textProblem(key, 'a policy field', MAX_LABEL_KEY_LENGTH);
    if (problem !== undefined) return problem;
    if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) continue;
    const valueProblem = textProblem(value, `policy.${key}`, MAX_POLICY_TEXT_LENGTH, true);
    if (valueProblem !== undefined) return `${valueProblem} (a policy field is a string, a number or a boolean)`;
  }
  return undefined;
}

function toolsProblem(tools: unknown): Problem {
  if (!Array.isArray(tools)) return `tools must be an array of tool names; got ${describeValue(tools)}`;
  if (tools.length > MAX_LISTED_TOOLS) return `tools must list at most ${MAX_LISTED_TOOLS} names; got ${tools.length}`;
  for (const [index, tool] of tools.entries()) {
    const problem = textProblem(tool, `tools[${index}]`, MAX_TOOL_NAME_LENGTH);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function stepsProblem(stepsDone: unknown): Problem {
  return Number.isSafeInteger(stepsDone) && (stepsDone as number) >= 0 ? undefined : `stepsDone must be a whole number ≥ 0; got ${describeValue(stepsDone)}`;
}

/** Why a list of waiting approval requests cannot be stored, or `undefined` (absent is fine). */
function pendingApprovalsProblem(pending: unknown): Problem {
  if (pending === undefined) return undefined;
  if (!Array.isArray(pending)) return `pendingApprovals must be an array; got ${describeValue(pending)}`;
  if (pending.length > MAX_LISTED_APPROVALS) return `pendingApprovals must list at most ${MAX_LISTED_APPROVALS} requests; got ${pending.length}`;
  for (const [index, request] of pending.entries()) {
    if (!isRecord(request)) return `pendingApprovals[${index}] must be an object; got ${describeValue(request)}`;
    const problem =
      textProblem(request['requestId'], `pendingApprovals[${index}].requestId`, MAX_REQUEST_ID_LENGTH) ??
      textProblem(request['toolName'], `pendingApprovals[${index}].toolName`, MAX_TOOL_NAME_LENGTH) ??
      timestampProblem(request['askedAt'], `pendingApprovals[${index}].askedAt`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** The waiting requests with only their known fields, frozen; `undefined` for none. */
function copyPendingApprovals(pending: readonly PendingApprovalSummary[] | undefined): readonly PendingApprovalSummary[] | undefined {
  if (pending === undefined || pending.length === 0) return undefined;
  return Object.freeze(pending.map(({ requestId, toolName, askedAt }) => Object.freeze({ requestId, toolName, askedAt })));
}

/**
 * Checks the progress a heartbeat hands a registry, and returns a frozen
 * copy holding only the known fields.
 * @throws PlanRegistryError `PLAN_REGISTRY_INVALID_ARGUMENT` naming the field.
 */
export function checkPlanProgress(progress: PlanProgress, registry: string, planId: string): PlanProgress {
  const problem = isRecord(progress)
    ? (toolsProblem(progress['tools']) ?? stepsProblem(progress['stepsDone']) ?? pendingApprovalsProblem(progress['pendingApprovals']))
    : `progress must be an object; got ${describeValue(progress)}`;
  if (problem !== undefined) throw new PlanRegistryError({ code: 'PLAN_REGISTRY_INVALID_ARGUMENT', registry, planId, reason: problem });
  const pendingApprovals = copyPendingApprovals(progress.pendingApprovals);
  return Object.freeze({
    tools: Object.freeze([...progress.tools]),
    stepsDone: progress.stepsDone,
    ...(pendingApprovals === undefined ? {} : { pendingApprovals }),
  });
}

function registrationProblem(value: unknown): Problem {
  if (!isRecord(value)) return `a registration must be an object; got ${describeValue(value)}`;
  return (
    planIdProblem(value['planId']) ??
    policyProblem(value['policy']) ??
    timestampProblem(value['startedAt'], 'startedAt') ??
    toolsProblem(value['tools']) ??
    stepsProblem(value['stepsDone']) ??
    labelsProblem(value['labels']) ??
    pendingApprovalsProblem(value['pendingApprovals'])
  );
}

/**
 * Checks a registration before a registry stores it, and returns a frozen
 * copy holding only the known fields.
 * @throws PlanRegistryError `PLAN_REGISTRY_INVALID_ARGUMENT` naming the field.
 */
export function checkPlanRegistration(registration: PlanRegistration, registry: string): PlanRegistration {
  const problem = registrationProblem(registration);
  if (problem !== undefined) {
    const planId = typeof (registration as { planId?: unknown })?.planId === 'string' ? (registration as { planId: string }).planId : undefined;
    throw new PlanRegistryError({ code: 'PLAN_REGISTRY_INVALID_ARGUMENT', registry, reason: problem, ...(planId === undefined ? {} : { planId }) });
  }
  const pendingApprovals = copyPendingApprovals(registration.pendingApprovals);
  return Object.freeze({
    planId: registration.planId,
    policy: Object.freeze({ ...registration.policy }),
    startedAt: registration.startedAt,
    tools: Object.freeze([...registration.tools]),
    stepsDone: registration.stepsDone,
    labels: Object.freeze({ ...registration.labels }),
    ...(pendingApprovals === undefined ? {} : { pendingApprovals }),
  });
}

/**
 * Reads a plan record written by another process (any registry is shared):
 * the record with only the known fields, frozen, or `undefined` when it is
 * not a well-formed record — a registry skips such a record instead of
 * failing the whole list.
 */
export function parseRegisteredPlan(value: unknown): RegisteredPlan | undefined {
  if (registrationProblem(value) !== undefined) return undefined;
  const record = value as Record<string, unknown> & PlanRegistration;
  if (textProblem(record['host'], 'host', MAX_HOST_LENGTH) !== undefined) return undefined;
  if (!Number.isSafeInteger(record['pid']) || (record['pid'] as number) <= 0) return undefined;
  if (timestampProblem(record['heartbeatAt'], 'heartbeatAt') !== undefined) return undefined;
  return Object.freeze({
    ...checkPlanRegistration(record, ''),
    host: record['host'] as string,
    pid: record['pid'] as number,
    heartbeatAt: record['heartbeatAt'] as string,
  });
}

function approvalProblem(value: Record<string, unknown>): Problem {
  const { requestId, decision, scope, reason } = value;
  return (
    textProblem(requestId, 'requestId', MAX_REQUEST_ID_LENGTH) ??
    (APPROVAL_DECISIONS.includes(decision) ? undefined : `decision must be 'approve' or 'deny'; got ${describeValue(decision)}`) ??
    (scope === undefined
      ? undefined
      : decision !== 'approve'
        ? 'scope is for an approval only; a denial has none'
        : APPROVAL_SCOPES.includes(scope)
          ? undefined
          : `scope must be 'once', 'tool' or 'call'; got ${describeValue(scope)}`) ??
    (reason === undefined ? undefined : decision !== 'deny' ? 'reason is for a denial only' : textProblem(reason, 'reason', MAX_REASON_LENGTH))
  );
}

function messageProblem(value: unknown): Problem {
  if (!isRecord(value)) return `a control message must be an object; got ${describeValue(value)}`;
  const kind = value['kind'];
  if (kind !== 'cancel' && kind !== 'approval')
    return `kind must be 'cancel' or 'approval' (the kinds of control message this runtime knows); got ${describeValue(kind)}`;
  return (
    planIdProblem(value['planId']) ??
    (kind === 'cancel' ? textProblem(value['reason'], 'reason', MAX_REASON_LENGTH) : approvalProblem(value)) ??
    timestampProblem(value['sentAt'], 'sentAt') ??
    (value['sentBy'] === undefined ? undefined : textProblem(value['sentBy'], 'sentBy', MAX_SENT_BY_LENGTH))
  );
}

function copyMessage(value: PlanControlMessage): PlanControlMessage {
  const sentBy = value.sentBy === undefined ? {} : { sentBy: value.sentBy };
  if (value.kind === 'approval') {
    const message: PlanApprovalMessage = {
      kind: 'approval',
      planId: value.planId,
      requestId: value.requestId,
      decision: value.decision,
      ...(value.scope === undefined ? {} : { scope: value.scope }),
      ...(value.reason === undefined ? {} : { reason: value.reason }),
      sentAt: value.sentAt,
      ...sentBy,
    };
    return Object.freeze(message);
  }
  const message: PlanCancelMessage = { kind: 'cancel', planId: value.planId, reason: value.reason, sentAt: value.sentAt, ...sentBy };
  return Object.freeze(message);
}

/**
 * Checks a control message before a registry sends it, and returns a frozen
 * copy holding only the known fields.
 * @throws PlanRegistryError `PLAN_REGISTRY_INVALID_ARGUMENT` naming the field.
 */
export function checkPlanControlMessage(message: PlanControlMessage, registry: string): PlanControlMessage {
  const problem = messageProblem(message);
  if (problem !== undefined) {
    const planId = typeof (message as { planId?: unknown })?.planId === 'string' ? (message as { planId: string }).planId : undefined;
    throw new PlanRegistryError({ code: 'PLAN_REGISTRY_INVALID_ARGUMENT', registry, reason: problem, ...(planId === undefined ? {} : { planId }) });
  }
  return copyMessage(message);
}

/**
 * Reads a control message that came over the wire: the message with only the
 * known fields, frozen, or `undefined` when it is malformed or of a kind this
 * runtime does not know (a newer sender's) — which a registry ignores.
 */
export function parsePlanControlMessage(value: unknown): PlanControlMessage | undefined {
  return messageProblem(value) === undefined ? copyMessage(value as PlanControlMessage) : undefined;
}

/**
 * The key under which a registry keeps a message for a plan it cannot reach
 * right now: a later message with the same key replaces it. `cancel` for a
 * cancellation, `approval:<requestId>` for the answer to one request.
 */
export function planControlMessageKey(message: PlanControlMessage): string {
  return message.kind === 'approval' ? `approval:${message.requestId}` : message.kind;
}

/** A cancellation request, made now. */
export function createCancelMessage(planId: string, reason: string, sentBy?: string): PlanCancelMessage {
  return { kind: 'cancel', planId, reason, sentAt: new Date().toISOString(), ...(sentBy === undefined ? {} : { sentBy }) };
}

/** What {@link createApprovalMessage} is given: the answer, without its kind and time. */
export type PlanApprovalAnswer = Omit<PlanApprovalMessage, 'kind' | 'sentAt'>;

/** An answer to an approval request of a running plan, made now (check it with `checkPlanControlMessage`, as `send` does). */
export function createApprovalMessage(answer: PlanApprovalAnswer): PlanApprovalMessage {
  const { planId, requestId, decision, scope, reason, sentBy } = answer;
  return {
    kind: 'approval',
    planId,
    requestId,
    decision,
    ...(scope === undefined ? {} : { scope }),
    ...(reason === undefined ? {} : { reason }),
    sentAt: new Date().toISOString(),
    ...(sentBy === undefined ? {} : { sentBy }),
  };
}
