import { CaError } from '@ca/domain';
import type { SchemaDirection } from './schema-direction';
import { describeSchemaProperty, describeSubject } from './schema-direction';
import type { SchemaIssue } from './schema-issue';

/** How many issues the message of a {@link ToolSchemaValidationError} spells out. */
const ISSUES_IN_MESSAGE = 3;

/** Options of {@link ToolSchemaValidationError}. */
export interface ToolSchemaValidationErrorOptions {
  /** Whether the tool's input or its output failed. */
  readonly direction: SchemaDirection;
  /** Every issue found; at least one is expected. */
  readonly issues: readonly SchemaIssue[];
  /** The tool whose schema the value failed. */
  readonly toolName?: string;
  /** The plan in which the call happened. */
  readonly planId?: string;
  /** Replaces the generated message. */
  readonly message?: string;
  /** The underlying error, per ES2022. */
  readonly cause?: unknown;
}

/**
 * A tool's input or output does not satisfy the tool's schema.
 *
 * Not a `ToolRuntimeError` (it extends `CaError` directly), so that
 * `@ca/schema` stays below the lifecycle layer. Code:
 * `TOOL_SCHEMA_VALIDATION_FAILED`. Recognise it with
 * `ToolSchemaValidationError.isInstance`, which also works across two
 * installed copies of this package.
 */
export class ToolSchemaValidationError extends CaError {
  declare readonly code: 'TOOL_SCHEMA_VALIDATION_FAILED';
  /** Whether the tool's input or its output failed. */
  readonly direction: SchemaDirection;
  /** Every issue found, in the order the validator reported them. */
  readonly issues: readonly SchemaIssue[];

  /**
   * @param options - direction and issues, with the tool and plan when known.
   */
  constructor(options: ToolSchemaValidationErrorOptions) {
    super('TOOL_SCHEMA_VALIDATION_FAILED', options.message ?? describeFailure(options), options);
    this.direction = options.direction;
    this.issues = Object.freeze(options.issues.slice());
  }
}

function describeFailure(options: ToolSchemaValidationErrorOptions): string {
  const { direction, issues, toolName, planId } = options;
  const subject = describeSubject(toolName, direction);
  const shown = issues.slice(0, ISSUES_IN_MESSAGE).map(describeIssue);
  const more = issues.length > ISSUES_IN_MESSAGE ? `; and ${issues.length - ISSUES_IN_MESSAGE} more issue(s)` : '';
  const problems = shown.length > 0 ? shown.join('; ') + more : 'the value does not match the schema';
  const plan = planId === undefined ? '' : ` (plan '${planId}')`;
  const fix =
    direction === 'input'
      ? `Fix the input to match ${describeSchemaProperty(direction)}.`
      : `The tool returned a value that does not match ${describeSchemaProperty(direction)}: fix the tool or its outputSchema.`;
  return `${subject}${problems}${plan}. ${fix}`;
}

function describeIssue(issue: SchemaIssue): string {
  const text = issue.instancePath === '' ? issue.message : `value at ${issue.message}`;
  return `${text} (keyword ${issue.keyword})`;
}
