import { isSchemaObject, resolveLocalRef, type SchemaObject } from './schema-types';

/** A tool's input schema in the OpenAPI subset Gemini's function declarations take, and what was changed. */
export interface GeminiSchemaResult {
  readonly schema: SchemaObject;
  /** What was left out or rewritten, as `pointer keyword` (the runtime still validates the original). */
  readonly changed: readonly string[];
}

// Gemini's Schema object (generativelanguage v1beta): what it keeps as is.
const KEPT = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);
const MAX_DEPTH = 32;

/**
 * Converts a JSON Schema (2020-12 or draft-07) to the OpenAPI 3.0 subset of
 * Gemini's `FunctionDeclaration.parameters`: local `$ref`s inlined (a
 * recursive one becomes an object described as such), `type: [t, 'null']`
 * → `type: t, nullable: true`, several types → `anyOf`, `oneOf` → `anyOf`,
 * `allOf` of objects merged, `const` → a one-value `enum` (strings only: an
 * enum of other values is left out), and everything else the subset lacks
 * (`additionalProperties`, `$defs`, exclusive bounds, `not`, …) left out.
 * Each change is listed; the runtime validates the call against the
 * original. Pure.
 */
export function toGeminiSchema(schema: unknown): GeminiSchemaResult {
  const changed: string[] = [];
  const root = isSchemaObject(schema) ? schema : { type: 'object', properties: {} };
  const converted = convert(root, root, '', 0, [], changed);
  return { schema: converted, changed };
}

function convert(schema: unknown, root: SchemaObject, pointer: string, depth: number, refs: string[], changed: string[]): SchemaObject {
  const where = pointer || '/';
  if (schema === true || (isSchemaObject(schema) && Object.keys(schema).length === 0)) return {};
  if (!isSchemaObject(schema)) {
    changed.push(`${where} false`);
    return { type: 'null' };
  }
  if (depth > MAX_DEPTH) {
    changed.push(`${where} depth`);
    return { type: 'object', description: 'Nested too deeply to describe here; see the parent description.' };
  }
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    changed.push(`${where} $ref`);
    const target = resolveLocalRef(root, ref);
    if (target === undefined || refs.includes(ref)) {
      const description = typeof schema['description'] === 'string' ? `${schema['description']} ` : '';
      return {
        type: 'object',
        description: `${description}(${target === undefined ? 'an external schema' : 'recursive: the same shape as its parent'})`.trim(),
      };
    }
    const { $ref: _ignored, ...rest } = schema;
    return convert({ ...(target as SchemaObject), ...rest }, root, pointer, depth + 1, [...refs, ref], changed);
  }
  const out: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (KEPT.has(keyword)) out[keyword] = value;
    else if (keyword !== 'oneOf' && keyword !== 'allOf' && keyword !== 'const') changed.push(`${where} ${keyword}`);
  }
  if (Array.isArray(schema['allOf'])) {
    changed.push(`${where} allOf`);
    for (const part of schema['allOf']) {
      const member = convert(part, root, `${pointer}/allOf`, depth + 1, refs, changed);
      for (const [keyword, value] of Object.entries(member)) {
        if (keyword === 'properties' && isSchemaObject(out['properties']) && isSchemaObject(value)) out['properties'] = { ...out['properties'], ...value };
        else if (keyword === 'required' && Array.isArray(out['required']) && Array.isArray(value))
          out['required'] = [...new Set([...out['required'], ...value])];
        else if (out[keyword] === undefined) out[keyword] = value;
      }
    }
  }
  if (schema['const'] !== undefined) {
    changed.push(`${where} const`);
    if (typeof schema['const'] === 'string') {
      out['enum'] = [schema['const']];
      out['type'] ??= 'string';
    }
  }
  if (Array.isArray(out['enum']) && !out['enum'].every((value) => typeof value === 'string')) {
    changed.push(`${where} enum`);
    delete out['enum'];
  }
  const type = out['type'];
  if (Array.isArray(type)) {
    const others = type.filter((entry) => entry !== 'null');
    if (type.includes('null')) out['nullable'] = true;
    if (others.length === 1) out['type'] = others[0];
    else {
      delete out['type'];
      out['anyOf'] = others.map((entry) => ({ type: entry }));
    }
    changed.push(`${where} type`);
  }
  const union = (Array.isArray(schema['oneOf']) ? schema['oneOf'] : []).concat(Array.isArray(out['anyOf']) && !Array.isArray(type) ? out['anyOf'] : []);
  if (Array.isArray(schema['oneOf'])) changed.push(`${where} oneOf`);
  if (union.length > 0) {
    const branches = union.map((branch, index) => convert(branch, root, `${pointer}/anyOf/${index}`, depth + 1, refs, changed));
    const nonNull = branches.filter((branch) => branch['type'] !== 'null');
    if (nonNull.length < branches.length) out['nullable'] = true;
    if (nonNull.length === 1 && out['type'] === undefined) {
      delete out['anyOf'];
      Object.assign(out, { ...nonNull[0], ...out });
    } else {
      out['anyOf'] = nonNull;
    }
  }
  if (isSchemaObject(out['properties'])) {
    out['properties'] = Object.fromEntries(
      Object.entries(out['properties']).map(([name, sub]) => [name, convert(sub, root, `${pointer}/properties/${name}`, depth + 1, refs, changed)]),
    );
  }
  if (out['items'] !== undefined) {
    if (Array.isArray(out['items'])) {
      changed.push(`${where} items`);
      delete out['items'];
    } else {
      out['items'] = convert(out['items'], root, `${pointer}/items`, depth + 1, refs, changed);
    }
  }
  return out;
}
