import type { ToolDescriptor } from '@ca/tool-lifecycle';

/** Options of the declarations: how much of each tool to show. */
export interface DeclarationOptions {
  /** Longest description kept per tool, in characters (default 80: its first sentence, cut there). */
  readonly descriptionChars?: number;
  /** Deepest nesting of object types written out; deeper ones are `object` (default 3). */
  readonly depth?: number;
}

/**
 * The TypeScript declaration of one tool as the program calls it:
 * `/** first sentence *\/ ident(i: {…}): Promise<…>;`. Compact on purpose —
 * property descriptions, formats and bounds are left out (`describe(name)`
 * gives the whole schema); optional properties are `?`, enums are unions.
 */
export function declareTool(ident: string, descriptor: ToolDescriptor, options: DeclarationOptions = {}): string {
  const depth = options.depth ?? 3;
  const summary = summaryOf(descriptor.description, options.descriptionChars ?? 80);
  const input = descriptor.inputSchema === undefined ? '{}' : typeOf(descriptor.inputSchema, depth);
  const output = descriptor.outputSchema === undefined ? 'any' : typeOf(descriptor.outputSchema, depth);
  const required = (descriptor.inputSchema as { required?: unknown } | undefined)?.required;
  const param = Array.isArray(required) && required.length > 0 ? `i: ${input}` : `i?: ${input}`;
  return `${summary === '' ? '' : `/** ${summary} */ `}${ident}(${param}): Promise<${output}>;`;
}

/** The whole `.d.ts` text: the `tools` object, `search` and `describe`. */
export function declareApi(tools: readonly { readonly ident: string; readonly descriptor: ToolDescriptor }[], options: DeclarationOptions = {}): string {
  // One line per tool, not indented: the text is sent as a JSON string, where an indent costs a token a line.
  const lines = tools.map(({ ident, descriptor }) => declareTool(ident, descriptor, options));
  return [
    'declare const tools: {',
    ...lines,
    '};',
    '/** Tools matching a query, best first. */ declare function search(query: string, o?: { limit?: number }): Promise<{ name: string; ident: string; description: string }[]>;',
    '/** A tool in full, by name or ident. */ declare function describe(name: string): Promise<{ name: string; ident: string; description: string; inputSchema?: object; outputSchema?: object; declaration: string }>;',
  ].join('\n');
}

/** The first sentence of a description, on one line, at most `max` characters. */
function summaryOf(description: string | undefined, max: number): string {
  if (typeof description !== 'string' || max <= 0) return '';
  const line = description.replace(/\s+/g, ' ').trim();
  const sentence = /^(.+?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
  const cut = sentence.length > max ? `${sentence.slice(0, max - 1).trimEnd()}…` : sentence;
  return cut.replace(/\*\//g, '* /');
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A JSON Schema as a TypeScript type, compact. Unknown shapes are `any`. */
export function typeOf(schema: unknown, depth: number): string {
  if (schema === true || schema === undefined) return 'any';
  if (schema === false) return 'never';
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'any';
  const s = schema as Record<string, unknown>;
  if ('const' in s) return literal(s['const']);
  if (Array.isArray(s['enum'])) {
    const values = s['enum'].slice(0, 12).map(literal);
    return s['enum'].length > 12 ? `${values.join('|')}|${baseType(s['enum'][0])}` : values.join('|') || 'never';
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[key])) return unique((s[key] as unknown[]).slice(0, 8).map((part) => typeOf(part, depth))).join('|') || 'any';
  }
  if (Array.isArray(s['allOf']) && s['allOf'].length > 0) return unique((s['allOf'] as unknown[]).slice(0, 4).map((part) => typeOf(part, depth))).join('&');
  const type = s['type'];
  if (Array.isArray(type)) return unique(type.map((t) => typeOf({ ...s, type: t }, depth))).join('|');
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = typeOf(s['items'], depth - 1);
      return /^[A-Za-z_$][\w$]*$/.test(item) ? `${item}[]` : `(${item})[]`;
    }
    case 'object':
      return objectType(s, depth);
    default:
      return s['properties'] !== undefined ? objectType(s, depth) : 'any';
  }
}

function objectType(s: Record<string, unknown>, depth: number): string {
  const properties = s['properties'];
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties) || Object.keys(properties).length === 0) {
    return s['additionalProperties'] === false ? '{}' : 'object';
  }
  if (depth <= 0) return 'object';
  const required = new Set(Array.isArray(s['required']) ? (s['required'] as unknown[]).filter((name) => typeof name === 'string') : []);
  const fields = Object.entries(properties as Record<string, unknown>).map(([key, value]) => {
    const name = IDENT.test(key) ? key : JSON.stringify(key);
    return `${name}${required.has(key) ? '' : '?'}: ${typeOf(value, depth - 1)}`;
  });
  return `{ ${fields.join('; ')} }`;
}

function literal(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? value.slice(0, 60) : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return 'any';
}

function baseType(value: unknown): string {
  return typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : 'any';
}

function unique(types: string[]): string[] {
  return [...new Set(types)];
}
