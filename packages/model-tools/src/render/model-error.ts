import { asClause, safeMessage } from '@ca/domain';
import { UNANSWERED_DECIDER } from '../approval/framework-approvals';
import type { DeclinedRepair } from '../repair/repair-arguments';
import { scrubPaths } from './scrub-paths';

/** What a model-facing error text may say besides the error's own fields. */
export interface ModelErrorContext {
  /** The tool's name as the model knows it. */
  readonly providerName: string;
  /** Paths the model may see (the plan's bound resources). */
  readonly allowedRoots: readonly string[];
  /** Maps a runtime tool name to the model's name (for suggestions), when known. */
  readonly toProviderName?: (name: string) => string | undefined;
  /** Places the repair left alone because two rules disagreed. */
  readonly declined?: readonly DeclinedRepair[];
}

const MAX_ISSUES = 8;
const DECLINED_TEXT: Readonly<Record<string, string>> = {
  'json-string': 'JSON text',
  'single-to-array': 'a single item of the array',
  'string-to-scalar': 'a number or boolean written as text',
};

/**
 * The text a model reads for a failed call: `Error CODE: what happened. What
 * to do.` — built from the error's fields (code, rule, denial, issues), not
 * from its message, wherever the error is one the runtime knows. The message
 * of any other error (a tool's own) is used with secrets redacted, capped at
 * 4 KiB, and host paths outside the plan's resources hidden. Never a stack.
 * @throws Never.
 */
export function modelErrorText(error: unknown, context: ModelErrorContext): string {
  try {
    return describe(error as Record<string, unknown>, context);
  } catch {
    return 'Error UNKNOWN: the tool failed. Do not retry it as is.';
  }
}

function describe(error: Record<string, unknown> | null | undefined, context: ModelErrorContext): string {
  const code = typeof error?.['code'] === 'string' ? (error['code'] as string) : 'UNKNOWN';
  const tool = `'${context.providerName}'`;
  // Free text from an error (a person's reason, a tool's message) may name host paths: only those inside the plan's resources stay.
  const text = (field: string): string | undefined =>
    typeof error?.[field] === 'string' ? scrubPaths(safeMessage(error[field] as string, 500), context.allowedRoots) : undefined;
  switch (code) {
    case 'TOOL_ACCESS_DENIED':
      return error?.['rule'] === 'network'
        ? `Error ${code}: ${tool} reaches outside (network, remote services) and this plan denies the network, so it was not run. Do not call tools that reach the network in this plan.`
        : `Error ${code}: ${tool} changes things and this plan is read-only, so it was not run. Use tools that only read, or tell the user the change needs a plan that may write.`;
    case 'TOOL_CHECKPOINT_REQUIRED':
      return `Error ${code}: this plan requires every change to be undoable and ${tool} cannot be undone, so it was not run. Use a tool whose changes can be undone.`;
    case 'TOOL_APPROVAL_DENIED': {
      const reason = text('reason');
      // Only a decision someone made is a denial; the rest is approval that was never given, said as what happened.
      switch (error?.['denial']) {
        case 'denied':
          if (error?.['decidedBy'] === UNANSWERED_DECIDER) {
            return `Error ${code}: this call of ${tool} needs a person's approval, and no approval was asked for or given for it (nobody denied it), so it was not run. Do not repeat it now; continue without it or ask the user to approve it.`;
          }
          return `Error ${code}: a person denied this call of ${tool}${reason === undefined ? '' : ` (${reason})`}. Do not repeat it; continue without it or ask the user.`;
        case 'rule':
          return `Error ${code}: a rule of the service forbids this call of ${tool}${reason === undefined ? '' : ` (${reason})`}. Do not repeat it; continue without it.`;
        case 'no-handler':
          return `Error ${code}: this call of ${tool} needs a person's approval, and this service has nobody to ask, so it was not run (nobody denied it). Do not repeat it; continue without it or tell the user it needs approval.`;
        case 'timed-out':
          return `Error ${code}: this call of ${tool} needs a person's approval, and no answer came in time, so it was not run (nobody denied it). Do not repeat it now; continue without it or ask the user to approve it.`;
        case 'handler-failed':
          return `Error ${code}: this call of ${tool} needs a person's approval, and asking for it failed, so it was not run (nobody denied it). Do not repeat it now; continue without it or tell the user.`;
        default:
          return `Error ${code}: this call of ${tool} needs a person's approval and none was given. Do not repeat it now; continue without it or ask the user to approve it.`;
      }
    }
    case 'TOOL_SCHEMA_VALIDATION_FAILED':
      return schemaText(error, code, tool, context);
    case 'TOOL_CANCELLED':
      return `Error ${code}: the plan was cancelled; ${tool} did not run to the end. Stop calling tools.`;
    case 'TOOL_PLAN_ENDED':
      return `Error ${code}: the plan has ended. Stop calling tools.`;
    case 'TOOL_NOT_FOUND':
    case 'MODEL_TOOL_UNKNOWN':
      return notFoundText(error, code, tool, context);
    case 'MODEL_ARGUMENTS_INVALID_JSON':
      return `Error ${code}: the arguments of ${tool} are not valid JSON (${text('detail') ?? 'they do not parse'}). Call it again with the arguments as one JSON object.`;
    case 'TOOL_LIMIT_EXCEEDED':
      return `Error ${code}: ${tool} may not be called again now (${text('detail') ?? `its ${String(error?.['limit'] ?? 'call')} limit was reached`}). Continue without it or try later.`;
    case 'TOOL_INVALID_ARGUMENT':
      // A plan that keeps a call journal names every call by its call id; one without a usable id is refused (the model cannot fix that).
      if (error?.['argument'] === 'options.step') {
        return `Error ${code}: this plan records every call under the id the model API gives it, and this call of ${tool} came without an id that can name it, so it was not run. Stop calling tools and tell the user.`;
      }
      return `Error ${code}: ${tool} failed: ${asClause(text('message') ?? 'no reason given')}. Check the arguments; do not repeat the same call unchanged.`;
    case 'TOOL_DEFINITION_CHANGED':
      return definitionChangedText(error, code, tool, context);
    case 'TOOL_ACTIVATION_FAILED':
    case 'TOOL_REGISTRATION_FAILED':
      return `Error ${code}: ${tool} is not available right now. Continue without it.`;
    case 'TOOL_EXECUTION_FAILED':
      return `Error ${code}: ${tool} failed: ${asClause(scrubPaths(causeText(error), context.allowedRoots))}. Check the arguments; do not repeat the same call unchanged.`;
    case 'TOOL_RESULT_NOT_FOUND':
      return `Error ${code}: this plan has no stored result with that handle (a handle of another plan, or of one that ended, is not valid here). Use a handle this plan gave you, or run the tool that produced it again.`;
    case 'TOOL_RESULT_READ_INVALID':
      return `Error ${code}: ${text('detail') ?? 'the read does not fit the stored result'}. ${text('advice') ?? 'Ask for a part that exists.'}`;
    case 'TOOL_RESULT_STORE_FAILED':
      return `Error ${code}: the stored result could not be read (${text('detail') ?? 'the store failed'}). Run the tool again with arguments that ask for less.`;
    default:
      return `Error ${code}: ${tool} failed: ${asClause(text('message') ?? 'no reason given')}. Check the arguments; do not repeat the same call unchanged.`;
  }
}

function schemaText(error: Record<string, unknown> | null | undefined, code: string, tool: string, context: ModelErrorContext): string {
  if (error?.['direction'] === 'output') {
    return `Error ${code}: ${tool} returned a result that does not match its own output schema. The tool is at fault, not your arguments; continue without it.`;
  }
  const issues = Array.isArray(error?.['issues']) ? (error['issues'] as { message?: unknown }[]) : [];
  const listed = issues
    .slice(0, MAX_ISSUES)
    .map((issue) => `- ${safeMessage(typeof issue?.message === 'string' ? issue.message : 'a value does not match', 300)}`);
  if (issues.length > MAX_ISSUES) listed.push(`- and ${issues.length - MAX_ISSUES} more`);
  for (const declined of context.declined ?? []) {
    const readings = declined.rules.map((rule) => DECLINED_TEXT[rule] ?? rule).join(' or as ');
    listed.push(`- ${declined.pointer || 'the arguments'} was left as sent: it could be read as ${readings}. Send it with the exact type the schema asks for.`);
  }
  return `Error ${code}: the arguments of ${tool} do not match its input schema; it was not run.\n${listed.join('\n')}\nFix the arguments and call it again.`;
}

/** A quarantined tool: what changed since its definition was pinned (each line capped, at most a few). */
function definitionChangedText(error: Record<string, unknown> | null | undefined, code: string, tool: string, context: ModelErrorContext): string {
  const what =
    error?.['change'] === 'new'
      ? 'is new since the tool definitions were pinned (locked)'
      : error?.['change'] === 'removed'
        ? 'is no longer offered by its server, though its definition is pinned (locked)'
        : 'changed since its definition was pinned (locked)';
  const diff = Array.isArray(error?.['diff']) ? (error['diff'] as unknown[]).filter((line): line is string => typeof line === 'string') : [];
  const lines = diff.slice(0, MAX_ISSUES).map((line) => `  ${scrubPaths(safeMessage(line, 300), context.allowedRoots)}`);
  if (diff.length > MAX_ISSUES) lines.push(`  … and ${diff.length - MAX_ISSUES} more`);
  return `Error ${code}: ${tool} ${what}, so it is quarantined and was not run.${lines.length === 0 ? '' : `\n${lines.join('\n')}`}\nDo not call it again; tell the user its definition changed and needs review (accepted with 'agents tools lock').`;
}

function notFoundText(error: Record<string, unknown> | null | undefined, code: string, tool: string, context: ModelErrorContext): string {
  const suggestions = Array.isArray(error?.['suggestions']) ? (error['suggestions'] as unknown[]) : [];
  const named = suggestions
    .filter((name): name is string => typeof name === 'string')
    .map((name) => context.toProviderName?.(name) ?? name)
    .slice(0, 3);
  const hint = named.length === 0 ? '' : ` Tools with close names: ${named.map((name) => `'${name}'`).join(', ')}.`;
  return `Error ${code}: there is no tool ${tool} in this plan.${hint} Call only the tools you were given.`;
}

/** Free text from a tool or a server, as a model may read it: secrets redacted, capped, host paths outside the plan hidden. */
export function modelSafeText(text: string, allowedRoots: readonly string[], maxLength = 2_000): string {
  return scrubPaths(safeMessage(text, maxLength), allowedRoots);
}

/** The innermost message of a tool's own failure, made safe to show. */
function causeText(error: Record<string, unknown> | null | undefined): string {
  let current: unknown = error?.['cause'] ?? error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null && (current as { cause?: unknown }).cause !== undefined; depth++) {
    current = (current as { cause?: unknown }).cause;
  }
  const message =
    typeof current === 'string'
      ? current
      : typeof current === 'object' && current !== null && typeof (current as { message?: unknown }).message === 'string'
        ? (current as { message: string }).message
        : 'no reason given';
  return safeMessage(message, 2_000);
}
