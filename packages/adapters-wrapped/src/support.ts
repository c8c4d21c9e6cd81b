import { normalizeCapability, type JsonSchema, type ToolCapability } from '@ca/domain';
import { createSchemaValidator, type CompiledSchema, type SchemaValidator } from '@ca/schema';
import { WrappedToolError, type WrapSchemaRole, type WrapSubject } from './wrapped-tool-error';

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

/**
 * Throws `WRAP_INVALID_OPTIONS` for `option` of `subject`, which is not `expected`.
 * @throws WrappedToolError always.
 */
export function invalidOption(subject: WrapSubject, option: string, expected: string, received: unknown): never {
  throw new WrappedToolError({ problem: 'invalid-option', subject, option, expected, received });
}

/**
 * Checks a partial capability as users write it: an object of known fields
 * with boolean values. Returns it typed.
 * @throws WrappedToolError (`WRAP_INVALID_OPTIONS`) for anything else.
 */
export function checkCapabilityInput(value: unknown, subject: WrapSubject): Partial<Record<keyof ToolCapability, boolean>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) invalidOption(subject, 'capability', 'an object such as { writes: false }', value);
  for (const [field, setting] of Object.entries(value as Record<string, unknown>)) {
    if (!(CAPABILITY_FIELDS as readonly string[]).includes(field)) throw new WrappedToolError({ problem: 'unknown-capability-field', subject, field });
    if (setting !== undefined && typeof setting !== 'boolean') invalidOption(subject, `capability.${field}`, 'true or false', setting);
  }
  return value as Partial<Record<keyof ToolCapability, boolean>>;
}

/** `normalizeCapability` of a checked partial capability (conservative where fields are missing). */
export function capabilityOf(value: unknown, subject: WrapSubject): ToolCapability {
  return normalizeCapability(value === undefined ? undefined : checkCapabilityInput(value, subject));
}

/**
 * Compiles a schema now, so that a bad schema fails when the tool is built.
 * `toolName` is the tool whose schema it is (the inner tool's for `'inner-input'`).
 * @throws WrappedToolError (`WRAP_SCHEMA_INVALID`) with the compile error as cause.
 */
export function compileSchema(
  validator: SchemaValidator,
  schema: JsonSchema,
  role: WrapSchemaRole,
  names: { readonly toolName: string; readonly wrappedToolName?: string },
): CompiledSchema {
  const direction = role === 'output' ? 'output' : 'input';
  const owner = role === 'inner-input' && names.wrappedToolName !== undefined ? names.wrappedToolName : names.toolName;
  try {
    return validator.compile(schema, { toolName: owner, direction, trust: 'untrusted' });
  } catch (error) {
    throw new WrappedToolError({ problem: 'schema-invalid', schema: role, cause: error, ...names });
  }
}

/** Checks an optional positive timeout in milliseconds. */
export function checkTimeout(value: unknown, subject: WrapSubject): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIMEOUT_MS) {
    invalidOption(subject, 'timeoutMs', `a positive number of milliseconds (at most ${MAX_TIMEOUT_MS})`, value);
  }
  return value as number;
}

/** True for a non-null, non-array object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
