import { normalizeCapability, type JsonSchema, type ToolCapability } from '@ca/domain';
import { createSchemaValidator, type CompiledSchema, type SchemaValidator } from '@ca/schema';
import { WrappedToolError, type WrappedToolErrorCode } from './wrapped-tool-error';

/** The capability fields a wrapper or a foreign tool may set. */
export const CAPABILITY_FIELDS: readonly (keyof ToolCapability)[] = ['writes', 'checkpointable', 'idempotent', 'destructive', 'openWorld'];

/** Longest deadline `setTimeout` honours. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

let sharedValidator: SchemaValidator | undefined;

/** The validator used when none is given: one per process, created on first use. */
export function defaultValidator(): SchemaValidator {
  sharedValidator ??= createSchemaValidator();
  return sharedValidator;
}

/** Throws a {@link WrappedToolError}. */
export function fail(code: WrappedToolErrorCode, message: string, toolName?: string, cause?: unknown): never {
  throw new WrappedToolError({
    code,
    message,
    ...(toolName === undefined ? {} : { toolName }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * Checks a partial capability as users write it: an object of known fields
 * with boolean values. Returns it typed.
 * @throws WrappedToolError with `code` for anything else.
 */
export function checkCapabilityInput(
  value: unknown,
  subject: string,
  toolName: string | undefined,
): Partial<Record<keyof ToolCapability, boolean>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail('WRAP_INVALID_OPTIONS', `${subject} has a capability ${describe(value)}; use an object such as { writes: false }.`, toolName);
  }
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    if (!(CAPABILITY_FIELDS as readonly string[]).includes(key)) {
      fail('WRAP_INVALID_OPTIONS', `${subject} has an unknown capability field '${key}'; the fields are ${CAPABILITY_FIELDS.join(', ')}.`, toolName);
    }
    if (field !== undefined && typeof field !== 'boolean') {
      fail('WRAP_INVALID_OPTIONS', `${subject} has capability.${key} = ${describe(field)}; use true or false.`, toolName);
    }
  }
  return value as Partial<Record<keyof ToolCapability, boolean>>;
}

/** `normalizeCapability` of a checked partial capability (conservative where fields are missing). */
export function capabilityOf(value: unknown, subject: string, toolName: string | undefined): ToolCapability {
  return normalizeCapability(value === undefined ? undefined : checkCapabilityInput(value, subject, toolName));
}

/**
 * Compiles a schema now, so that a bad schema fails when the tool is built.
 * @throws WrappedToolError (`WRAP_SCHEMA_INVALID`) with the compile error as cause.
 */
export function compileSchema(
  validator: SchemaValidator,
  schema: JsonSchema,
  toolName: string,
  direction: 'input' | 'output',
  what: string,
): CompiledSchema {
  try {
    return validator.compile(schema, { toolName, direction, trust: 'untrusted' });
  } catch (error) {
    return fail(
      'WRAP_SCHEMA_INVALID',
      `Tool '${toolName}': ${what} cannot be compiled: ${error instanceof Error ? error.message : String(error)}`,
      toolName,
      error,
    );
  }
}

/** Checks an optional positive timeout in milliseconds. */
export function checkTimeout(value: unknown, subject: string, toolName: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIMEOUT_MS) {
    fail('WRAP_INVALID_OPTIONS', `${subject} has timeoutMs ${describe(value)}; use a positive number of milliseconds (at most ${MAX_TIMEOUT_MS}).`, toolName);
  }
  return value as number;
}

/** True for a non-null, non-array object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short description of any value for messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return `'${value.length > 60 ? `${value.slice(0, 60)}…` : value}'`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return `${typeof value} ${String(value)}`;
}

/** The message of any thrown value. */
export function messageOf(value: unknown): string {
  return value instanceof Error ? value.message : String(value);
}
