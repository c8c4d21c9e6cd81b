/**
 * Reading a JSON Schema for what the front door needs: the JSON types a
 * subschema allows, local `$ref`s followed, and nothing guessed — an answer
 * of `undefined` means "cannot say", and every caller then leaves the value
 * alone.
 */

/** A JSON Schema object (booleans are handled by the callers). */
export type SchemaObject = Readonly<Record<string, unknown>>;

/** The JSON types of JSON Schema. */
export type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';

const JSON_TYPES: readonly string[] = ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object'];

/** How deep `$ref`s and `allOf`s are followed before the answer is "cannot say". */
const MAX_REF_DEPTH = 16;

export function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The JSON type of a value, `integer` for whole numbers. */
export function jsonTypeOf(value: unknown): JsonType | 'undefined' {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    case 'string':
      return 'string';
    case 'object':
      return 'object';
    default:
      return 'undefined';
  }
}

/** Whether a value's type is one of `types` (an integer is a number). */
export function typeAllows(types: ReadonlySet<JsonType>, value: unknown): boolean {
  const type = jsonTypeOf(value);
  if (type === 'undefined') return false;
  if (types.has(type)) return true;
  return type === 'integer' && types.has('number');
}

/**
 * The subschema a local `$ref` (`#`, `#/$defs/x`, `#/definitions/x`, any JSON
 * Pointer into the root) names, or `undefined` for any other reference.
 */
export function resolveLocalRef(root: unknown, ref: unknown): unknown {
  if (typeof ref !== 'string' || !ref.startsWith('#')) return undefined;
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (!isSchemaObject(node) && !Array.isArray(node)) return undefined;
    if (!Object.prototype.hasOwnProperty.call(node, segment)) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

/** The subschema itself, or where its local `$ref` leads when it has nothing else (draft-07 style). */
export function derefSchema(schema: unknown, root: unknown, depth = 0): unknown {
  let current = schema;
  for (let hops = depth; isSchemaObject(current) && typeof current['$ref'] === 'string' && hops < MAX_REF_DEPTH; hops++) {
    const target = resolveLocalRef(root, current['$ref']);
    if (target === undefined) return undefined;
    // A $ref beside other keywords applies both (2020-12); the types are then read from both by typesOf.
    if (Object.keys(current).some((key) => key !== '$ref' && key !== 'description' && key !== 'title' && key !== '$comment')) return current;
    current = target;
  }
  return current;
}

/**
 * The JSON types every valid value at this subschema must have, read from
 * `type`, intersected across `$ref` and `allOf`, and the union of
 * `anyOf`/`oneOf` branches when every branch says; `undefined` when the
 * schema does not restrict the type (or cannot be read).
 */
export function typesOf(schema: unknown, root: unknown, depth = 0): ReadonlySet<JsonType> | undefined {
  if (schema === false) return new Set();
  if (!isSchemaObject(schema) || depth > MAX_REF_DEPTH) return undefined;
  let types: Set<JsonType> | undefined;
  const narrow = (other: ReadonlySet<JsonType> | undefined): void => {
    if (other === undefined) return;
    if (types === undefined) {
      types = new Set(other);
      return;
    }
    const next = new Set<JsonType>();
    for (const type of types) {
      if (other.has(type)) next.add(type);
      else if (type === 'number' && other.has('integer')) next.add('integer');
    }
    if (types.has('integer') && other.has('number')) next.add('integer');
    types = next;
  };
  const declared = schema['type'];
  if (typeof declared === 'string' || Array.isArray(declared)) {
    const list = (Array.isArray(declared) ? declared : [declared]).filter((type): type is JsonType => JSON_TYPES.includes(type as string));
    narrow(new Set(list));
  }
  if (typeof schema['$ref'] === 'string') {
    const target = resolveLocalRef(root, schema['$ref']);
    if (target !== undefined) narrow(typesOf(target, root, depth + 1));
  }
  if (Array.isArray(schema['allOf'])) for (const part of schema['allOf']) narrow(typesOf(part, root, depth + 1));
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = schema[keyword];
    if (!Array.isArray(branches) || branches.length === 0) continue;
    const union = new Set<JsonType>();
    let known = true;
    for (const branch of branches) {
      const branchTypes = typesOf(branch, root, depth + 1);
      if (branchTypes === undefined) {
        known = false;
        break;
      }
      for (const type of branchTypes) union.add(type);
    }
    if (known) narrow(union);
  }
  if (Array.isArray(schema['enum']) && types === undefined) {
    const fromEnum = new Set<JsonType>();
    for (const value of schema['enum']) {
      const type = jsonTypeOf(value);
      if (type !== 'undefined') fromEnum.add(type);
    }
    narrow(fromEnum);
  }
  return types;
}

/**
 * The one branch of a nullable union (`anyOf: [X, { type: 'null' }]`, the
 * form Pydantic and Zod emit for `X | null`), or `undefined` when the schema
 * is no such union.
 */
export function nonNullBranch(schema: SchemaObject, root: unknown): unknown {
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = schema[keyword];
    if (!Array.isArray(branches) || branches.length !== 2) continue;
    const nulls = branches.filter((branch) => {
      const types = typesOf(branch, root);
      return types !== undefined && types.size === 1 && types.has('null');
    });
    if (nulls.length === 1) return branches.find((branch) => !nulls.includes(branch));
  }
  return undefined;
}

/** RFC 6901 escaping of one segment. */
export function pointerSegment(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}
