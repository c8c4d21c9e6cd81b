import { messageOf } from '@ca/domain';
import { ToolRuntimeError, type ToolRuntimeErrorOptions } from './tool-runtime-error';

/** One name offered by more than one source. */
export interface DuplicateToolName {
  readonly toolName: string;
  /** Ids of the sources offering it. */
  readonly sourceIds: readonly string[];
}

/**
 * Options of {@link ToolRegistrationError}, by problem:
 * - `'unavailable'`: the tool was listed but cannot be offered (`reason` says why: an invalid schema, name or timeout);
 * - `'duplicate'`: two sources offer tools of the same name;
 * - `'not-provided'`: a source listed a tool but its `get` failed (the failure is the cause);
 * - `'not-a-tool'`: a source's `get` returned something without `execute()`.
 */
export type ToolRegistrationErrorOptions =
  | { readonly problem: 'unavailable'; readonly toolName: string; readonly planId?: string; readonly reason: string; readonly cause?: unknown }
  | { readonly problem: 'duplicate'; readonly duplicates: readonly DuplicateToolName[] }
  | { readonly problem: 'not-provided'; readonly toolName: string; readonly planId?: string; readonly sourceId: string; readonly cause: unknown }
  | { readonly problem: 'not-a-tool'; readonly toolName: string; readonly planId?: string; readonly sourceId: string };

/** What went wrong, in {@link ToolRegistrationErrorOptions}' terms. */
export type ToolRegistrationProblem = ToolRegistrationErrorOptions['problem'];

/**
 * A tool cannot be offered: a duplicate name across sources, an invalid
 * descriptor, a schema that cannot be compiled, a source that cannot provide
 * what it listed. Raised at discovery, or when such a tool is asked for.
 *
 * Code: `TOOL_REGISTRATION_FAILED`.
 */
export class ToolRegistrationError extends ToolRuntimeError {
  declare readonly code: 'TOOL_REGISTRATION_FAILED';
  /** What went wrong. */
  readonly problem: ToolRegistrationProblem;
  /** For `'duplicate'`: every name offered twice, with its sources. */
  readonly duplicates: readonly DuplicateToolName[];

  constructor(options: ToolRegistrationErrorOptions) {
    super('TOOL_REGISTRATION_FAILED', describeProblem(options), options as ToolRuntimeErrorOptions);
    this.problem = options.problem;
    this.duplicates = Object.freeze(options.problem === 'duplicate' ? [...options.duplicates] : []);
  }
}

function describeProblem(options: ToolRegistrationErrorOptions): string {
  switch (options.problem) {
    case 'unavailable':
      return `Tool '${options.toolName}' is unavailable: ${options.reason}`;
    case 'duplicate': {
      const names = options.duplicates.map(({ toolName, sourceIds }) => `'${toolName}' (from ${sourceIds.map((id) => `'${id}'`).join(' and ')})`);
      return `Two sources offer a tool of the same name: ${names.join(', ')}. Tool names must be unique across a runtime; rename or namespace one of them (e.g. with wrapTool from @ca/adapters-wrapped), or remove one source.`;
    }
    case 'not-provided':
      return `Source '${options.sourceId}' listed tool '${options.toolName}' but could not provide it: ${messageOf(options.cause)}.`;
    case 'not-a-tool':
      return `Source '${options.sourceId}' returned something without an execute() method for tool '${options.toolName}'. A ToolInstance must implement execute(input, ctx).`;
  }
}
