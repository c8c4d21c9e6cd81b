import type { JsonSchema } from '@ca/domain';
import { isPlainObject } from './support';
import { WrappedToolError, type SchemaUnconvertibleReason } from './wrapped-tool-error';

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
  const unconvertible = (reason: SchemaUnconvertibleReason): never => {
    throw new WrappedToolError({ problem: 'schema-unconvertible', toolName, library, direction, ...reason });
  };
  const checked = (value: unknown, via: string): JsonSchema => {
    if (isThenable(value)) unconvertible({ reason: 'asynchronous', via });
    if (typeof value !== 'boolean' && !isPlainObject(value)) unconvertible({ reason: 'not-json-schema', via, received: value });
    return value as JsonSchema;
  };
  const attempt = (via: string, convert: () => unknown): JsonSchema => {
    let value: unknown;
    try {
      value = convert();
    } catch (error) {
      return unconvertible({ reason: 'conversion-failed', via, cause: error });
    }
    return checked(value, via);
  };

  if (converter !== undefined) {
    if (typeof converter !== 'function') unconvertible({ reason: 'converter-not-function', received: converter });
    return attempt('options.toJsonSchema', () => converter(schema));
  }
  let current = schema;
  if (typeof current === 'function') {
    const lazy = current as () => unknown;
    current = attempt('the lazy schema', () => lazy()) as unknown;
    if (typeof current === 'boolean') return current;
  }
  if (typeof current === 'boolean') return current;
  if (!isPlainObject(current) && !(typeof current === 'object' && current !== null)) unconvertible({ reason: 'not-a-schema', received: current });
  const candidate = current as Record<string | symbol, unknown>;
  if ('jsonSchema' in candidate && !('~standard' in candidate)) return attempt('its jsonSchema property', () => candidate['jsonSchema']);
  const standard = candidate['~standard'];
  if (isPlainObject(standard) && isPlainObject(standard['jsonSchema'])) {
    const converters = standard['jsonSchema'] as Record<string, unknown>;
    const convert = converters[direction];
    if (typeof convert === 'function') {
      return attempt(`its ~standard.jsonSchema.${direction}()`, () =>
        (convert as (options: object) => unknown).call(converters, { target: STANDARD_JSON_SCHEMA_TARGET }),
      );
    }
  }
  if (typeof candidate['toJSONSchema'] === 'function') {
    const method = candidate['toJSONSchema'] as (options?: object) => unknown;
    return attempt('its toJSONSchema()', () => method.call(candidate, { io: direction }));
  }
  if ('~standard' in candidate || '_def' in candidate || '_zod' in candidate) {
    return unconvertible({ reason: 'unsupported-library' });
  }
  return checked(candidate, 'as given');
}

function isThenable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
