import type { ToolExecutionTraceRepair, ToolInputRepairRule } from '@ca/tool-context';
import {
  derefSchema,
  isSchemaObject,
  jsonTypeOf,
  nonNullBranch,
  pointerSegment,
  typeAllows,
  typesOf,
  type JsonType,
  type SchemaObject,
} from '../schema/schema-types';

/** Every repair rule, in the order the README lists them. */
export const REPAIR_RULES: readonly ToolInputRepairRule[] = Object.freeze(['null-for-optional', 'json-string', 'single-to-array', 'string-to-scalar']);

/** A place where more than one repair would fit: nothing was changed there, and the model is told why. */
export interface DeclinedRepair {
  /** JSON Pointer of the value in the arguments. */
  readonly pointer: string;
  /** The rules that would each have changed it differently. */
  readonly rules: readonly ToolInputRepairRule[];
}

/** What {@link repairArguments} did. */
export interface ArgumentRepairs {
  /** The arguments to use: the same value when nothing was repaired, else a repaired copy (the input is never changed). */
  readonly value: unknown;
  /** Each repair made, in the order made. */
  readonly repairs: readonly ToolExecutionTraceRepair[];
  /** Places left alone because two rules disagreed. */
  readonly declined: readonly DeclinedRepair[];
}

/** Options of {@link repairArguments}. */
export interface RepairOptions {
  /** The rules that may apply (default: all four). */
  readonly rules?: readonly ToolInputRepairRule[];
}

const MAX_DEPTH = 64;
const MAX_REPAIRS = 100;
const MAX_DECLINED = 20;
/** A JSON number as a model writes it in a string: no spaces, no leading zeros, no `+`, no hex. */
const NUMBER_LITERAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const INTEGER_LITERAL = /^-?(?:0|[1-9]\d*)$/;
const NO_REPAIRS: ArgumentRepairs['repairs'] = Object.freeze([]);

interface Walk {
  readonly root: unknown;
  readonly nullForOptional: boolean;
  readonly jsonString: boolean;
  readonly singleToArray: boolean;
  readonly stringToScalar: boolean;
  repairs: ToolExecutionTraceRepair[] | undefined;
  declined: DeclinedRepair[] | undefined;
}

/**
 * Repairs a model's arguments where the tool's input schema makes the fix
 * unambiguous, and nowhere else:
 *
 * 1. `null-for-optional` — `null` for a property the schema does not require
 *    and whose schema does not allow `null`: the property is left out.
 * 2. `json-string` — a string holding JSON where the schema wants an object
 *    or an array (and not a string): the parsed value, when it has a type
 *    the schema allows.
 * 3. `single-to-array` — one value where the schema wants an array (and not
 *    that value's type): an array of that one value, when the items' schema
 *    allows its type.
 * 4. `string-to-scalar` — `"42"`, `"4.2"`, `"true"`, `"false"` where the
 *    schema wants a number, an integer or a boolean (and not a string): the
 *    number or boolean, written exactly as JSON would (no spaces, no leading
 *    zeros; an integer only when it is one and is exact).
 *
 * A value that already has a type its schema allows is never touched. A
 * value two rules would read differently (`"[1]"` where an array of strings
 * or numbers may come) is left as it is and reported in `declined`; the
 * runtime's validation then refuses it with the schema's own message.
 * Only unconditional places are walked: `properties`, `items`,
 * `prefixItems`, `additionalProperties`, local `$ref`s, `allOf` and the
 * non-null branch of `X | null`; never into other `anyOf`/`oneOf`/`if`
 * branches, where which schema applies is itself a guess.
 *
 * @throws Never.
 */
export function repairArguments(value: unknown, schema: unknown, options: RepairOptions = {}): ArgumentRepairs {
  const rules = options.rules ?? REPAIR_RULES;
  const walk: Walk = {
    root: schema,
    nullForOptional: rules.includes('null-for-optional'),
    jsonString: rules.includes('json-string'),
    singleToArray: rules.includes('single-to-array'),
    stringToScalar: rules.includes('string-to-scalar'),
    repairs: undefined,
    declined: undefined,
  };
  let repaired: unknown;
  try {
    repaired = visit(value, schema, walk, '', 0);
  } catch {
    // A schema or value too strange to read (a throwing getter): nothing is repaired.
    return { value, repairs: NO_REPAIRS, declined: [] };
  }
  return { value: repaired, repairs: walk.repairs ?? NO_REPAIRS, declined: walk.declined ?? [] };
}

function visit(value: unknown, schema: unknown, walk: Walk, pointer: string, depth: number): unknown {
  if (depth > MAX_DEPTH || !isSchemaObject(schema)) return value;
  let current = value;
  const types = typesOf(schema, walk.root);
  if (types !== undefined && !typeAllows(types, current)) current = repairHere(current, schema, types, walk, pointer);
  if (typeof current !== 'object' || current === null) return current;
  // Into the value: through the parts of the schema that apply to it whatever it holds.
  const parts = applicableParts(schema, walk.root, current);
  if (parts.length === 0) return current;
  return Array.isArray(current)
    ? visitArray(current, parts, walk, pointer, depth)
    : visitObject(current as Record<string, unknown>, parts, walk, pointer, depth);
}

/** The subschemas that apply to every value at this place: the schema, its `$ref`, its `allOf`, and the non-null branch of `X | null`. */
function applicableParts(schema: SchemaObject, root: unknown, value: unknown): SchemaObject[] {
  const parts: SchemaObject[] = [];
  const add = (part: unknown, depth: number): void => {
    if (!isSchemaObject(part) || depth > 8 || parts.includes(part)) return;
    parts.push(part);
    if (typeof part['$ref'] === 'string') add(derefSchema({ $ref: part['$ref'] }, root), depth + 1);
    if (Array.isArray(part['allOf'])) for (const member of part['allOf']) add(member, depth + 1);
    if (value !== null) {
      const branch = nonNullBranch(part, root);
      if (branch !== undefined) add(branch, depth + 1);
    }
  };
  add(schema, 0);
  return parts;
}

function visitObject(object: Record<string, unknown>, parts: SchemaObject[], walk: Walk, pointer: string, depth: number): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  const required = new Set<string>();
  for (const part of parts) if (Array.isArray(part['required'])) for (const name of part['required']) if (typeof name === 'string') required.add(name);
  for (const key of Object.keys(object)) {
    const child = object[key];
    const childPointer = `${pointer}/${pointerSegment(key)}`;
    const declared: unknown[] = [];
    for (const part of parts) {
      const properties = part['properties'];
      if (isSchemaObject(properties) && Object.prototype.hasOwnProperty.call(properties, key)) declared.push(properties[key]);
    }
    if (child === null && walk.nullForOptional && declared.length > 0 && !required.has(key) && declared.every((sub) => refusesNull(sub, walk.root))) {
      if (record(walk, { rule: 'null-for-optional', pointer: childPointer, from: 'null', to: 'absent' })) {
        copy ??= { ...object };
        delete copy[key];
      }
      continue;
    }
    let sub: unknown;
    if (declared.length === 1) sub = declared[0];
    else if (declared.length === 0) sub = additionalSchema(parts);
    if (sub === undefined) continue;
    const next = visit(child, sub, walk, childPointer, depth + 1);
    if (next !== child) {
      copy ??= { ...object };
      copy[key] = next;
    }
  }
  return copy ?? object;
}

/** The schema of properties no part names, when exactly one part gives one and no part has `patternProperties`. */
function additionalSchema(parts: SchemaObject[]): unknown {
  if (parts.some((part) => part['patternProperties'] !== undefined)) return undefined;
  const given = parts.map((part) => part['additionalProperties']).filter(isSchemaObject);
  return given.length === 1 ? given[0] : undefined;
}

function visitArray(array: unknown[], parts: SchemaObject[], walk: Walk, pointer: string, depth: number): unknown[] {
  // Only one part may say what the items are: two would need their schemas merged.
  const itemParts = parts.filter((part) => part['items'] !== undefined || part['prefixItems'] !== undefined);
  if (itemParts.length !== 1) return array;
  const part = itemParts[0] as SchemaObject;
  const prefix = Array.isArray(part['prefixItems']) ? part['prefixItems'] : Array.isArray(part['items']) ? part['items'] : [];
  const rest = Array.isArray(part['items']) ? part['additionalItems'] : part['items'];
  let copy: unknown[] | undefined;
  for (let index = 0; index < array.length; index++) {
    const sub = index < prefix.length ? prefix[index] : rest;
    if (sub === undefined) continue;
    const item = array[index];
    const next = visit(item, sub, walk, `${pointer}/${index}`, depth + 1);
    if (next !== item) {
      copy ??= array.slice();
      copy[index] = next;
    }
  }
  return copy ?? array;
}

/** True when the schema says what types it takes and `null` is not one of them. */
function refusesNull(schema: unknown, root: unknown): boolean {
  const types = typesOf(schema, root);
  return types !== undefined && types.size > 0 && !types.has('null');
}

interface Candidate {
  readonly rule: ToolInputRepairRule;
  readonly value: unknown;
}

/** Rules 2–4 at one place whose value has a type the schema does not allow. */
function repairHere(value: unknown, schema: SchemaObject, types: ReadonlySet<JsonType>, walk: Walk, pointer: string): unknown {
  const candidates: Candidate[] = [];
  if (typeof value === 'string') {
    if (walk.jsonString && (types.has('object') || types.has('array'))) {
      const parsed = parseContainer(value);
      if (parsed !== undefined && typeAllows(types, parsed)) candidates.push({ rule: 'json-string', value: parsed });
    }
    if (walk.stringToScalar) {
      const scalar = scalarOf(value, types);
      if (scalar !== undefined) candidates.push({ rule: 'string-to-scalar', value: scalar });
    }
  }
  if (walk.singleToArray && types.has('array') && value !== null && !Array.isArray(value) && singleItemFits(schema, walk.root, value)) {
    candidates.push({ rule: 'single-to-array', value: [value] });
  }
  if (candidates.length === 1) {
    const [chosen] = candidates as [Candidate];
    const from = jsonTypeOf(value);
    const to = jsonTypeOf(chosen.value);
    return record(walk, { rule: chosen.rule, pointer, from, to }) ? chosen.value : value;
  }
  if (candidates.length > 1 && (walk.declined ??= []).length < MAX_DECLINED) {
    walk.declined.push(Object.freeze({ pointer, rules: Object.freeze(candidates.map((candidate) => candidate.rule)) }));
  }
  return value;
}

/** A string that is a JSON object or array (and nothing else), parsed. */
function parseContainer(text: string): unknown {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The number or boolean a string spells, when the schema takes that type. */
function scalarOf(text: string, types: ReadonlySet<JsonType>): number | boolean | undefined {
  if (types.has('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  if (types.has('number') && NUMBER_LITERAL.test(text)) {
    const number = Number(text);
    return Number.isFinite(number) ? number : undefined;
  }
  if (types.has('integer') && INTEGER_LITERAL.test(text)) {
    const number = Number(text);
    return Number.isSafeInteger(number) ? number : undefined;
  }
  return undefined;
}

/** Whether one value would be a valid item of the array the schema wants: the items' types known and allowing it, no tuple. */
function singleItemFits(schema: SchemaObject, root: unknown, value: unknown): boolean {
  const parts = applicableParts(schema, root, []);
  const itemParts = parts.filter((part) => part['items'] !== undefined || part['prefixItems'] !== undefined);
  if (itemParts.length > 1) return false;
  if (itemParts.length === 0) return true;
  const part = itemParts[0] as SchemaObject;
  if (part['prefixItems'] !== undefined || Array.isArray(part['items'])) return false;
  const itemTypes = typesOf(part['items'], root);
  return itemTypes !== undefined && typeAllows(itemTypes, value);
}

function record(walk: Walk, repair: ToolExecutionTraceRepair): boolean {
  const repairs = (walk.repairs ??= []);
  if (repairs.length >= MAX_REPAIRS) return false;
  repairs.push(Object.freeze(repair));
  return true;
}
