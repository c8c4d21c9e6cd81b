import { safeMessage } from '@ca/domain';
import { ContextValidationError } from './context-validation-error';
import { describeType } from './describe-type';
import { isIsoTimestamp } from './iso-timestamp';

// A name or a code is a label, not prose: anything longer is not one a reader needs whole.
const MAX_LABEL_LENGTH = 200;

/** The error of a failed execution, reduced to plain, serialisable data. */
export interface ToolExecutionTraceError {
  /** The error's `name`, e.g. `'ToolExecutionError'`. */
  readonly name: string;
  /** The error's `code` when it has a string one, else `'UNKNOWN'`. */
  readonly code: string;
  /**
   * The error's message as it may be kept: secrets redacted and at most
   * 4,096 characters plus a note of the full length (see `safeMessage` of
   * `@ca/domain`). The error itself keeps its whole message.
   */
  readonly message: string;
}

/** How the approval of a call was decided: `approved`, `denied`, or `withdrawn` (the wait ended without an answer: the plan was cancelled or ended). */
export type ToolApprovalOutcome = 'approved' | 'denied' | 'withdrawn';

/**
 * The approval of one execution, when the call needed one or a rule decided
 * it. Absent from the trace of a call nobody had to approve.
 */
export interface ToolExecutionTraceApproval {
  /** What was decided. */
  readonly decision: ToolApprovalOutcome;
  /**
   * Who decided: the person or handler that answered (as the approval
   * handler names them; for a remembered approval, who gave it), `rule:<name>`
   * for a rule of the service, `runtime` when nobody could be asked or the
   * wait ended. At most 200 characters.
   */
  readonly decidedBy: string;
  /** True when an approval given earlier in the plan (or before the plan was restarted) decided, without asking. */
  readonly remembered?: boolean;
  /** For an approval: `once`, `tool` (this tool for the rest of the plan) or `call` (this tool with these arguments). */
  readonly scope?: 'once' | 'tool' | 'call';
  /** How long the call waited for the answer, in milliseconds: 0 when a rule or an earlier approval decided, or the handler returned its decision at once instead of a promise. */
  readonly waitedMs: number;
  /** The id of the request that was asked, when one was. */
  readonly requestId?: string;
  /** Why it was denied, made safe to keep like an error message (see `toTraceError`). */
  readonly reason?: string;
}

/** Where in a call a hook ran: before it (after input validation), after it (on a successful result), or on its failure. */
export type ToolHookStage = 'before' | 'after' | 'error';

/**
 * What a hook decided: `continue` (nothing changed), `rewrite` (the input, before
 * the call), `refuse` (the call, before it), `replace` or `redact` (the output,
 * after it), `withhold` (the output, after it: the result fails), `failed`
 * (the hook threw, timed out or answered something invalid: the call failed closed).
 */
export type ToolHookOutcome = 'continue' | 'rewrite' | 'refuse' | 'replace' | 'redact' | 'withhold' | 'failed';

/** One hook's part in an execution: which hook, where, what it decided and how long it took. */
export interface ToolExecutionTraceHook {
  /** The hook's name (at most 200 characters). */
  readonly hook: string;
  readonly stage: ToolHookStage;
  readonly decision: ToolHookOutcome;
  /** How long the hook took, in milliseconds. */
  readonly durationMs: number;
  /** True when the hook added a note for the model. */
  readonly noted?: boolean;
  /** For `redact`: how many values were redacted, by rule (rule ids of at most 200 characters, at most 100 of them). */
  readonly redactions?: Readonly<Record<string, number>>;
  /** For `refuse`, `withhold` and `failed`: why, made safe to keep like an error message. */
  readonly reason?: string;
}

/** The rules by which a model's arguments are repaired before the call (see `@ca/model-tools`). */
export type ToolInputRepairRule = 'null-for-optional' | 'json-string' | 'single-to-array' | 'string-to-scalar';

const REPAIR_RULES: readonly unknown[] = ['null-for-optional', 'json-string', 'single-to-array', 'string-to-scalar'];
// A pointer names a place in the arguments; longer ones are not kept whole, nor more than this many repairs.
const MAX_REPAIRS = 100;

/**
 * One repair made to a call's arguments before it ran: which rule, where
 * (a JSON Pointer into the arguments), and the JSON type the value had and
 * was given. Values themselves are never kept: arguments may hold secrets.
 */
export interface ToolExecutionTraceRepair {
  readonly rule: ToolInputRepairRule;
  /** JSON Pointer (RFC 6901) of the repaired value in the arguments; at most 200 characters. */
  readonly pointer: string;
  /** The JSON type the model sent (`string`, `null`, …). */
  readonly from: string;
  /** The JSON type the value was given (`number`, `array`, `absent` for a removed property, …). */
  readonly to: string;
}

/**
 * One execution of one tool, successful or not. The runtime appends exactly
 * one per execution to the plan's context.
 */
export interface ToolExecutionTrace {
  /** Id of the execution (see `createExecutionId`). */
  readonly executionId: string;
  /** The plan the execution ran in; must be the context's plan. */
  readonly planId: string;
  /** The tool that ran. */
  readonly toolName: string;
  /** Start, ISO-8601. */
  readonly startedAt: string;
  /** End, ISO-8601. */
  readonly endedAt: string;
  /** Duration in milliseconds (may be fractional, from a monotonic clock). */
  readonly durationMs: number;
  /** UTF-8 bytes of the serialised output; 0 when there is none. */
  readonly resultSizeBytes: number;
  /** Whether the execution succeeded. */
  readonly success: boolean;
  /** Why it failed, when it did. */
  readonly error?: ToolExecutionTraceError;
  /** The approval of the call, when one was needed or a rule decided it. */
  readonly approval?: ToolExecutionTraceApproval;
  /** How many times the tool was called, when it was retried (2 or more); absent for a single call. */
  readonly attempts?: number;
  /**
   * Set when the call was not made because a result was already recorded
   * for its idempotency key in this plan: the id of the execution whose
   * result was returned.
   */
  readonly replayedFrom?: string;
  /**
   * The execution this call was made from, for a call a tool made in the
   * plan on its own (an inner call of a program `@ca/code-mode` runs).
   */
  readonly parentExecutionId?: string;
  /** The hooks that ran around the call, in the order they ran; absent when none did. */
  readonly hooks?: readonly ToolExecutionTraceHook[];
  /**
   * The call's idempotency key, when the tool read it — and so could send it:
   * the HTTP tools' `Idempotency-Key` header, an MCP call's `_meta` — so a
   * duplicate the remote side saw can be traced to the execution. At most 200
   * characters.
   */
  readonly idempotencyKey?: string;
  /** The repairs made to the arguments before the call, when a front door made any (see `ExecuteOptions.repairs`). */
  readonly repairs?: readonly ToolExecutionTraceRepair[];
}

/**
 * The repairs a caller reports, as a trace keeps them: well-formed entries
 * only (a known rule, string fields), labels capped at 200 characters, at
 * most 100 entries, frozen. Returns `undefined` when none is left.
 * @throws Never.
 */
export function toTraceRepairs(repairs: unknown): readonly ToolExecutionTraceRepair[] | undefined {
  if (!Array.isArray(repairs)) return undefined;
  const kept: ToolExecutionTraceRepair[] = [];
  const label = (text: string): string => safeMessage(text, MAX_LABEL_LENGTH);
  for (const entry of repairs.slice(0, MAX_REPAIRS)) {
    try {
      const { rule, pointer, from, to } = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
      if (!REPAIR_RULES.includes(rule) || typeof pointer !== 'string' || typeof from !== 'string' || typeof to !== 'string') continue;
      kept.push(Object.freeze({ rule: rule as ToolInputRepairRule, pointer: label(pointer), from: label(from), to: label(to) }));
    } catch {
      // A throwing getter: not a repair.
    }
  }
  return kept.length === 0 ? undefined : Object.freeze(kept);
}

/**
 * Reduces any thrown value to a {@link ToolExecutionTraceError}: `name`,
 * `code` (the value's `code` if it is a string, else `'UNKNOWN'`) and
 * `message`. A value that is not an error gets the name `'NonError'` and its
 * text (or JSON) as message. Returns `undefined` for `undefined` (no error).
 *
 * The message is made safe to keep (`safeMessage` of `@ca/domain`): URL
 * userinfo, secret-looking query values and credentials are replaced with
 * `***`, and a message longer than 4,096 characters is cut there and followed
 * by `… [truncated, N characters in all]` — an 8 MB error from a server does
 * not end up in every trace. Name and code are capped at 200 characters.
 *
 * @throws Never, even for values whose properties or `toString` throw.
 */
export function toTraceError(error: unknown): ToolExecutionTraceError | undefined {
  if (error === undefined) return undefined;
  if (typeof error === 'object' && error !== null) {
    try {
      const { name, code, message } = error as { name?: unknown; code?: unknown; message?: unknown };
      if (typeof message === 'string' || error instanceof Error) {
        return Object.freeze({
          name: typeof name === 'string' && name.length > 0 ? safeMessage(name, MAX_LABEL_LENGTH) : 'Error',
          code: typeof code === 'string' && code.length > 0 ? safeMessage(code, MAX_LABEL_LENGTH) : 'UNKNOWN',
          message: typeof message === 'string' ? safeMessage(message) : '',
        });
      }
    } catch {
      // A throwing getter: fall through and describe the value instead.
    }
  }
  return Object.freeze({ name: 'NonError', code: 'UNKNOWN', message: safeMessage(describeThrownValue(error)) });
}

function describeThrownValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    try {
      const json = JSON.stringify(value);
      if (typeof json === 'string') return json;
    } catch {
      // Cyclic or hostile: fall back to String().
    }
  }
  try {
    return String(value);
  } catch {
    return `a thrown ${value === null ? 'null' : typeof value}`;
  }
}

/**
 * Validates a trace and returns it frozen: a trace that is already frozen is
 * kept as given, any other is copied (known fields only) and frozen.
 */
export function freezeTrace(trace: unknown, planId: string): ToolExecutionTrace {
  const fail = (field: string, message: string): never => {
    throw new ContextValidationError({ field: `trace${field}`, planId, message });
  };
  if (typeof trace !== 'object' || trace === null || Array.isArray(trace)) {
    fail('', `recordTrace expects { executionId, planId, toolName, startedAt, … }, got ${describeType(trace)}.`);
  }
  const record = trace as Record<string, unknown>;
  const { executionId, toolName, startedAt, endedAt, durationMs, resultSizeBytes, success, error, approval, attempts, replayedFrom, repairs, hooks } = record;
  const idempotencyKey = record['idempotencyKey'];
  if (typeof executionId !== 'string' || executionId.length === 0) {
    fail('.executionId', `expected the id of the execution, got ${describeType(executionId)}.`);
  }
  if (record['planId'] !== planId) {
    fail('.planId', `the trace names plan ${describeType(record['planId'])}; record traces into the context of their own plan.`);
  }
  if (typeof toolName !== 'string' || toolName.length === 0) {
    fail('.toolName', `expected the name of the tool that ran, got ${describeType(toolName)}.`);
  }
  if (!isIsoTimestamp(startedAt)) {
    fail('.startedAt', `expected an ISO-8601 timestamp such as new Date().toISOString(), got ${describeType(startedAt)}.`);
  }
  if (!isIsoTimestamp(endedAt)) {
    fail('.endedAt', `expected an ISO-8601 timestamp such as new Date().toISOString(), got ${describeType(endedAt)}.`);
  }
  if (typeof durationMs !== 'number' || !Number.isFinite(durationMs) || durationMs < 0) {
    fail('.durationMs', `expected a finite number of milliseconds ≥ 0, got ${describeType(durationMs)}.`);
  }
  if (typeof resultSizeBytes !== 'number' || !Number.isSafeInteger(resultSizeBytes) || resultSizeBytes < 0) {
    fail('.resultSizeBytes', `expected a whole number of bytes ≥ 0, got ${describeType(resultSizeBytes)}.`);
  }
  if (typeof success !== 'boolean') {
    fail('.success', `expected true or false, got ${describeType(success)}.`);
  }
  if (attempts !== undefined && !(typeof attempts === 'number' && Number.isSafeInteger(attempts) && attempts >= 1)) {
    fail('.attempts', `expected a whole number of calls ≥ 1, got ${describeType(attempts)}.`);
  }
  if (replayedFrom !== undefined && (typeof replayedFrom !== 'string' || replayedFrom.length === 0)) {
    fail('.replayedFrom', `expected the id of the execution whose result was returned, got ${describeType(replayedFrom)}.`);
  }
  const parentExecutionId = record['parentExecutionId'];
  if (
    parentExecutionId !== undefined &&
    (typeof parentExecutionId !== 'string' || parentExecutionId.length === 0 || parentExecutionId.length > MAX_LABEL_LENGTH)
  ) {
    fail('.parentExecutionId', `expected the id of the execution the call was made from, got ${describeType(parentExecutionId)}.`);
  }
  if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || idempotencyKey.length === 0 || idempotencyKey.length > MAX_LABEL_LENGTH)) {
    fail('.idempotencyKey', `expected the call's idempotency key (1–${MAX_LABEL_LENGTH} characters), got ${describeType(idempotencyKey)}.`);
  }
  // A frozen trace (the runtime records those) cannot change after this
  // check, so it is kept as given: copying it on every execution would cost
  // more than the rest of recording.
  const keptRepairs = repairs === undefined ? undefined : toTraceRepairs(repairs);
  if (repairs !== undefined && (keptRepairs === undefined || keptRepairs.length !== (repairs as unknown[]).length)) {
    fail('.repairs', 'expected a list of { rule, pointer, from, to }; build it with toTraceRepairs().');
  }
  // Repairs made by toTraceRepairs (as the runtime passes them) are frozen, entries too.
  const repairsFrozen =
    repairs === undefined ||
    (Object.isFrozen(repairs) &&
      (repairs as ToolExecutionTraceRepair[]).every(
        (entry, index) => Object.isFrozen(entry) && sameRepair(entry, (keptRepairs as ToolExecutionTraceRepair[])[index]),
      ));
  const hooksFrozen = hooks === undefined || checkTraceHooks(hooks, fail);
  if (
    Object.isFrozen(record) &&
    (error === undefined || Object.isFrozen(error)) &&
    (approval === undefined || Object.isFrozen(approval)) &&
    repairsFrozen &&
    hooksFrozen
  ) {
    if (error !== undefined) checkTraceError(error, fail);
    if (approval !== undefined) checkTraceApproval(approval, fail);
    return record as unknown as ToolExecutionTrace;
  }
  const copy: { -readonly [K in keyof ToolExecutionTrace]: ToolExecutionTrace[K] } = {
    executionId: executionId as string,
    planId,
    toolName: toolName as string,
    startedAt: startedAt as string,
    endedAt: endedAt as string,
    durationMs: durationMs as number,
    resultSizeBytes: resultSizeBytes as number,
    success: success as boolean,
  };
  if (error !== undefined) {
    const { name, code, message } = checkTraceError(error, fail);
    copy.error = Object.freeze({ name, code, message });
  }
  if (approval !== undefined) copy.approval = copyTraceApproval(checkTraceApproval(approval, fail));
  if (attempts !== undefined) copy.attempts = attempts as number;
  if (replayedFrom !== undefined) copy.replayedFrom = replayedFrom as string;
  if (parentExecutionId !== undefined) copy.parentExecutionId = parentExecutionId as string;
  if (idempotencyKey !== undefined) copy.idempotencyKey = idempotencyKey as string;
  if (keptRepairs !== undefined) copy.repairs = keptRepairs;
  if (hooks !== undefined) copy.hooks = Object.freeze((hooks as ToolExecutionTraceHook[]).map(copyTraceHook));
  return Object.freeze(copy);
}

const HOOK_OUTCOMES: readonly unknown[] = ['continue', 'rewrite', 'refuse', 'replace', 'redact', 'withhold', 'failed'];
// Hooks are configuration: more than this around one call is a mistake, and a trace is kept whole.
const MAX_TRACE_HOOKS = 100;

/**
 * Checks the hooks of a trace in one pass (a plain loop: the runtime records
 * them on every execution that has hooks) and tells whether the list and
 * every entry in it are frozen, so that the trace can be kept as given.
 */
function checkTraceHooks(hooks: unknown, fail: (field: string, message: string) => never): boolean {
  if (!Array.isArray(hooks) || hooks.length > MAX_TRACE_HOOKS) {
    fail(
      '.hooks',
      `expected a list of at most ${MAX_TRACE_HOOKS} { hook, stage, decision, durationMs, noted?, redactions?, reason? }, got ${describeType(hooks)}.`,
    );
  }
  const list = hooks as unknown[];
  let frozen = Object.isFrozen(list);
  for (let index = 0; index < list.length; index++) {
    const entry = list[index] as Record<string, unknown> | null;
    if (typeof entry !== 'object' || entry === null) fail(`.hooks[${index}]`, `expected { hook, stage, decision, durationMs }, got ${describeType(entry)}.`);
    // Read one by one, and the field's path built only for a failure: this runs on every execution that has hooks.
    const record = entry as Record<string, unknown>;
    const hook = record['hook'];
    if (typeof hook !== 'string' || hook.length === 0) fail(`.hooks[${index}].hook`, `expected the hook's name, got ${describeType(hook)}.`);
    const stage = record['stage'];
    if (stage !== 'before' && stage !== 'after' && stage !== 'error')
      fail(`.hooks[${index}].stage`, `expected 'before', 'after' or 'error', got ${describeType(stage)}.`);
    const decision = record['decision'];
    if (decision !== 'continue' && !HOOK_OUTCOMES.includes(decision)) {
      fail(`.hooks[${index}].decision`, `expected one of ${HOOK_OUTCOMES.join(', ')}, got ${describeType(decision)}.`);
    }
    const durationMs = record['durationMs'];
    if (typeof durationMs !== 'number' || !(durationMs >= 0) || durationMs === Infinity) {
      fail(`.hooks[${index}].durationMs`, `expected a finite number of milliseconds ≥ 0, got ${describeType(durationMs)}.`);
    }
    const noted = record['noted'];
    if (noted !== undefined && typeof noted !== 'boolean') fail(`.hooks[${index}].noted`, `expected true or false, got ${describeType(noted)}.`);
    const reason = record['reason'];
    if (reason !== undefined && typeof reason !== 'string') fail(`.hooks[${index}].reason`, `expected a string, got ${describeType(reason)}.`);
    const redactions = record['redactions'];
    if (redactions !== undefined) {
      if (!areRedactionCounts(redactions)) {
        fail(`.hooks[${index}].redactions`, `expected { rule: count ≥ 1 } for at most ${MAX_TRACE_HOOKS} rules, got ${describeType(redactions)}.`);
      }
      if (!Object.isFrozen(redactions)) frozen = false;
    }
    if (!Object.isFrozen(record)) frozen = false;
  }
  return frozen;
}

function areRedactionCounts(redactions: unknown): boolean {
  if (typeof redactions !== 'object' || redactions === null || Array.isArray(redactions)) return false;
  const counts = Object.entries(redactions);
  return (
    counts.length <= MAX_TRACE_HOOKS &&
    counts.every(([rule, count]) => rule.length > 0 && rule.length <= MAX_LABEL_LENGTH && Number.isSafeInteger(count) && (count as number) >= 1)
  );
}

function copyTraceHook(entry: ToolExecutionTraceHook): ToolExecutionTraceHook {
  const copy: { -readonly [K in keyof ToolExecutionTraceHook]: ToolExecutionTraceHook[K] } = {
    hook: safeMessage(entry.hook, MAX_LABEL_LENGTH),
    stage: entry.stage,
    decision: entry.decision,
    durationMs: entry.durationMs,
  };
  if (entry.noted === true) copy.noted = true;
  if (entry.redactions !== undefined) copy.redactions = Object.freeze({ ...entry.redactions });
  // A reason written by a hook is kept like an error message: redacted and capped.
  if (entry.reason !== undefined) copy.reason = safeMessage(entry.reason);
  return Object.freeze(copy);
}

function sameRepair(given: ToolExecutionTraceRepair, kept: ToolExecutionTraceRepair | undefined): boolean {
  return kept !== undefined && given.rule === kept.rule && given.pointer === kept.pointer && given.from === kept.from && given.to === kept.to;
}

const APPROVAL_OUTCOMES: readonly unknown[] = ['approved', 'denied', 'withdrawn'];
const APPROVAL_SCOPES: readonly unknown[] = ['once', 'tool', 'call'];

function checkTraceApproval(approval: unknown, fail: (field: string, message: string) => never): ToolExecutionTraceApproval {
  if (typeof approval !== 'object' || approval === null || Array.isArray(approval)) {
    fail('.approval', `expected { decision, decidedBy, waitedMs, scope?, remembered?, requestId?, reason? }, got ${describeType(approval)}.`);
  }
  const { decision, decidedBy, scope, waitedMs, requestId, reason, remembered } = approval as Record<string, unknown>;
  if (!APPROVAL_OUTCOMES.includes(decision)) fail('.approval.decision', `expected 'approved', 'denied' or 'withdrawn', got ${describeType(decision)}.`);
  if (typeof decidedBy !== 'string' || decidedBy.length === 0) fail('.approval.decidedBy', `expected who decided, got ${describeType(decidedBy)}.`);
  if (scope !== undefined && !APPROVAL_SCOPES.includes(scope)) fail('.approval.scope', `expected 'once', 'tool' or 'call', got ${describeType(scope)}.`);
  if (typeof waitedMs !== 'number' || !Number.isFinite(waitedMs) || waitedMs < 0) {
    fail('.approval.waitedMs', `expected a finite number of milliseconds ≥ 0, got ${describeType(waitedMs)}.`);
  }
  if (requestId !== undefined && (typeof requestId !== 'string' || requestId.length === 0)) {
    fail('.approval.requestId', `expected the id of the request, got ${describeType(requestId)}.`);
  }
  if (reason !== undefined && typeof reason !== 'string') fail('.approval.reason', `expected a string, got ${describeType(reason)}.`);
  if (remembered !== undefined && typeof remembered !== 'boolean') fail('.approval.remembered', `expected true or false, got ${describeType(remembered)}.`);
  return approval as ToolExecutionTraceApproval;
}

function copyTraceApproval(approval: ToolExecutionTraceApproval): ToolExecutionTraceApproval {
  const copy: { -readonly [K in keyof ToolExecutionTraceApproval]: ToolExecutionTraceApproval[K] } = {
    decision: approval.decision,
    decidedBy: safeMessage(approval.decidedBy, MAX_LABEL_LENGTH),
    waitedMs: approval.waitedMs,
  };
  if (approval.remembered === true) copy.remembered = true;
  if (approval.scope !== undefined) copy.scope = approval.scope;
  if (approval.requestId !== undefined) copy.requestId = safeMessage(approval.requestId, MAX_LABEL_LENGTH);
  // A reason written by a person or a handler is kept like an error message: redacted and capped.
  if (approval.reason !== undefined) copy.reason = safeMessage(approval.reason);
  return Object.freeze(copy);
}

function checkTraceError(error: unknown, fail: (field: string, message: string) => never): ToolExecutionTraceError {
  const { name, code, message } = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  if (typeof name !== 'string' || typeof code !== 'string' || typeof message !== 'string') {
    fail('.error', 'expected { name, code, message } strings; build it from the thrown value with toTraceError().');
  }
  return { name: name as string, code: code as string, message: message as string };
}
