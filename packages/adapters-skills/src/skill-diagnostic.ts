/** How serious a {@link SkillDiagnostic} is: an `error` skips the skill, a `warning` does not (unless `strict`). */
export type SkillDiagnosticSeverity = 'error' | 'warning';

/**
 * Stable codes of {@link SkillDiagnostic}. Lenient defaults in brackets;
 * with `strict: true` every warning becomes an error and skips the skill.
 *
 * - `SKILL_ROOT_NOT_FOUND` [warning] — a configured root does not exist or is not a folder.
 * - `SKILL_READ_FAILED` [error] — `SKILL.md` could not be opened or read, or the folder could not be probed.
 * - `SKILL_FILE_NOT_REGULAR` [error] — `SKILL.md` is a FIFO, socket or device (refused without blocking).
 * - `SKILL_PATH_OUTSIDE_ROOT` [error] — `SKILL.md` is a link to a file outside the skill folder.
 * - `SKILL_NO_FRONTMATTER` [error] — `SKILL.md` does not start with a `---` line.
 * - `SKILL_FRONTMATTER_UNTERMINATED` [error] — the file ends before the closing `---` line.
 * - `SKILL_FRONTMATTER_TOO_LARGE` [error] — no closing `---` within `maxFrontmatterBytes`.
 * - `SKILL_YAML_INVALID` [error] — the frontmatter is not valid YAML or not a mapping.
 * - `SKILL_DESCRIPTION_MISSING` [error] — `description` is absent, empty or not a string.
 * - `SKILL_NAME_MISSING` [warning] — `name` is absent; the folder name is used.
 * - `SKILL_NAME_INVALID` [warning] — `name` breaks the spec's rules (1–64 lowercase letters, digits, single hyphens);
 *   an error when `skill.<name>` would not be a valid tool name at all.
 * - `SKILL_NAME_MISMATCH` [warning] — `name` differs from the folder name.
 * - `SKILL_DESCRIPTION_TOO_LONG` [warning] — `description` is over 1,024 characters.
 * - `SKILL_COMPATIBILITY_TOO_LONG` [warning] — `compatibility` is over 500 characters.
 * - `SKILL_FIELD_INVALID` [warning] — `license`, `compatibility`, `metadata` or `allowed-tools` has the wrong type; it is ignored or converted.
 * - `SKILL_UNKNOWN_FIELD` [warning] — a key the spec does not define; kept in `metadata`.
 * - `SKILL_DUPLICATE_NAME` [error] — another skill found earlier has the same name; this one is skipped.
 * - `SKILL_SCRIPT_SKIPPED` [warning] — a file under `scripts/` is not offered as a tool (no interpreter, not executable,
 *   a stem that is not a valid tool name, a duplicate stem, a path outside the skill).
 */
export type SkillDiagnosticCode =
  | 'SKILL_ROOT_NOT_FOUND'
  | 'SKILL_READ_FAILED'
  | 'SKILL_FILE_NOT_REGULAR'
  | 'SKILL_PATH_OUTSIDE_ROOT'
  | 'SKILL_NO_FRONTMATTER'
  | 'SKILL_FRONTMATTER_UNTERMINATED'
  | 'SKILL_FRONTMATTER_TOO_LARGE'
  | 'SKILL_YAML_INVALID'
  | 'SKILL_DESCRIPTION_MISSING'
  | 'SKILL_NAME_MISSING'
  | 'SKILL_NAME_INVALID'
  | 'SKILL_NAME_MISMATCH'
  | 'SKILL_DESCRIPTION_TOO_LONG'
  | 'SKILL_COMPATIBILITY_TOO_LONG'
  | 'SKILL_FIELD_INVALID'
  | 'SKILL_UNKNOWN_FIELD'
  | 'SKILL_DUPLICATE_NAME'
  | 'SKILL_SCRIPT_SKIPPED';

/** Something discovery noticed about one skill folder (or one root). */
export interface SkillDiagnostic {
  /** `error`: the skill was skipped; `warning`: it was loaded anyway. */
  readonly severity: SkillDiagnosticSeverity;
  /** Stable code, see {@link SkillDiagnosticCode}. */
  readonly code: SkillDiagnosticCode;
  /** Absolute path of the skill folder (of the root, for `SKILL_ROOT_NOT_FOUND`). */
  readonly path: string;
  /** What is wrong and what to do about it. */
  readonly message: string;
  /** The skill's name when known (from the frontmatter, else the folder name). */
  readonly skillName?: string;
  /** The frontmatter field concerned, when there is one. */
  readonly field?: string;
}
