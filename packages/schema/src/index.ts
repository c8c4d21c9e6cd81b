export type { SchemaDialect } from './schema-dialect';
export type { SchemaDirection } from './schema-direction';
export type { SchemaIssue, SchemaValidationResult } from './schema-issue';
export type {
  CompiledSchema,
  SchemaCompileOptions,
  SchemaValidator,
  SchemaValidatorOptions,
} from './schema-validator';
export { createSchemaValidator } from './schema-validator';
export type { SchemaTrust } from './schema-trust';
export { isSchemaTrust } from './schema-trust';
export type { LinearPattern, LinearPatternOptions } from './linear-pattern';
export { compileLinearPattern } from './linear-pattern';
export type { PatternCompileErrorOptions, PatternCompileProblem, PatternSyntax } from './pattern-compile-error';
export { PatternCompileError } from './pattern-compile-error';
export type { SchemaValidatorErrorCode } from './error-codes';
export { SCHEMA_VALIDATOR_ERROR_CODES } from './error-codes';
export type { SchemaCompileErrorOptions, SchemaCompileErrorReason } from './schema-compile-error';
export { SchemaCompileError } from './schema-compile-error';
export type { ToolSchemaValidationErrorOptions } from './tool-schema-validation-error';
export { ToolSchemaValidationError } from './tool-schema-validation-error';
