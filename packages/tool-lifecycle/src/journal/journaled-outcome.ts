import { safeMessage } from '@ca/domain';
import { ToolCancelledError, type Change, type PlanContext } from '@ca/tool-context';
import { ToolExecutionError, ToolOutcomeUnknownError, type ToolExecutionFailure } from '../errors';
import type { ToolResult } from '../tool';
import type { JournaledError, JournalOutcome } from './call-journal';

/** Longest name or code a journaled error keeps. */
const MAX_LABEL_LENGTH = 200;
/** How deep a journaled error's causes go. */
const MAX_CAUSE_DEPTH = 3;

/**
 * A failure as the journal keeps it: name, code and message as a trace keeps
 * them (secrets redacted, capped at 4 KiB), `retryable`, and for the runtime's
 * own errors what is needed to make them again (a tool failure's cause, a
 * cancellation's reason).
 */
export function journalError(error: unknown, depth = 0): JournaledError {
  const fields = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  let name = 'Error';
  let code = 'UNKNOWN';
  let message: string;
  try {
    if (typeof fields['name'] === 'string' && fields['name'].length > 0) name = safeMessage(fields['name'], MAX_LABEL_LENGTH);
    if (typeof fields['code'] === 'string' && fields['code'].length > 0) code = safeMessage(fields['code'], MAX_LABEL_LENGTH);
    message = safeMessage(typeof fields['message'] === 'string' ? fields['message'] : String(error));
  } catch {
    message = 'an error that could not be described';
  }
  const journaled: { -readonly [K in keyof JournaledError]: JournaledError[K] } = { name, code, message };
  if (typeof fields['retryable'] === 'boolean') journaled.retryable = fields['retryable'];
  if (ToolExecutionError.isInstance(error)) {
    journaled.failure = error.failure;
    if (error.cause !== undefined && depth < MAX_CAUSE_DEPTH) journaled.cause = journalError(error.cause, depth + 1);
  }
  if (ToolCancelledError.isInstance(error)) journaled.reason = safeMessage(error.reason, 1_000);
  if (ToolOutcomeUnknownError.isInstance(error)) {
    const { step, idempotencyKey, host, decidedBy, reason } = error;
    journaled.fields = {
      step,
      idempotencyKey,
      decidedBy,
      ...(host === undefined ? {} : { host }),
      ...(reason === undefined ? {} : { reason: safeMessage(reason, 1_000) }),
    };
  }
  return journaled;
}

/**
 * An error given back from the journal. A failed result's error is an `Error`
 * with the journaled name, code and message. What `execute` threw comes back
 * as the runtime's class for a cancellation (`ToolCancelledError`), a tool's
 * failure (`ToolExecutionError`) and an unknown outcome
 * (`ToolOutcomeUnknownError`); any other coded error thrown after the call was
 * decided (a limit, a hook's refusal of the output) as `ToolExecutionError`
 * with the journaled error as its cause.
 */
export function reviveError(journaled: JournaledError, toolName: string, planId: string, thrown = false): Error & { code?: string } {
  if (journaled.code === 'TOOL_CANCELLED')
    return new ToolCancelledError({ reason: journaled.reason ?? 'cancelled', toolName, planId, message: journaled.message });
  const fields = journaled.fields;
  if (journaled.code === 'TOOL_OUTCOME_UNKNOWN' && fields?.['step'] !== undefined && fields['idempotencyKey'] !== undefined) {
    return new ToolOutcomeUnknownError({
      toolName,
      planId,
      step: fields['step'],
      idempotencyKey: fields['idempotencyKey'],
      decidedBy: fields['decidedBy'] ?? 'runtime',
      ...(fields['host'] === undefined ? {} : { host: fields['host'] }),
      ...(fields['reason'] === undefined ? {} : { reason: fields['reason'] }),
    });
  }
  if (thrown && (journaled.code !== 'TOOL_EXECUTION_FAILED' || journaled.failure === undefined)) {
    return withMessage(new ToolExecutionError({ toolName, planId, cause: reviveError(journaled, toolName, planId) }), journaled.message);
  }
  if (journaled.code === 'TOOL_EXECUTION_FAILED' && journaled.failure !== undefined) {
    const cause = journaled.cause === undefined ? undefined : reviveError(journaled.cause, toolName, planId);
    // The message as it was first made (an invalid result's own description is not journaled).
    return withMessage(
      new ToolExecutionError({ toolName, planId, failure: journaled.failure as ToolExecutionFailure, ...(cause === undefined ? {} : { cause }) }),
      journaled.message,
    );
  }
  const error = new Error(journaled.message) as Error & { code?: string; retryable?: boolean; replayed?: boolean };
  error.name = journaled.name;
  error.code = journaled.code;
  if (journaled.retryable !== undefined) error.retryable = journaled.retryable;
  return error;
}

function withMessage<E extends Error>(error: E, message: string): E {
  Object.defineProperty(error, 'message', { value: message, configurable: true, writable: true, enumerable: false });
  return error;
}

/** The outcome of a call that returned, for the journal: JSON data only (the output was checked to be JSON by the output step). */
export function resultOutcome(
  executionId: string,
  result: ToolResult & { readonly handle?: unknown },
  sizeBytes: number,
  changes: readonly Change[],
): JournalOutcome {
  const outcome: { -readonly [K in string]: unknown } = { kind: 'result', executionId, ok: result.ok, sizeBytes };
  if (result.ok) outcome['output'] = result.output;
  else {
    outcome['error'] = journalError(result.error);
    if (result.output !== undefined) outcome['output'] = result.output;
  }
  if (result.content !== undefined) outcome['content'] = result.content;
  if (result.metadata !== undefined) outcome['metadata'] = result.metadata;
  if (result.handle !== undefined) outcome['handle'] = result.handle;
  if (changes.length > 0) outcome['changes'] = changes;
  return outcome as unknown as JournalOutcome;
}

/** The outcome of a call that threw, for the journal. */
export function thrownOutcome(executionId: string, error: unknown, changes: readonly Change[]): JournalOutcome {
  return changes.length > 0
    ? { kind: 'thrown', executionId, error: journalError(error), changes }
    : { kind: 'thrown', executionId, error: journalError(error) };
}

/** The changes an execution recorded in the plan since `from` (the length of `ctx.changes` before its call). */
export function changesOf(ctx: PlanContext, executionId: string, from: number): Change[] {
  const changes: Change[] = [];
  for (let index = from; index < ctx.changes.length; index++) {
    const change = ctx.changes[index] as Change;
    if (change.executionId === executionId) changes.push(change);
  }
  return changes;
}

/**
 * Puts a replayed call's changes back into the plan, as the execution that
 * made them recorded them — unless the plan has them already (a replay in the
 * process that made the call) — so that a resumed plan can roll back.
 */
export function restoreChanges(ctx: PlanContext, outcome: JournalOutcome): void {
  if (outcome.kind === 'unknown' || outcome.changes === undefined || outcome.changes.length === 0) return;
  const first = outcome.changes[0] as Change;
  for (let index = ctx.changes.length - 1; index >= 0; index--) {
    if ((ctx.changes[index] as Change).executionId === first.executionId) return;
  }
  for (const change of outcome.changes) ctx.recordChange(change);
}

/** The result a replayed `result` outcome stands for. */
export function replayedResult(outcome: Extract<JournalOutcome, { kind: 'result' }>, toolName: string, planId: string): ToolResult {
  const result: Record<string, unknown> = outcome.ok
    ? { ok: true, output: outcome.output }
    : { ok: false, error: reviveError(outcome.error ?? { name: 'Error', code: 'UNKNOWN', message: 'failed' }, toolName, planId) };
  if (!outcome.ok && outcome.output !== undefined) result['output'] = outcome.output;
  if (outcome.content !== undefined) result['content'] = outcome.content;
  if (outcome.metadata !== undefined) result['metadata'] = outcome.metadata;
  return result as unknown as ToolResult;
}
