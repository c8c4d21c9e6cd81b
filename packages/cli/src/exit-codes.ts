/**
 * Exit codes of the `agents` command. Scripts can rely on them.
 *
 * | code | meaning |
 * | --- | --- |
 * | 0 | success |
 * | 1 | a tool failed, or a plan step did not do what it was expected to |
 * | 2 | invalid usage, configuration or plan file |
 * | 3 | the plan's policy refused a tool (read-only or checkpoint-required) |
 * | 4 | a tool or plan was not found |
 * | 130 | cancelled (Ctrl-C, `agents plan cancel`, or a deadline) |
 */
export const EXIT_CODES = Object.freeze({
  ok: 0,
  failed: 1,
  usage: 2,
  refused: 3,
  notFound: 4,
  cancelled: 130,
} as const);

/** One of {@link EXIT_CODES}. */
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];
