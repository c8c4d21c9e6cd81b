import type { JsonSchema } from '@ca/domain';
import { describe, fail, isPlainObject, messageOf } from './support';

/**
 * Turns a foreign schema (a zod schema, say) into JSON Schema. Give one to the
 * foreign-tool adapters when they cannot convert a schema themselves, e.g.
 * `toJsonSchema` from `@langchain/core/utils/json_schema`, or
 * `zodToJsonSchema` for zod 3.
 */
export type JsonSchemaConverter = {
  // Method syntax, so that converters typed for one library's schemas (a narrower parameter) are accepted.
  convert(schema: unknown): unknown;
}['convert'];

/** Where a schema comes from, for messages. */
export interface ForeignSchemaContext {
  readonly toolName: string;
  readonly direction: 'input' | 'output';
  readonly library: string;
}

const STANDARD_JSON_SCHEMA_TARGET = 'draft-2020-12';

/**
 * JSON Schema of a foreign tool's schema, without importing the library that
 * made it. In order:
 * 1. `converter`, when given;
 * 2. a function (an AI SDK lazy schema) is called and its result converted;
 * 3. an AI SDK `Schema` (`jsonSchema(...)`, `zodSchema(...)`): its `jsonSchema`;
 * 4. a Standard JSON Schema (`schema['~standard'].jsonSchema.input/output`, zod ≥ 4.2, …);
 * 5. an object with a `toJSONSchema()` method (zod 4);
 * 6. a plain JSON Schema object or boolean, as it is.
 * @throws WrappedToolError (`WRAP_SCHEMA_UNCONVERTIBLE`) naming the tool and suggesting a converter.
 */
export function toJsonSchema(schema: unknown, context: ForeignSchemaContext, converter?: JsonSchemaConverter): JsonSchema {
  const { toolName, direction, library } = context;
  const unconvertible = (detail: string, cause?: unknown): never =>
    fail(
      'WRAP_SCHEMA_UNCONVERTIBLE',
      `The ${direction} schema of ${library} tool '${toolName}' ${detail} Pass a converter as options.toJsonSchema (e.g. toJsonSchema from '@langchain/core/utils/json_schema', or z.toJSONSchema), or give options.${direction}Schema as JSON Schema.`,
      toolName,
      cause,
    );
  const checked = (value: unknown, via: string): JsonSchema => {
    if (isThenable(value)) unconvertible(`is only available asynchronously (${via} returned a promise).`);
    if (typeof value !== 'boolean' && !isPlainObject(value)) unconvertible(`was converted (${via}) into ${describe(value)}, not a JSON Schema.`);
    return value as JsonSchema;
  };
  const attempt = (via: string, convert: () => unknown): JsonSchema => {
    let value: unknown;
    try {
      value = convert();
    } catch (error) {
      return unconvertible(`cannot be converted to JSON Schema (${via} failed: ${messageOf(error)}).`, error);
    }
    return checked(value, via);
  };

  if (converter !== undefined) {
    if (typeof converter !== 'function') unconvertible(`came with options.toJsonSchema ${describe(converter)}, which is not a function.`);
    return attempt('options.toJsonSchema', () => converter(schema));
  }
  let current = schema;
  if (typeof current === 'function') {
    const lazy = current as () => unknown;
    current = attempt('the lazy schema', () => lazy()) as unknown;
    if (typeof current === 'boolean') return current;
  }
  if (typeof current === 'boolean') return current;
  if (!isPlainObject(current) && !(typeof current === 'object' && current !== null)) unconvertible(`is ${describe(current)}.`);
  const candidate = current as Record<string | symbol, unknown>;
  if ('jsonSchema' in candidate && !('~standard' in candidate)) return attempt('its jsonSchema property', () => candidate['jsonSchema']);
  const standard = candidate['~standard'];
  if (isPlainObject(standard) && isPlainObject(standard['jsonSchema'])) {
    const converters = standard['jsonSchema'] as Record<string, unknown>;
    const convert = converters[direction];
    if (typeof convert === 'function') {
      return attempt(`its ~standard.jsonSchema.${direction}()`, () => (convert as (options: object) => unknown).call(converters, { target: STANDARD_JSON_SCHEMA_TARGET }));
    }
  }
  if (typeof candidate['toJSONSchema'] === 'function') {
    const method = candidate['toJSONSchema'] as (options?: object) => unknown;
    return attempt('its toJSONSchema()', () => method.call(candidate, { io: direction }));
  }
  if ('~standard' in candidate || '_def' in candidate || '_zod' in candidate) {
    return unconvertible('is a validation-library schema this package cannot convert by itself (no jsonSchema, ~standard.jsonSchema or toJSONSchema()).');
  }
  return checked(candidate, 'as given');
}

function isThenable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
