import { ToolRuntimeError } from './tool-runtime-error';

/** Options of {@link ToolDefinitionChangedError}. */
export interface ToolDefinitionChangedErrorOptions {
  readonly toolName: string;
  readonly sourceId: string;
  /** The pin scope the tool is checked under (`mcp:<server>`; a source's id by default). Default: `sourceId`. */
  readonly scope?: string;
  /**
   * `changed`: the definition differs from the pinned one; `new`: the scope is
   * pinned and this tool is not; `removed`: the source no longer offers the
   * pinned tool (found when it was confirmed before its first call).
   */
  readonly change: 'changed' | 'new' | 'removed';
  /** What differs, one line per field (`description: "…" → "…"`). */
  readonly diff: readonly string[];
  readonly planId?: string;
}

/**
 * A tool is quarantined: its definitions are pinned (a lockfile,
 * `DefinitionPins`) and this tool's definition — name, description, schemas,
 * capability, annotations — no longer matches its pin, or it is a tool the
 * pinned scope did not have, or its source no longer offers it. It is
 * unavailable until the pins accept it (`agents tools lock`, or
 * `lockDefinitions` through the library). The message shows the diff.
 * `runtime.execute` throws it for a quarantined tool (with the plan), and
 * `discover()` lists it as the `error` of the tool's `unavailable` entry.
 *
 * Code: `TOOL_DEFINITION_CHANGED`.
 */
export class ToolDefinitionChangedError extends ToolRuntimeError {
  declare readonly code: 'TOOL_DEFINITION_CHANGED';
  declare readonly toolName: string;
  readonly sourceId: string;
  /** The pin scope (`mcp:<server>`, or the source's id). */
  readonly scope: string;
  readonly change: 'changed' | 'new' | 'removed';
  readonly diff: readonly string[];

  constructor(options: ToolDefinitionChangedErrorOptions) {
    const { toolName, sourceId, change, diff, planId } = options;
    const scope = options.scope ?? sourceId;
    const what =
      change === 'new'
        ? `is new: the pins of '${scope}' do not have it (it was not offered when its definitions were locked)`
        : change === 'removed'
          ? `is no longer offered by its source ('${sourceId}'), though its definition is pinned (under '${scope}')`
          : `changed since its definition was pinned (under '${scope}')`;
    super(
      'TOOL_DEFINITION_CHANGED',
      `Tool '${toolName}' ${what}, so it is quarantined and cannot run${planId === undefined ? '' : ` in plan '${planId}'`}.${diff.length === 0 ? '' : `\n${diff.map((line) => `  ${line}`).join('\n')}`}\nReview the change; if it is expected, accept it with 'agents tools lock' (or lockDefinitions() and your DefinitionPins through the library).`,
      options,
    );
    this.sourceId = sourceId;
    this.scope = scope;
    this.change = change;
    this.diff = Object.freeze([...diff]);
  }

  /** The same quarantine, reported for a call in plan `planId`. */
  inPlan(planId: string): ToolDefinitionChangedError {
    return new ToolDefinitionChangedError({
      toolName: this.toolName,
      sourceId: this.sourceId,
      scope: this.scope,
      change: this.change,
      diff: this.diff,
      planId,
    });
  }
}
