import { ToolRuntimeError } from './tool-runtime-error';

/** Options of {@link ToolNotFoundError}. */
export interface ToolNotFoundErrorOptions {
  /** The name that was asked for. */
  readonly toolName: string;
  /** The plan, when the lookup happened in one. */
  readonly planId?: string;
  /** The source that was asked (`ToolSource.get`), when one source was; absent when the runtime looked in all. */
  readonly sourceId?: string;
  /** Close names that exist, best first (a few at most). */
  readonly suggestions?: readonly string[];
}

/**
 * No source (or not the source asked) offers a tool of the requested name.
 * The same error whether the runtime or a source's `get` looked.
 *
 * Code: `TOOL_NOT_FOUND`.
 */
export class ToolNotFoundError extends ToolRuntimeError {
  declare readonly code: 'TOOL_NOT_FOUND';
  declare readonly toolName: string;
  /** The source that was asked, when one source was. */
  declare readonly sourceId?: string;
  /** Close names that exist, best first. */
  readonly suggestions: readonly string[];

  constructor(options: ToolNotFoundErrorOptions) {
    const { toolName, planId, sourceId } = options;
    const suggestions = Object.freeze([...(options.suggestions ?? [])]);
    const where = sourceId === undefined ? 'No source offers a tool' : `Source '${sourceId}' has no tool`;
    const plan = planId === undefined ? '' : ` (plan '${planId}')`;
    const hint = suggestions.length > 0 ? ` Did you mean ${suggestions.map((name) => `'${name}'`).join(', ')}?` : '';
    super('TOOL_NOT_FOUND', `${where} named '${toolName}'${plan}.${hint} List the available tools with runtime.listTools().`, options);
    if (sourceId !== undefined) this.sourceId = sourceId;
    this.suggestions = suggestions;
  }
}
