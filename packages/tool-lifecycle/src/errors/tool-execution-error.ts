import { asClause, describeValue, messageOf } from '@ca/domain';
import { ToolRuntimeError } from './tool-runtime-error';

/**
 * How a tool failed:
 * - `'threw'`: its `execute` threw or rejected (the thrown value is the cause);
 * - `'reported'`: it returned `{ ok: false, error }` with an `error` that is not an `Error` (kept as the cause);
 * - `'invalid-result'`: it returned something that is not a `ToolResult` (see `returned`);
 * - `'unserialisable-output'`: its output cannot be serialised to JSON (the serialiser's error is the cause).
 */
export type ToolExecutionFailure = 'threw' | 'reported' | 'invalid-result' | 'unserialisable-output';

/** Options of {@link ToolExecutionError}. */
export interface ToolExecutionErrorOptions {
  readonly toolName: string;
  readonly planId: string;
  /** How the tool failed; default `'threw'`. */
  readonly failure?: ToolExecutionFailure;
  /** The original failure. */
  readonly cause?: unknown;
  /** For `'invalid-result'`: what the tool returned. */
  readonly returned?: unknown;
}

/**
 * Wraps a tool's own failure: a thrown value, a rejection, a result that is
 * not a `ToolResult`, an output that is not JSON. The original failure is the `cause`.
 *
 * Code: `TOOL_EXECUTION_FAILED`.
 */
export class ToolExecutionError extends ToolRuntimeError {
  declare readonly code: 'TOOL_EXECUTION_FAILED';
  declare readonly toolName: string;
  declare readonly planId: string;
  /** How the tool failed. */
  readonly failure: ToolExecutionFailure;

  constructor(options: ToolExecutionErrorOptions) {
    const failure = options.failure ?? 'threw';
    super('TOOL_EXECUTION_FAILED', describeFailure(failure, options), options);
    this.failure = failure;
  }
}

function describeFailure(failure: ToolExecutionFailure, options: ToolExecutionErrorOptions): string {
  const { toolName, planId, cause } = options;
  switch (failure) {
    case 'reported':
      return `Tool '${toolName}' failed in plan '${planId}': ${asClause(messageOf(cause ?? 'no error given'))}.`;
    case 'invalid-result':
      return `Tool '${toolName}' in plan '${planId}' returned ${describeValue(options.returned)} instead of a ToolResult ({ ok: true, output } or { ok: false, error }). Fix the tool's execute().`;
    case 'unserialisable-output':
      return `Tool '${toolName}' in plan '${planId}' returned an output that cannot be serialised to JSON (${messageOf(cause)}). Return plain JSON data: no cycles, BigInt or functions.`;
    default:
      return `Tool '${toolName}' failed in plan '${planId}': ${asClause(messageOf(cause))}. See the cause for details.`;
  }
}
