import type { ToolCapability } from './tool-capability';
import type { ToolSourceKind } from './tool-source-kind';
import type { Validation } from './validation';

/**
 * Lightweight metadata of a tool: everything a runtime, a model or a person
 * needs to decide whether and how to call it, without loading or starting it.
 */
export interface Tool extends Validation {
  /**
   * Unique across a runtime. Sources namespace their tools
   * (`mcp.<server>.<tool>`, `skill.<name>`); see {@link isValidToolName}.
   */
  readonly name: string;
  /** What the tool does, for a model and for a person. */
  readonly description: string;
  /** The kind of source the tool comes from. */
  readonly source: ToolSourceKind;
  /** What the tool may do; see `normalizeCapability` for the defaults. */
  readonly capability: ToolCapability;
  /** Version of the tool or of its source, when known. */
  readonly version?: string;
  /** Free-form, JSON-serialisable annotations (title, origin, hints, …). */
  readonly annotations?: Readonly<Record<string, unknown>>;
}

/** Longest accepted tool name. */
export const MAX_TOOL_NAME_LENGTH = 200;

const TOOL_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.:-]*$/;

/**
 * True when `name` is an acceptable tool name: 1–200 characters, starting
 * with a letter, digit or underscore, followed by letters, digits, `_`, `.`,
 * `:` or `-`. Dots separate namespaces (`mcp.everything.echo`).
 */
export function isValidToolName(name: unknown): name is string {
  return typeof name === 'string' && name.length <= MAX_TOOL_NAME_LENGTH && TOOL_NAME_PATTERN.test(name);
}
