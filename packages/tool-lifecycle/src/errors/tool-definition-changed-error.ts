import { ToolRuntimeError } from './tool-runtime-error';

/** Options of {@link ToolDefinitionChangedError}. */
export interface ToolDefinitionChangedErrorOptions {
  readonly toolName: string;
  readonly sourceId: string;
  /** `changed`: the definition differs from the pinned one; `new`: the source is pinned and this tool is not. */
  readonly change: 'changed' | 'new';
  /** What differs, one line per field (`description: "…" → "…"`). */
  readonly diff: readonly string[];
  readonly planId?: string;
}

/**
 * A tool is quarantined: its source's definitions are pinned (a lockfile,
 * `DefinitionPins`) and this tool's definition — name, description, schemas,
 * capability, annotations — no longer matches its pin, or it is a tool the
 * pinned source did not have. It is unavailable until the pins accept it
 * (`agents tools lock`, or `lockDefinitions` through the library). The
 * message shows the diff.
 *
 * Code: `TOOL_DEFINITION_CHANGED`.
 */
export class ToolDefinitionChangedError extends ToolRuntimeError {
  declare readonly code: 'TOOL_DEFINITION_CHANGED';
  declare readonly toolName: string;
  readonly sourceId: string;
  readonly change: 'changed' | 'new';
  readonly diff: readonly string[];

  constructor(options: ToolDefinitionChangedErrorOptions) {
    const { toolName, sourceId, change, diff } = options;
    const what =
      change === 'new'
        ? `is new: source '${sourceId}' is pinned and did not offer it when its definitions were locked`
        : `changed since its definition was pinned (source '${sourceId}')`;
    super(
      'TOOL_DEFINITION_CHANGED',
      `Tool '${toolName}' ${what}, so it is quarantined and cannot run.${diff.length === 0 ? '' : `\n${diff.map((line) => `  ${line}`).join('\n')}`}\nReview the change; if it is expected, accept it with 'agents tools lock' (or lockDefinitions() and your DefinitionPins through the library).`,
      options,
    );
    this.sourceId = sourceId;
    this.change = change;
    this.diff = Object.freeze([...diff]);
  }
}
