import type { JsonSchema } from '@ca/domain';
import { escapePointerSegment, splitFragment } from './json-pointer';
import type { SchemaIssue } from './schema-issue';
import { createIssue } from './schema-issue';
import type { ResolvedReference, SchemaIndex, SchemaObject } from './schema-index';
import { compilePattern } from './schema-index';

/** Checks a `format`: `true`/`false`, or `undefined` for a format it does not know (then ignored). */
export type FormatCheck = (format: string, value: unknown) => boolean | undefined;

/** What the interpreter needs of a compiled pattern. */
export interface PatternMatcher {
  test(text: string): boolean;
}

/** Compiles a schema's pattern (already checked at compile time, so it does not throw). */
export type PatternCompiler = (source: string) => PatternMatcher;

/** Options of {@link SchemaInterpreter}. */
export interface SchemaInterpreterOptions {
  readonly index: SchemaIndex;
  /** Asserts `format` when given; otherwise `format` is an annotation. */
  readonly formatCheck?: FormatCheck;
  /** `false` when the schema's metaschema leaves out the validation vocabulary. */
  readonly validationVocabulary?: boolean;
  /** Compiles `pattern` and `patternProperties`; default JavaScript's `RegExp` (for trusted schemas). */
  readonly compilePattern?: PatternCompiler;
}

/** What a successful evaluation saw of the value, for `unevaluatedItems` and `unevaluatedProperties`. */
class Evaluated {
  properties: Set<string> | undefined;
  allProperties = false;
  itemPrefix = 0;
  itemIndexes: Set<number> | undefined;
  allItems = false;

  addProperty(name: string): void {
    (this.properties ??= new Set()).add(name);
  }

  addItem(index: number): void {
    (this.itemIndexes ??= new Set()).add(index);
  }

  merge(other: Evaluated): void {
    if (other.allProperties) this.allProperties = true;
    else if (other.properties !== undefined) for (const name of other.properties) this.addProperty(name);
    if (other.allItems) this.allItems = true;
    this.itemPrefix = Math.max(this.itemPrefix, other.itemPrefix);
    if (other.itemIndexes !== undefined) for (const index of other.itemIndexes) this.addItem(index);
  }

  hasProperty(name: string): boolean {
    return this.allProperties || this.properties?.has(name) === true;
  }

  hasItem(index: number): boolean {
    return this.allItems || index < this.itemPrefix || this.itemIndexes?.has(index) === true;
  }
}

/** Where an evaluation stands: in the value, in the schema, and in the dynamic scope. */
interface Position {
  readonly instancePath: string;
  readonly schemaPath: string;
  readonly base: string;
}

/**
 * Internal: a direct, spec-following evaluator of JSON Schema 2020-12, used
 * for the schemas that ajv mishandles — `$dynamicRef` (ajv overflows the stack
 * or answers wrongly), `unevaluatedItems`/`unevaluatedProperties` next to
 * `contains` or `if`, an empty `enum`, custom metaschemas with `$vocabulary`.
 * It is slower than ajv's generated code but keeps the same issue format.
 */
export class SchemaInterpreter {
  private readonly index: SchemaIndex;
  private readonly formatCheck: FormatCheck | undefined;
  private readonly validationVocabulary: boolean;
  private readonly compilePattern: PatternCompiler;
  private readonly patterns = new Map<string, PatternMatcher>();
  private readonly resolutions = new Map<string, ResolvedReference>();
  private readonly dynamicScope: string[] = [];

  constructor(options: SchemaInterpreterOptions) {
    this.index = options.index;
    this.formatCheck = options.formatCheck;
    this.validationVocabulary = options.validationVocabulary ?? true;
    this.compilePattern = options.compilePattern ?? ((source) => compilePattern(source, '#'));
  }

  /**
   * Validates `value` against `schema`, appending every issue to `issues`.
   * @throws RangeError when the value or the dynamic recursion is too deep (the caller turns it into an issue).
   */
  validate(schema: JsonSchema, value: unknown, issues: SchemaIssue[]): boolean {
    const info = this.index.getInfo(schema);
    this.dynamicScope.length = 0;
    const position: Position = { instancePath: '', schemaPath: info?.location ?? '#', base: info?.base ?? '' };
    return this.evaluate(schema, value, position, issues) !== undefined;
  }

  private evaluate(schema: JsonSchema, value: unknown, position: Position, issues: SchemaIssue[]): Evaluated | undefined {
    if (schema === true) return new Evaluated();
    if (schema === false) {
      issues.push(createIssue(position.instancePath, position.schemaPath, 'false schema', 'is not allowed (boolean schema false)'));
      return undefined;
    }
    const info = this.index.getInfo(schema);
    const here: Position = info === undefined ? position : { instancePath: position.instancePath, schemaPath: info.location, base: info.base };
    // The dynamic scope grows whenever evaluation crosses into another schema
    // resource, whether at its root or (through a $ref) somewhere inside it.
    const entersResource = info !== undefined && this.dynamicScope[this.dynamicScope.length - 1] !== info.base;
    if (entersResource) this.dynamicScope.push(here.base);
    try {
      return this.evaluateObject(schema, value, here, issues);
    } finally {
      if (entersResource) this.dynamicScope.pop();
    }
  }

  private evaluateObject(schema: SchemaObject, value: unknown, at: Position, issues: SchemaIssue[]): Evaluated | undefined {
    const evaluated = new Evaluated();
    const start = issues.length;
    const fail = (keyword: string, problem: string, params?: Record<string, unknown>, instancePath = at.instancePath): void => {
      issues.push(createIssue(instancePath, `${at.schemaPath}/${keyword}`, keyword, problem, params));
    };

    if (typeof schema.$ref === 'string') {
      const target = this.resolve(schema.$ref, at.base);
      this.apply(target, value, at.instancePath, issues, evaluated);
    }
    if (typeof schema.$dynamicRef === 'string') {
      const target = this.resolveDynamic(schema.$dynamicRef, at.base);
      this.apply(target, value, at.instancePath, issues, evaluated);
    }
    if (this.validationVocabulary) this.checkAssertions(schema, value, at, fail);
    this.applyInPlace(schema, value, at, issues, evaluated, fail);
    if (Array.isArray(value)) this.applyToItems(schema, value, at, issues, evaluated, fail);
    else if (isPlainObject(value)) this.applyToProperties(schema, value, at, issues, evaluated, fail);
    if (this.formatCheck !== undefined && typeof schema.format === 'string') {
      if (this.formatCheck(schema.format, value) === false) fail('format', `must match format "${schema.format}"`, { format: schema.format });
    }
    if (Array.isArray(value) && schema.unevaluatedItems !== undefined) {
      const sub = schema.unevaluatedItems as JsonSchema;
      for (let index = 0; index < value.length; index++) {
        if (evaluated.hasItem(index)) continue;
        if (sub === false) {
          fail('unevaluatedItems', 'must NOT have unevaluated items', { unevaluatedItem: index }, pointer(at.instancePath, index));
        } else {
          this.evaluate(sub, value[index], this.child(at, 'unevaluatedItems', index), issues);
        }
      }
      evaluated.allItems = true;
    }
    if (isPlainObject(value) && schema.unevaluatedProperties !== undefined) {
      const sub = schema.unevaluatedProperties as JsonSchema;
      for (const name of Object.keys(value)) {
        if (evaluated.hasProperty(name)) continue;
        if (sub === false) {
          fail('unevaluatedProperties', 'must NOT have unevaluated properties', { unevaluatedProperty: name });
        } else {
          this.evaluate(sub, value[name], this.child(at, 'unevaluatedProperties', name), issues);
        }
      }
      evaluated.allProperties = true;
    }
    return issues.length === start ? evaluated : undefined;
  }

  private apply(target: ResolvedReference, value: unknown, instancePath: string, issues: SchemaIssue[], evaluated: Evaluated): void {
    const result = this.evaluate(target.schema, value, { instancePath, schemaPath: target.location, base: target.base }, issues);
    if (result !== undefined) evaluated.merge(result);
  }

  private resolve(reference: string, base: string): ResolvedReference {
    const key = `${base}\u0000${reference}`;
    let resolved = this.resolutions.get(key);
    if (resolved === undefined) {
      resolved = this.index.resolve(reference, base);
      // Compilation checked every reference; a miss here is a bug, not bad input.
      if (resolved === undefined) throw new Error(`Unresolved reference "${reference}" from ${base}`);
      this.resolutions.set(key, resolved);
    }
    return resolved;
  }

  /** `$dynamicRef`: a normal reference, unless it lands on a `$dynamicAnchor`; then the outermost resource of the dynamic scope with that anchor wins. */
  private resolveDynamic(reference: string, base: string): ResolvedReference {
    const initial = this.resolve(reference, base);
    const name = splitFragment(initial.uri)[1];
    if (name === undefined || name === '' || name.startsWith('/')) return initial;
    const [resourceUri] = splitFragment(initial.uri);
    if (this.index.getDynamicAnchor(resourceUri, name) !== initial.schema) return initial;
    for (const scope of this.dynamicScope) {
      const anchored = this.index.getDynamicAnchor(scope, name);
      if (anchored !== undefined) return this.resolve(`#${name}`, scope);
    }
    return initial;
  }

  private child(at: Position, keyword: string, instanceSegment?: string | number, ...schemaSegments: (string | number)[]): Position {
    const suffix = [keyword, ...schemaSegments].map((segment) => `/${escapePointerSegment(segment)}`).join('');
    return {
      instancePath: instanceSegment === undefined ? at.instancePath : pointer(at.instancePath, instanceSegment),
      schemaPath: at.schemaPath + suffix,
      base: at.base,
    };
  }

  private applyInPlace(
    schema: SchemaObject,
    value: unknown,
    at: Position,
    issues: SchemaIssue[],
    evaluated: Evaluated,
    fail: (keyword: string, problem: string, params?: Record<string, unknown>) => void,
  ): void {
    if (Array.isArray(schema.allOf)) {
      schema.allOf.forEach((sub: JsonSchema, index) => {
        const result = this.evaluate(sub, value, this.child(at, 'allOf', undefined, index), issues);
        if (result !== undefined) evaluated.merge(result);
      });
    }
    if (Array.isArray(schema.anyOf)) {
      const branchIssues: SchemaIssue[] = [];
      let matched = false;
      schema.anyOf.forEach((sub: JsonSchema, index) => {
        const result = this.evaluate(sub, value, this.child(at, 'anyOf', undefined, index), branchIssues);
        if (result !== undefined) {
          matched = true;
          evaluated.merge(result);
        }
      });
      if (!matched) {
        issues.push(...branchIssues);
        fail('anyOf', 'must match a schema in anyOf');
      }
    }
    if (Array.isArray(schema.oneOf)) {
      const branchIssues: SchemaIssue[] = [];
      const passing: number[] = [];
      let kept: Evaluated | undefined;
      schema.oneOf.forEach((sub: JsonSchema, index) => {
        const result = this.evaluate(sub, value, this.child(at, 'oneOf', undefined, index), branchIssues);
        if (result !== undefined) {
          passing.push(index);
          kept = result;
        }
      });
      if (passing.length === 1 && kept !== undefined) evaluated.merge(kept);
      else if (passing.length === 0) {
        issues.push(...branchIssues);
        fail('oneOf', 'must match exactly one schema in oneOf', { passingSchemas: null });
      } else fail('oneOf', 'must match exactly one schema in oneOf', { passingSchemas: passing });
    }
    if (schema.not !== undefined) {
      if (this.evaluate(schema.not as JsonSchema, value, this.child(at, 'not'), []) !== undefined) fail('not', 'must NOT be valid');
    }
    if (schema.if !== undefined) {
      const condition = this.evaluate(schema.if as JsonSchema, value, this.child(at, 'if'), []);
      if (condition !== undefined) evaluated.merge(condition);
      const branch = condition !== undefined ? 'then' : 'else';
      if (schema[branch] !== undefined) {
        const before = issues.length;
        const result = this.evaluate(schema[branch] as JsonSchema, value, this.child(at, branch), issues);
        if (result !== undefined) evaluated.merge(result);
        else if (issues.length > before) fail('if', `must match "${branch}" schema`, { failingKeyword: branch });
      }
    }
    if (isPlainObject(value) && isPlainObject(schema.dependentSchemas)) {
      const dependentSchemas = schema.dependentSchemas;
      for (const name of Object.keys(dependentSchemas)) {
        if (!Object.hasOwn(value, name)) continue;
        const result = this.evaluate(dependentSchemas[name] as JsonSchema, value, this.child(at, 'dependentSchemas', undefined, name), issues);
        if (result !== undefined) evaluated.merge(result);
      }
    }
  }

  private applyToItems(
    schema: SchemaObject,
    value: readonly unknown[],
    at: Position,
    issues: SchemaIssue[],
    evaluated: Evaluated,
    fail: (keyword: string, problem: string, params?: Record<string, unknown>) => void,
  ): void {
    let prefix = 0;
    if (Array.isArray(schema.prefixItems)) {
      prefix = Math.min(schema.prefixItems.length, value.length);
      for (let index = 0; index < prefix; index++) {
        this.evaluate(schema.prefixItems[index] as JsonSchema, value[index], this.child(at, 'prefixItems', index, index), issues);
      }
      evaluated.itemPrefix = Math.max(evaluated.itemPrefix, prefix);
    }
    if (schema.items !== undefined && !Array.isArray(schema.items)) {
      for (let index = prefix; index < value.length; index++) {
        this.evaluate(schema.items as JsonSchema, value[index], this.child(at, 'items', index), issues);
      }
      evaluated.allItems = true;
    }
    if (schema.contains !== undefined) {
      let matches = 0;
      for (let index = 0; index < value.length; index++) {
        if (this.evaluate(schema.contains as JsonSchema, value[index], this.child(at, 'contains', index), []) !== undefined) {
          matches++;
          evaluated.addItem(index);
        }
      }
      const min = this.validationVocabulary && typeof schema.minContains === 'number' ? schema.minContains : 1;
      const max = this.validationVocabulary && typeof schema.maxContains === 'number' ? schema.maxContains : Infinity;
      if (matches < min) fail('contains', `must contain at least ${min} valid item(s)`, { minContains: min });
      if (matches > max) fail('contains', `must contain at most ${max} valid item(s)`, { maxContains: max });
    }
  }

  private applyToProperties(
    schema: SchemaObject,
    value: Readonly<Record<string, unknown>>,
    at: Position,
    issues: SchemaIssue[],
    evaluated: Evaluated,
    fail: (keyword: string, problem: string, params?: Record<string, unknown>, instancePath?: string) => void,
  ): void {
    const names = Object.keys(value);
    const properties = isPlainObject(schema.properties) ? schema.properties : undefined;
    const patternProperties = isPlainObject(schema.patternProperties) ? schema.patternProperties : undefined;
    const patterns = patternProperties === undefined ? [] : Object.keys(patternProperties).map((source) => [source, this.pattern(source)] as const);
    for (const name of names) {
      let matched = false;
      if (properties !== undefined && Object.hasOwn(properties, name)) {
        matched = true;
        this.evaluate(properties[name] as JsonSchema, value[name], this.child(at, 'properties', name, name), issues);
      }
      for (const [source, pattern] of patterns) {
        if (!pattern.test(name)) continue;
        matched = true;
        this.evaluate((patternProperties as SchemaObject)[source] as JsonSchema, value[name], this.child(at, 'patternProperties', name, source), issues);
      }
      if (matched) evaluated.addProperty(name);
      else if (schema.additionalProperties !== undefined) {
        const sub = schema.additionalProperties as JsonSchema;
        if (sub === false) fail('additionalProperties', 'must NOT have additional properties', { additionalProperty: name });
        else this.evaluate(sub, value[name], this.child(at, 'additionalProperties', name), issues);
        evaluated.addProperty(name);
      }
      if (schema.propertyNames !== undefined) {
        const nameIssues: SchemaIssue[] = [];
        if (this.evaluate(schema.propertyNames as JsonSchema, name, this.child(at, 'propertyNames'), nameIssues) === undefined) {
          fail('propertyNames', `property name '${name}' is invalid`, { propertyName: name });
        }
      }
    }
  }

  private checkAssertions(
    schema: SchemaObject,
    value: unknown,
    at: Position,
    fail: (keyword: string, problem: string, params?: Record<string, unknown>, instancePath?: string) => void,
  ): void {
    if (schema.type !== undefined) {
      const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
      if (!types.some((type) => hasType(value, type))) fail('type', `must be ${types.join(',')}`, { type: schema.type });
    }
    if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => deepEqual(allowed, value))) {
      fail('enum', 'must be equal to one of the allowed values', { allowedValues: schema.enum });
    }
    if (Object.hasOwn(schema, 'const') && !deepEqual(schema.const, value)) {
      fail('const', 'must be equal to constant', { allowedValue: schema.const });
    }
    if (typeof value === 'number') {
      const limit = (keyword: string, comparison: string, ok: (limit: number) => boolean): void => {
        const bound = schema[keyword];
        if (typeof bound === 'number' && !ok(bound)) fail(keyword, `must be ${comparison} ${bound}`, { comparison, limit: bound });
      };
      limit('maximum', '<=', (bound) => value <= bound);
      limit('exclusiveMaximum', '<', (bound) => value < bound);
      limit('minimum', '>=', (bound) => value >= bound);
      limit('exclusiveMinimum', '>', (bound) => value > bound);
      if (typeof schema.multipleOf === 'number' && !isMultipleOf(value, schema.multipleOf)) {
        fail('multipleOf', `must be multiple of ${schema.multipleOf}`, { multipleOf: schema.multipleOf });
      }
    }
    if (typeof value === 'string') {
      const length = codePointLength(value);
      if (typeof schema.maxLength === 'number' && length > schema.maxLength) {
        fail('maxLength', `must NOT have more than ${schema.maxLength} characters`, { limit: schema.maxLength });
      }
      if (typeof schema.minLength === 'number' && length < schema.minLength) {
        fail('minLength', `must NOT have fewer than ${schema.minLength} characters`, { limit: schema.minLength });
      }
      if (typeof schema.pattern === 'string' && !this.pattern(schema.pattern).test(value)) {
        fail('pattern', `must match pattern "${schema.pattern}"`, { pattern: schema.pattern });
      }
    }
    if (Array.isArray(value)) {
      if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) {
        fail('maxItems', `must NOT have more than ${schema.maxItems} items`, { limit: schema.maxItems });
      }
      if (typeof schema.minItems === 'number' && value.length < schema.minItems) {
        fail('minItems', `must NOT have fewer than ${schema.minItems} items`, { limit: schema.minItems });
      }
      if (schema.uniqueItems === true) {
        const duplicate = findDuplicate(value);
        if (duplicate !== undefined) {
          const [i, j] = duplicate;
          fail('uniqueItems', `must NOT have duplicate items (items ## ${j} and ${i} are identical)`, { i, j });
        }
      }
    }
    if (isPlainObject(value)) {
      const count = Object.keys(value).length;
      if (typeof schema.maxProperties === 'number' && count > schema.maxProperties) {
        fail('maxProperties', `must NOT have more than ${schema.maxProperties} properties`, { limit: schema.maxProperties });
      }
      if (typeof schema.minProperties === 'number' && count < schema.minProperties) {
        fail('minProperties', `must NOT have fewer than ${schema.minProperties} properties`, { limit: schema.minProperties });
      }
      if (Array.isArray(schema.required)) {
        for (const name of schema.required) {
          if (typeof name === 'string' && !Object.hasOwn(value, name)) {
            fail('required', `must have required property '${name}'`, { missingProperty: name });
          }
        }
      }
      if (isPlainObject(schema.dependentRequired)) {
        for (const [name, needed] of Object.entries(schema.dependentRequired)) {
          if (!Object.hasOwn(value, name) || !Array.isArray(needed)) continue;
          for (const other of needed) {
            if (typeof other === 'string' && !Object.hasOwn(value, other)) {
              fail('dependentRequired', `must have property ${other} when property ${name} is present`, {
                property: name,
                missingProperty: other,
              });
            }
          }
        }
      }
    }
  }

  private pattern(source: string): PatternMatcher {
    let pattern = this.patterns.get(source);
    if (pattern === undefined) {
      pattern = this.compilePattern(source);
      this.patterns.set(source, pattern);
    }
    return pattern;
  }
}

function pointer(instancePath: string, segment: string | number): string {
  return `${instancePath}/${escapePointerSegment(segment)}`;
}

function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isPlainObject(value);
    default:
      return false;
  }
}

/**
 * @internal whether `value` is a multiple of `divisor`, for numbers of any
 * size: 5e20 is a multiple of 0.5 (ajv's own check says no, as it compares
 * against parseInt of the quotient's text, "1e+21"), and a quotient that
 * overflows to Infinity is not.
 */
export function isMultipleOf(value: number, divisor: number): boolean {
  if (divisor <= 0) return false;
  const quotient = value / divisor;
  if (!Number.isFinite(quotient)) return false;
  if (Number.isInteger(quotient)) return true;
  // Decimal divisors (0.01) are not exact in binary: accept a rounding error of a few ulps.
  return Math.abs(quotient - Math.round(quotient)) < Math.abs(quotient) * Number.EPSILON * 4;
}

function codePointLength(text: string): number {
  let length = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index++;
    }
    length++;
  }
  return length;
}

/** JSON equality: numbers by value (1 equals 1.0), objects by own keys, arrays by order. */
export function deepEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
  if (Array.isArray(left)) {
    if (!Array.isArray(right) || left.length !== right.length) return false;
    return left.every((item, index) => deepEqual(item, right[index]));
  }
  if (Array.isArray(right)) return false;
  const leftKeys = Object.keys(left);
  if (leftKeys.length !== Object.keys(right).length) return false;
  return leftKeys.every((key) => Object.hasOwn(right, key) && deepEqual((left as Record<string, unknown>)[key], (right as Record<string, unknown>)[key]));
}

/** First pair of equal items (`[i, j]`, `i < j`), in linear time: items are keyed by a canonical JSON text. */
export function findDuplicate(items: readonly unknown[]): [number, number] | undefined {
  const seen = new Map<string, number>();
  for (let j = 0; j < items.length; j++) {
    const key = canonicalJson(items[j]);
    const i = seen.get(key);
    if (i !== undefined) return [i, j];
    seen.set(key, j);
  }
  return undefined;
}

/** JSON text with sorted keys, so that equal JSON values give equal texts. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`)
      .join(',')}}`;
  }
  return typeof value === 'string' ? JSON.stringify(value) : `${typeof value}:${String(value)}`;
}
