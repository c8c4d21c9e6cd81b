import { CaError } from '@ca/domain';

/**
 * Stable codes of {@link SkillError}.
 *
 * - `SKILL_PATH_OUTSIDE_ROOT` — a requested path (or `SKILL.md` at activation) resolves outside the skill folder
 *   (`..`, absolute, a link pointing out, a folder swapped for a link while it was opened).
 * - `SKILL_PATH_INVALID` — a requested path is empty or holds a NUL character.
 * - `SKILL_FILE_NOT_FOUND` — a requested bundled file does not exist, or is a folder.
 * - `SKILL_FILE_NOT_REGULAR` — a requested bundled file, or `SKILL.md` at activation, is a FIFO, socket or device
 *   (refused without blocking).
 * - `SKILL_FILE_TOO_LARGE` — a bundled file, or `SKILL.md` at activation, is larger than its configured cap.
 * - `SKILL_FILE_READ_FAILED` — reading a file failed for another reason (permissions, I/O).
 * - `SKILL_SCRIPT_FAILED` — a bundled script exited with a non-zero status or could not be started.
 * - `SKILL_SCRIPT_TIMEOUT` — a bundled script ran longer than `scriptTimeoutMs` and its process group was killed.
 * - `SKILL_NOT_FOUND` — `source.get(name)` was asked for a tool whose skill discovery skipped (the diagnostic code
 *   is in `diagnosticCode`); a name the source never offered is a `ToolNotFoundError` of `@ca/tool-lifecycle`.
 * - `SKILL_INVALID` — discovery skipped the skill (the diagnostic code is in `diagnosticCode`).
 * - `SKILL_INVALID_SETTINGS` — the adapter settings are malformed.
 */
export type SkillErrorCode =
  | 'SKILL_PATH_OUTSIDE_ROOT'
  | 'SKILL_PATH_INVALID'
  | 'SKILL_FILE_NOT_FOUND'
  | 'SKILL_FILE_NOT_REGULAR'
  | 'SKILL_FILE_TOO_LARGE'
  | 'SKILL_FILE_READ_FAILED'
  | 'SKILL_SCRIPT_FAILED'
  | 'SKILL_SCRIPT_TIMEOUT'
  | 'SKILL_NOT_FOUND'
  | 'SKILL_INVALID'
  | 'SKILL_INVALID_SETTINGS';

/** Options of {@link SkillError}: the facts; the message is built from them. */
export interface SkillErrorOptions {
  /** Stable code, see {@link SkillErrorCode}. */
  readonly code: SkillErrorCode;
  /**
   * What happened, continuing a sentence whose subject the error writes from
   * its fields — `Tool '<toolName>' in plan '<planId>'`, else `The skill at
   * '<skillPath>'`, else `The Agent Skills adapter` — e.g. `refused 'a.md':
   * it is a fifo, not a regular file`. No final period.
   */
  readonly problem: string;
  /** What to do about it, as whole sentences, when there is something to do. */
  readonly remedy?: string;
  /** The tool concerned (`skill.<name>` or `skill.<name>.script.<stem>`), when known. */
  readonly toolName?: string;
  /** The plan concerned, when known. */
  readonly planId?: string;
  /** The skill folder concerned, when known. */
  readonly skillPath?: string;
  /** The path the caller asked for (relative to the skill folder), when the error is about one. */
  readonly requestedPath?: string;
  /** For `SKILL_INVALID` and a skipped skill's `SKILL_NOT_FOUND`: the code of the diagnostic that made discovery skip the skill. */
  readonly diagnosticCode?: string;
  /** The underlying error, per ES2022 `cause`. */
  readonly cause?: unknown;
}

/**
 * An error of the Agent Skills adapter. Expected failures inside a tool's
 * `execute` (a path outside the skill, a missing or too large file, a script
 * that fails or times out) are returned as failed results carrying this
 * error; invalid settings and unknown tool names are thrown.
 *
 * Tell it apart with {@link SkillError.isInstance} and `code`, which keep
 * working when two copies of this package are installed.
 */
export class SkillError extends CaError {
  declare readonly code: SkillErrorCode;
  /** The skill folder concerned, when known. */
  declare readonly skillPath?: string;
  /** The path the caller asked for, when the error is about one. */
  declare readonly requestedPath?: string;
  /** For `SKILL_INVALID`: the diagnostic code that made discovery skip the skill. */
  declare readonly diagnosticCode?: string;

  /**
   * @param options - Code, problem, remedy and the details named in {@link SkillErrorOptions}.
   * @throws Never.
   */
  constructor(options: SkillErrorOptions) {
    super(options.code, skillErrorMessage(options), options);
    if (options.skillPath !== undefined) this.skillPath = options.skillPath;
    if (options.requestedPath !== undefined) this.requestedPath = options.requestedPath;
    if (options.diagnosticCode !== undefined) this.diagnosticCode = options.diagnosticCode;
  }
}

/** The message of a {@link SkillError}: who (from the fields), what happened, what to do. */
function skillErrorMessage(options: SkillErrorOptions): string {
  const { toolName, planId, skillPath, remedy } = options;
  const subject =
    toolName !== undefined
      ? `Tool '${toolName}'${planId === undefined ? '' : ` in plan '${planId}'`}`
      : skillPath !== undefined
        ? `The skill at '${skillPath}'`
        : 'The Agent Skills adapter';
  // Trailing periods trimmed by a loop: the problem may quote a script's output,
  // and a regular expression over it would be one more place to backtrack.
  const text = String(options.problem);
  let end = text.length;
  while (end > 0 && text[end - 1] === '.') end--;
  return `${subject} ${text.slice(0, end)}.${remedy === undefined || remedy === '' ? '' : ` ${remedy}`}`;
}
