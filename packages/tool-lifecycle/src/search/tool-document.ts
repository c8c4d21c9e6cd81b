import type { ToolDescriptor } from '../tool';
import { addTerms } from './search-text';

/** The fields a tool is indexed on, in this order. */
export const FIELD_NAME = 0;
export const FIELD_DESCRIPTION = 1;
export const FIELD_PARAMETER_NAMES = 2;
export const FIELD_PARAMETER_TEXT = 3;
export const FIELD_ORIGIN = 4;
export const FIELD_COUNT = 5;

/**
 * How much of a tool is read: descriptions and schemas come from servers and
 * files the service does not control, so a tool of megabytes costs what a
 * long ordinary one does.
 */
export const DOCUMENT_LIMITS = {
  /** Characters of the description read. */
  descriptionChars: 8_000,
  /** Terms kept per field. */
  fieldTerms: 1_500,
  /** Properties read from the input schema, nested ones included. */
  properties: 100,
  /** How deep nested properties are read (1: the top-level arguments only). */
  depth: 3,
  /** Characters read of each property's description. */
  propertyChars: 1_000,
  /** Enum values read per property, and characters of each. */
  enumValues: 20,
  enumChars: 60,
  /** Schema nodes visited in all, whatever their shape. */
  nodes: 1_000,
} as const;

/** The terms of one tool, field by field. */
export interface ToolDocument {
  readonly descriptor: ToolDescriptor;
  /** Terms per field, in field order; a term repeats as often as it occurs. */
  readonly fields: readonly (readonly string[])[];
}

/** The source kinds whose prefix a tool name carries (`mcp.<server>.<tool>`, `skill.<name>`, `builtin.fs.read`). */
const PREFIXED_KINDS = new Set(['mcp', 'skill', 'builtin', 'custom', 'wrapped']);

/**
 * Reads a descriptor into its fields, within {@link DOCUMENT_LIMITS}. With
 * `reuse` (arrays of a previous call), its arrays are emptied and filled
 * instead of new ones: an index reads thousands of tools in a row.
 */
export function toolDocument(descriptor: ToolDescriptor, reuse?: string[][]): ToolDocument {
  const fields: string[][] = reuse ?? Array.from({ length: FIELD_COUNT }, () => []);
  for (const field of fields) field.length = 0;
  const max = DOCUMENT_LIMITS.fieldTerms;
  const segments = descriptor.name.split('.');
  const origin = fields[FIELD_ORIGIN];
  addTerms(descriptor.source, origin, 100, max);
  let first = 0;
  if (segments.length > 1 && segments[0] === descriptor.source && PREFIXED_KINDS.has(descriptor.source)) {
    first = 1;
    // mcp.<server>.<tool>: the server names where the tool comes from, not what it does.
    if (descriptor.source === 'mcp' && segments.length > 2) {
      addTerms(segments[1], origin, 200, max);
      first = 2;
    }
  }
  for (let index = first; index < segments.length; index++) addTerms(segments[index], fields[FIELD_NAME], 200, max);
  if (typeof descriptor.description === 'string') addTerms(descriptor.description, fields[FIELD_DESCRIPTION], DOCUMENT_LIMITS.descriptionChars, max);
  try {
    readSchema(descriptor.inputSchema, fields[FIELD_PARAMETER_NAMES], fields[FIELD_PARAMETER_TEXT]);
  } catch {
    // A schema that throws when read (a getter, a proxy) is indexed as far as it was read.
  }
  return { descriptor, fields };
}

/** Property names, and their descriptions, titles and enum values, breadth first, within the limits. */
function readSchema(schema: unknown, names: string[], text: string[]): void {
  const max = DOCUMENT_LIMITS.fieldTerms;
  let properties = 0;
  let nodes = 0;
  const queue: { node: unknown; depth: number }[] = [{ node: schema, depth: 1 }];
  for (let head = 0; head < queue.length; head++) {
    const { node, depth } = queue[head];
    if (++nodes > DOCUMENT_LIMITS.nodes || properties >= DOCUMENT_LIMITS.properties) return;
    if (typeof node !== 'object' || node === null || Array.isArray(node)) continue;
    const record = node as Record<string, unknown>;
    const props = record['properties'];
    if (typeof props === 'object' && props !== null && !Array.isArray(props)) {
      for (const [name, property] of Object.entries(props as Record<string, unknown>)) {
        if (++properties > DOCUMENT_LIMITS.properties) return;
        addTerms(name, names, 200, max);
        if (typeof property !== 'object' || property === null) continue;
        const described = property as Record<string, unknown>;
        if (typeof described['description'] === 'string') addTerms(described['description'], text, DOCUMENT_LIMITS.propertyChars, max);
        if (typeof described['title'] === 'string') addTerms(described['title'], text, 200, max);
        const values = described['enum'];
        if (Array.isArray(values)) {
          for (const value of values.slice(0, DOCUMENT_LIMITS.enumValues)) {
            if (typeof value === 'string') addTerms(value, text, DOCUMENT_LIMITS.enumChars, max);
          }
        }
        if (depth < DOCUMENT_LIMITS.depth) queue.push({ node: property, depth: depth + 1 });
      }
    }
    // Arguments also hide in arrays of objects and in alternatives.
    if (record['items'] !== undefined) queue.push({ node: record['items'], depth });
    for (const keyword of ['anyOf', 'oneOf', 'allOf']) {
      const members = record[keyword];
      if (Array.isArray(members)) for (const member of members.slice(0, 10)) queue.push({ node: member, depth });
    }
  }
}
