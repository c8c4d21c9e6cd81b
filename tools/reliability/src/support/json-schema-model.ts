// A small, independent model of JSON Schema 2020-12 for the subset of keywords
// the property tests generate, and the fast-check arbitraries that produce
// such schemas and values aimed at them. The model is the oracle: the runtime
// must call a tool exactly when the model says its input is valid.
import fc from 'fast-check';

/** A schema of the generated subset (objects are plain JSON). */
export type ModelSchema = boolean | { readonly [keyword: string]: unknown };

type SchemaObject = { readonly [keyword: string]: unknown };

/** Property names, including ones that have hurt JavaScript validators before. */
export const PROPERTY_NAMES = ['a', 'b', 'c', 'id', 'x y', 'é', '', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'length'];

/** Patterns that are valid and mean the same under `u` and without it. */
const PATTERNS = ['^a', '[0-9]', '^[a-z]*$', '^.{0,3}$', 'b$', '^$'];

/** A JSON value small enough to keep runs fast. */
export const smallJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3, depthSize: 'small' });

/** Builds an object with own properties only, so '__proto__' stays a key, not a prototype. */
export function ownObject(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

/** Random schemas of the subset, nested up to a few levels, with `$defs`/`$ref` at the root. */
export function schemaArbitrary(): fc.Arbitrary<ModelSchema> {
  const { schema } = fc.letrec<{ schema: ModelSchema; leaf: ModelSchema; node: ModelSchema }>((tie) => ({
    schema: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tie('leaf'), tie('node')),
    leaf: fc.oneof(
      fc.constant(true),
      fc.constant(false),
      fc.constant({}),
      fc.record(
        { type: fc.constant('string'), minLength: fc.nat(3), maxLength: fc.integer({ min: 2, max: 8 }), pattern: fc.constantFrom(...PATTERNS) },
        { requiredKeys: ['type'] },
      ),
      fc.record(
        {
          type: fc.constantFrom('integer', 'number'),
          minimum: fc.integer({ min: -5, max: 5 }),
          maximum: fc.integer({ min: 0, max: 50 }),
          multipleOf: fc.constantFrom(1, 2, 0.5),
        },
        { requiredKeys: ['type'] },
      ),
      fc.constantFrom({ type: 'boolean' }, { type: 'null' }, { type: ['string', 'null'] }, { type: ['integer', 'boolean'] }),
      fc.record({ const: smallJson }),
      fc.record({ enum: fc.array(smallJson, { minLength: 1, maxLength: 4 }) }),
      fc.record({ default: smallJson, type: fc.constantFrom('string', 'integer', 'object') }),
    ),
    node: fc.oneof(
      fc
        .record(
          {
            properties: fc.uniqueArray(fc.tuple(fc.constantFrom(...PROPERTY_NAMES), tie('schema')), { maxLength: 4, selector: ([key]) => key }),
            requiredCount: fc.nat(4),
            additionalProperties: fc.option(fc.oneof(fc.boolean(), tie('schema')), { nil: undefined }),
            defaults: fc.boolean(),
          },
          { requiredKeys: ['properties', 'requiredCount', 'additionalProperties', 'defaults'] },
        )
        .map(({ properties, requiredCount, additionalProperties, defaults }) => {
          // `default` inside properties: a validator that fills defaults in would mutate the caller's input.
          const withDefaults = properties.map(([key, sub]) =>
            defaults && typeof sub === 'object' ? ([key, { ...sub, default: 'filled-in' }] as const) : ([key, sub] as const),
          );
          const schema: Record<string, unknown> = { type: 'object', properties: ownObject(withDefaults) };
          const required = properties.slice(0, requiredCount).map(([key]) => key);
          if (required.length > 0) schema.required = required;
          if (additionalProperties !== undefined) schema.additionalProperties = additionalProperties;
          return schema;
        }),
      fc.record(
        { type: fc.constant('array'), items: tie('schema'), minItems: fc.nat(2), maxItems: fc.integer({ min: 1, max: 5 }), uniqueItems: fc.boolean() },
        { requiredKeys: ['type'] },
      ),
      fc.record({ anyOf: fc.array(tie('schema'), { minLength: 1, maxLength: 3 }) }),
      fc.record({ oneOf: fc.array(tie('schema'), { minLength: 1, maxLength: 3 }) }),
      fc.record({ allOf: fc.array(tie('schema'), { minLength: 1, maxLength: 2 }) }),
      fc.record({ not: tie('schema') }),
    ),
  }));
  // A root may hold definitions and refer to them.
  return fc.oneof(
    { weight: 4, arbitrary: schema },
    {
      weight: 1,
      arbitrary: fc.tuple(schema, schema).map(([definition, root]): ModelSchema => ({
        $defs: { shared: definition },
        type: 'object',
        properties: { a: { $ref: '#/$defs/shared' }, b: typeof root === 'object' ? root : {} },
      })),
    },
    {
      // Recursion guarded by a property: valid, and must not overflow anything.
      weight: 1,
      arbitrary: fc.constant({ type: 'object', properties: { value: { type: 'integer' }, next: { $ref: '#' } }, additionalProperties: false }),
    },
  );
}

/** Schemas the runtime must refuse at discovery (documented `SchemaCompileError` reasons). */
export const invalidSchemaArbitrary: fc.Arbitrary<ModelSchema> = fc.constantFrom<ModelSchema>(
  { type: 'strnig' },
  { type: 'string', minLength: -1 },
  { type: 'string', pattern: '(' },
  { $ref: '#/$defs/missing' },
  { $ref: 'https://example.com/schema.json' },
  { $schema: 'http://json-schema.org/draft-04/schema#' },
  { $ref: '#' },
  { $defs: { a: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' },
  { properties: { a: { type: 7 } } },
  { required: 'a' },
  { enum: 'not-an-array' },
);

/** Values aimed at a schema (often valid, sometimes not), mixed with arbitrary JSON. */
export function valueFor(schema: ModelSchema | undefined, root: ModelSchema | undefined = schema, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 4 || schema === undefined || typeof schema === 'boolean') return smallJson;
  const s = schema as SchemaObject;
  const aimed: fc.Arbitrary<unknown>[] = [];
  if (typeof s.$ref === 'string') aimed.push(valueFor(resolveRef(s.$ref, root), root, depth + 1));
  if ('const' in s) aimed.push(fc.constant(jsonCopy(s.const)));
  if (Array.isArray(s.enum)) aimed.push(fc.constantFrom(...s.enum.map((value) => jsonCopy(value))));
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    const subs = s[keyword];
    if (Array.isArray(subs)) aimed.push(...subs.map((sub) => valueFor(sub as ModelSchema, root, depth + 1)));
  }
  const types = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type];
  for (const type of types) {
    if (type === 'string') aimed.push(fc.string({ maxLength: 8, unit: fc.constantFrom('a', 'b', '0', '7', 'z', 'é', '😀') }));
    if (type === 'integer') aimed.push(fc.integer({ min: -10, max: 60 }));
    if (type === 'number') aimed.push(fc.oneof(fc.integer({ min: -10, max: 60 }), fc.double({ min: -10, max: 60, noNaN: true })));
    if (type === 'boolean') aimed.push(fc.boolean());
    if (type === 'null') aimed.push(fc.constant(null));
    if (type === 'array') aimed.push(fc.array(valueFor(s.items as ModelSchema, root, depth + 1), { maxLength: 5 }));
  }
  if (s.type === 'object' || s.properties !== undefined) {
    const properties = (s.properties ?? {}) as Record<string, ModelSchema>;
    const keys = Object.keys(properties);
    aimed.push(
      fc
        .tuple(
          fc.subarray(keys),
          fc.tuple(...keys.map((key) => valueFor(properties[key], root, depth + 1))),
          fc.array(fc.tuple(fc.constantFrom(...PROPERTY_NAMES, 'extra'), smallJson), { maxLength: 2 }),
        )
        .map(([present, values, extra]) => ownObject([...extra, ...present.map((key) => [key, values[keys.indexOf(key)]] as const)])),
    );
  }
  return aimed.length === 0 ? smallJson : fc.oneof({ weight: 1, arbitrary: smallJson }, ...aimed.map((arbitrary) => ({ weight: 3, arbitrary })));
}

function resolveRef(ref: string, root: ModelSchema | undefined): ModelSchema {
  if (root === undefined) throw new Error(`model: $ref ${ref} without a root`);
  if (ref === '#') return root;
  const match = /^#\/\$defs\/(.+)$/.exec(ref);
  const defs = typeof root === 'object' ? (root.$defs as Record<string, ModelSchema> | undefined) : undefined;
  if (match === null || defs === undefined || !Object.hasOwn(defs, match[1])) throw new Error(`model: unresolvable $ref ${ref}`);
  return defs[match[1]];
}

/** JSON equality as JSON Schema defines it (key order does not matter, 1 equals 1.0). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, index) => jsonEqual(item, b[index]));
  const left = Object.keys(a);
  const right = Object.keys(b);
  return left.length === right.length && left.every((key) => Object.hasOwn(b, key) && jsonEqual((a as never)[key], (b as never)[key]));
}

function typeMatches(type: unknown, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      throw new Error(`model: unknown type ${String(type)}`);
  }
}

/** Whether `value` is valid against `schema`, by the model. */
export function modelValid(schema: ModelSchema, value: unknown, root: ModelSchema = schema): boolean {
  if (schema === true) return true;
  if (schema === false) return false;
  const s = schema as SchemaObject;
  if (typeof s.$ref === 'string' && !modelValid(resolveRef(s.$ref, root), value, root)) return false;
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((type) => typeMatches(type, value))) return false;
  }
  if ('const' in s && !jsonEqual(s.const, value)) return false;
  if (Array.isArray(s.enum) && !s.enum.some((item) => jsonEqual(item, value))) return false;
  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof s.minLength === 'number' && length < s.minLength) return false;
    if (typeof s.maxLength === 'number' && length > s.maxLength) return false;
    if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value)) return false;
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) return false;
    if (typeof s.maximum === 'number' && value > s.maximum) return false;
    if (typeof s.multipleOf === 'number' && !Number.isInteger(value / s.multipleOf)) return false;
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems) return false;
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) return false;
    if (s.uniqueItems === true && value.some((item, index) => value.slice(index + 1).some((other) => jsonEqual(item, other)))) return false;
    if (s.items !== undefined && !value.every((item) => modelValid(s.items as ModelSchema, item, root))) return false;
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const properties = (s.properties ?? {}) as Record<string, ModelSchema>;
    if (Array.isArray(s.required) && !s.required.every((key) => Object.hasOwn(value, key as string))) return false;
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      if (Object.hasOwn(properties, key)) {
        if (!modelValid(properties[key], item, root)) return false;
      } else if (s.additionalProperties !== undefined && !modelValid(s.additionalProperties as ModelSchema, item, root)) {
        return false;
      }
    }
  }
  if (Array.isArray(s.allOf) && !s.allOf.every((sub) => modelValid(sub as ModelSchema, value, root))) return false;
  if (Array.isArray(s.anyOf) && !s.anyOf.some((sub) => modelValid(sub as ModelSchema, value, root))) return false;
  if (Array.isArray(s.oneOf) && s.oneOf.filter((sub) => modelValid(sub as ModelSchema, value, root)).length !== 1) return false;
  if (s.not !== undefined && modelValid(s.not as ModelSchema, value, root)) return false;
  return true;
}

/**
 * A copy made with this realm's JSON. (Not `structuredClone`: inside Jest it
 * returns objects of another realm, which the validator's `const`/`enum`
 * comparison does not treat as equal — see the report.)
 */
function jsonCopy(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}
