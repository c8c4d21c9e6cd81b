import { asClause, messageOf } from '@ca/domain';
import { ToolRuntimeError } from './tool-runtime-error';

/**
 * What went wrong with a plan's call journal:
 * - `'failed'`: the journal could not record or read a call (its store is down, it threw);
 * - `'mismatch'`: a journal that replays by position (an engine such as Restate) holds
 *   another call at this place — the plan's code no longer makes the calls it made
 *   before the restart (other tool, other arguments, other step id).
 */
export type ToolJournalProblem = 'failed' | 'mismatch';

/** Options of {@link ToolJournalError}. */
export interface ToolJournalErrorOptions {
  readonly problem: ToolJournalProblem;
  readonly toolName: string;
  readonly planId: string;
  /** The caller's step id of the call. */
  readonly step: string;
  /** The journal, as it describes itself (`memory`, `restate workflow …`). */
  readonly journal: string;
  /** For `'mismatch'`: what the journal holds at this place, in words. */
  readonly recorded?: string;
  readonly cause?: unknown;
}

/**
 * A call of a plan that keeps a journal could not be recorded or replayed.
 * Nothing of the tool ran after the failure was detected.
 *
 * Codes: `TOOL_JOURNAL_FAILED`, `TOOL_JOURNAL_MISMATCH`.
 */
export class ToolJournalError extends ToolRuntimeError {
  declare readonly code: 'TOOL_JOURNAL_FAILED' | 'TOOL_JOURNAL_MISMATCH';
  declare readonly toolName: string;
  declare readonly planId: string;
  readonly problem: ToolJournalProblem;
  readonly step: string;
  readonly journal: string;

  constructor(options: ToolJournalErrorOptions) {
    const { problem, toolName, planId, step, journal, recorded, cause } = options;
    const message =
      problem === 'mismatch'
        ? `Tool '${toolName}' in plan '${planId}', step '${step}': the journal (${journal}) holds another call at this place (${recorded ?? 'another call'}), so the plan no longer makes the calls it made before it was resumed. Make the plan's calls depend only on the plan's input and the results of earlier calls, and keep step ids stable.`
        : `Tool '${toolName}' in plan '${planId}', step '${step}': the journal (${journal}) failed: ${asClause(messageOf(cause))}. The call was not made; run the plan again once the journal is reachable.`;
    super(problem === 'mismatch' ? 'TOOL_JOURNAL_MISMATCH' : 'TOOL_JOURNAL_FAILED', message, options);
    this.problem = problem;
    this.step = step;
    this.journal = journal;
  }
}
