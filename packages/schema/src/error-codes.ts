/**
 * The stable `code` of every error this package raises:
 * - `TOOL_SCHEMA_VALIDATION_FAILED`: `ToolSchemaValidationError`, a
 *   value does not satisfy a tool's schema;
 * - `SCHEMA_INVALID`: `SchemaCompileError`, a schema cannot be compiled;
 * - `PATTERN_INVALID`: `PatternCompileError`, a regular expression cannot be
 *   compiled for the linear-time engine.
 */
export const SCHEMA_VALIDATOR_ERROR_CODES = Object.freeze({
  TOOL_SCHEMA_VALIDATION_FAILED: 'TOOL_SCHEMA_VALIDATION_FAILED',
  SCHEMA_INVALID: 'SCHEMA_INVALID',
  PATTERN_INVALID: 'PATTERN_INVALID',
} as const);

/** One of {@link SCHEMA_VALIDATOR_ERROR_CODES}. */
export type SchemaValidatorErrorCode = (typeof SCHEMA_VALIDATOR_ERROR_CODES)[keyof typeof SCHEMA_VALIDATOR_ERROR_CODES];
