import { isSchemaObject, resolveLocalRef, type SchemaObject } from './schema-types';

/** What became of a tool's input schema for OpenAI's strict mode. */
export type StrictSchemaResult =
  | {
      readonly strict: true;
      /** The schema to send, with `strict: true`. */
      readonly schema: SchemaObject;
      /**
       * JSON Pointers (into the original schema) of the properties that were
       * optional and are now required and nullable: the `null`s a model sends
       * for them are taken back out on the way in.
       */
      readonly madeNullable: readonly string[];
      /** Keywords strict mode refuses that were left out (as `pointer keyword`); the runtime still validates them. */
      readonly removed: readonly string[];
    }
  | {
      readonly strict: false;
      /** The schema to send as it is, with `strict: false`. */
      readonly schema: SchemaObject;
      /** Why strict mode cannot hold this schema. */
      readonly reason: string;
    };

// What strict mode keeps (OpenAI Structured Outputs, "Supported schemas").
const KEPT = new Set([
  'type',
  'description',
  'title',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
  'pattern',
  'format',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'minItems',
  'maxItems',
]);
const STRICT_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
/** Keywords that change which values are valid in a way dropping them would widen past what the model can be told: strict mode is off then. */
const STRUCTURAL = new Set([
  'patternProperties',
  'allOf',
  'prefixItems',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
  '$dynamicRef',
  '$recursiveRef',
]);
const MAX_NESTING = 10;

class NotStrict extends Error {}

/**
 * Converts a tool's input schema to OpenAI's strict mode where that keeps its
 * meaning: every object closed (`additionalProperties: false`) with every
 * property required — the optional ones made nullable (`type: [t, 'null']`,
 * or `anyOf: [schema, { type: 'null' }]`), recorded in `madeNullable` —
 * `oneOf` read as `anyOf`, and the keywords strict mode refuses that only
 * narrow the values (`minLength`, `uniqueItems`, `not`, unknown formats, …)
 * left out, since the runtime validates the call against the original
 * schema anyway. A schema whose meaning strict mode cannot hold — not an
 * object at the root, an object with open or patterned properties, `allOf`,
 * tuples, a schema without a `type`, a non-local `$ref`, more than 10 levels
 * — is sent as it is, with `strict: false` and the reason. Pure; the input is
 * not changed.
 */
export function toOpenAiStrictSchema(schema: unknown): StrictSchemaResult {
  const original = isSchemaObject(schema) ? schema : { type: 'object', properties: {} };
  const madeNullable: string[] = [];
  const removed: string[] = [];
  try {
    if (original['type'] !== 'object') throw new NotStrict('the root of the schema is not an object (type: "object")');
    const converted = convert(original, original, '', 0, madeNullable, removed);
    return { strict: true, schema: converted, madeNullable, removed };
  } catch (error) {
    if (!(error instanceof NotStrict)) throw error;
    return { strict: false, schema: original, reason: error.message };
  }
}

function convert(schema: unknown, root: SchemaObject, pointer: string, depth: number, madeNullable: string[], removed: string[]): SchemaObject {
  if (!isSchemaObject(schema)) throw new NotStrict(`${pointer || '/'} is a boolean schema`);
  if (depth > MAX_NESTING) throw new NotStrict(`it nests deeper than ${MAX_NESTING} levels`);
  const out: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (STRUCTURAL.has(keyword)) throw new NotStrict(`${pointer || '/'} uses ${keyword}`);
    if (keyword === 'oneOf') {
      out['anyOf'] = convertList(value, root, `${pointer}/oneOf`, depth, madeNullable, removed);
      continue;
    }
    if (!KEPT.has(keyword) || (keyword === 'format' && !STRICT_FORMATS.has(value as string))) {
      removed.push(`${pointer || '/'} ${keyword}`);
      continue;
    }
    out[keyword] = value;
  }
  if (typeof schema['$ref'] === 'string') {
    if (resolveLocalRef(root, schema['$ref']) === undefined) throw new NotStrict(`${pointer || '/'} has a $ref outside the schema`);
    return out;
  }
  if (Array.isArray(out['anyOf'])) out['anyOf'] = convertList(out['anyOf'], root, `${pointer}/anyOf`, depth, madeNullable, removed);
  for (const defsKeyword of ['$defs', 'definitions'] as const) {
    const defs = out[defsKeyword];
    if (isSchemaObject(defs)) {
      out[defsKeyword] = Object.fromEntries(
        Object.entries(defs).map(([name, sub]) => [name, convert(sub, root, `${pointer}/${defsKeyword}/${name}`, depth + 1, madeNullable, removed)]),
      );
    }
  }
  const types = Array.isArray(out['type']) ? out['type'] : [out['type']];
  if (out['type'] === undefined && out['anyOf'] === undefined && out['enum'] === undefined && out['const'] === undefined) {
    throw new NotStrict(`${pointer || '/'} says no type`);
  }
  if (types.includes('object')) {
    const properties = schema['properties'];
    if (!isSchemaObject(properties) || Object.keys(properties).length === 0) throw new NotStrict(`${pointer || '/'} is an object without declared properties`);
    const additional = schema['additionalProperties'];
    if (additional !== undefined && additional !== false && additional !== true)
      throw new NotStrict(`${pointer || '/'} takes further properties of a schema (a map)`);
    const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as unknown[]) : []);
    const converted: Record<string, unknown> = {};
    for (const [name, sub] of Object.entries(properties)) {
      const subPointer = `${pointer}/properties/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      let next = convert(sub, root, subPointer, depth + 1, madeNullable, removed);
      if (!required.has(name)) {
        next = nullable(next);
        madeNullable.push(subPointer);
      }
      converted[name] = next;
    }
    out['properties'] = converted;
    out['required'] = Object.keys(properties);
    out['additionalProperties'] = false;
  }
  if (types.includes('array')) {
    if (Array.isArray(schema['items'])) throw new NotStrict(`${pointer || '/'} is a tuple`);
    if (schema['items'] === undefined) throw new NotStrict(`${pointer || '/'} is an array without an items schema`);
    out['items'] = convert(schema['items'], root, `${pointer}/items`, depth + 1, madeNullable, removed);
  }
  return out;
}

function convertList(value: unknown, root: SchemaObject, pointer: string, depth: number, madeNullable: string[], removed: string[]): SchemaObject[] {
  if (!Array.isArray(value)) throw new NotStrict(`${pointer} is not a list`);
  return value.map((branch, index) => convert(branch, root, `${pointer}/${index}`, depth + 1, madeNullable, removed));
}

/** The schema, also allowing `null`. */
function nullable(schema: SchemaObject): SchemaObject {
  const type = schema['type'];
  if (typeof type === 'string' && schema['anyOf'] === undefined && schema['$ref'] === undefined && schema['const'] === undefined) {
    const out: Record<string, unknown> = { ...schema, type: type === 'null' ? 'null' : [type, 'null'] };
    if (Array.isArray(schema['enum']) && !schema['enum'].includes(null)) out['enum'] = [...schema['enum'], null];
    return out;
  }
  if (Array.isArray(type) && schema['anyOf'] === undefined && schema['$ref'] === undefined && schema['const'] === undefined) {
    const out: Record<string, unknown> = { ...schema, type: type.includes('null') ? type : [...type, 'null'] };
    if (Array.isArray(schema['enum']) && !schema['enum'].includes(null)) out['enum'] = [...schema['enum'], null];
    return out;
  }
  return { anyOf: [schema, { type: 'null' }] };
}
