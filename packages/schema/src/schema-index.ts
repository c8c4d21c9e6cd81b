import type { JsonSchema } from '@ca/domain';
import { escapePointerSegment, parsePointerFragment, resolveUri, splitFragment } from './json-pointer';
import type { SchemaDialect } from './schema-dialect';
import { SchemaProblem } from './schema-problem';

/** A schema that is an object (not a boolean). */
export type SchemaObject = { readonly [keyword: string]: unknown };

/** Base URI given to a compiled schema without `$id`; never fetched, never shown. */
export const ANONYMOUS_BASE_URI = 'https://anonymous.schema.invalid/root.json';

/** The keywords whose value is one subschema (`items` may also be a list, in old drafts). */
const SINGLE_SCHEMA_KEYWORDS = [
  'additionalProperties',
  'propertyNames',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
  'additionalItems',
  'items',
] as const;
/** The keywords whose value maps names to subschemas. */
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions', 'dependencies'] as const;
/** The keywords whose value is a list of subschemas. */
const SCHEMA_LIST_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'] as const;
/** Applicators that apply their subschemas to the same value (not to a part of it). */
const IN_PLACE_KEYWORDS: ReadonlySet<string> = new Set(['not', 'if', 'then', 'else', 'allOf', 'anyOf', 'oneOf', 'dependentSchemas']);
/** The keywords that refer to another schema. */
export const REFERENCE_KEYWORDS = ['$ref', '$dynamicRef', '$recursiveRef'] as const;
type ReferenceKeyword = (typeof REFERENCE_KEYWORDS)[number];
/** The reference keywords each dialect knows (any other is an unknown keyword, ignored). */
const REFERENCE_KEYWORDS_OF: Readonly<Record<SchemaDialect, readonly ReferenceKeyword[]>> = {
  'draft-07': ['$ref'],
  'draft-2019-09': ['$ref', '$recursiveRef'],
  'draft-2020-12': ['$ref', '$dynamicRef'],
};

/** A subschema of a schema object, with the pointer segments that lead to it. */
interface Subschema {
  readonly schema: JsonSchema;
  readonly keyword: string;
  readonly segments: readonly string[];
}

/** One document (the compiled schema, a remote, an official metaschema) known to an index. */
export interface SchemaDocument {
  /** Its URI without fragment. */
  readonly uri: string;
  readonly root: JsonSchema;
  readonly dialect: SchemaDialect;
  /** Draft-07 rules: `$id: '#name'` is an anchor, `$ref` hides its siblings. */
  readonly legacy: boolean;
  /** Prefix of the locations of its nodes: `''` for the compiled schema, its URI otherwise. */
  readonly displayPrefix: string;
  /** An official metaschema, which ajv is known to handle. */
  readonly official: boolean;
  readonly references: SchemaReference[];
  /**
   * The first feature found that ajv is known to get wrong in 2020-12, if any:
   * `$dynamicRef` (stack overflows, wrong answers), `unevaluatedItems` /
   * `unevaluatedProperties` (wrong answers next to `contains` or `if`), an
   * empty `enum` (refused), a property named `__proto__` (ignored).
   */
  ajvLimitation: string | undefined;
  /** Every `pattern` and `patternProperties` key, with its location, for the linear-time engine's check. */
  readonly patterns: SchemaPattern[];
}

/** A regular expression of a schema, where it stands. */
export interface SchemaPattern {
  readonly source: string;
  /** `#/properties/a/pattern`, `#/patternProperties/^x`. */
  readonly location: string;
}

/** A reference keyword found while indexing. */
export interface SchemaReference {
  readonly keyword: ReferenceKeyword;
  readonly value: string;
  readonly base: string;
  /** Location of the keyword itself: `#/properties/a/$ref`. */
  readonly location: string;
  readonly node: SchemaObject;
  readonly document: SchemaDocument;
}

/** What an index knows of one schema object. */
export interface SchemaNodeInfo {
  /** Base URI in force inside the node (after its own `$id`). */
  readonly base: string;
  /** `#/pointer` (or `uri#/pointer` outside the compiled schema). */
  readonly location: string;
  /** The node starts a schema resource (it has an `$id`, or is a document root). */
  readonly resourceRoot: boolean;
  readonly document: SchemaDocument;
}

/** A reference resolved to its target. */
export interface ResolvedReference {
  readonly schema: JsonSchema;
  /** Absolute URI of the target (with fragment). */
  readonly uri: string;
  /** Base URI in force inside the target. */
  readonly base: string;
  /** Location of the target for issue paths. */
  readonly location: string;
}

/** Options of {@link SchemaIndex.addDocument}. */
export interface AddDocumentOptions {
  readonly dialect: SchemaDialect;
  readonly display?: 'root' | 'uri';
  readonly official?: boolean;
}

/**
 * Internal: the schema resources, anchors and dynamic anchors of a set of
 * documents, and static checks on them. An index may have a parent (the
 * validator's registered documents) under which one compilation adds the
 * schema being compiled, so that two tools' schemas never see each other's
 * `$id`s.
 */
export class SchemaIndex {
  private readonly resources = new Map<string, JsonSchema>();
  private readonly anchors = new Map<string, SchemaObject>();
  private readonly dynamicAnchors = new Map<string, SchemaObject>();
  private readonly documents = new Map<string, SchemaDocument>();
  private readonly nodes = new Map<SchemaObject, SchemaNodeInfo>();

  constructor(private readonly parent?: SchemaIndex) {}

  /**
   * Indexes `root` under `uri` (its `$id`, when it has one, wins).
   * @throws SchemaProblem for a duplicate `$id` or anchor, or an invalid `pattern`.
   */
  addDocument(root: JsonSchema, uri: string, options: AddDocumentOptions): SchemaDocument {
    const ownId = typeof root === 'object' && typeof root.$id === 'string' && !root.$id.startsWith('#') ? root.$id : undefined;
    const documentUri = splitFragment((ownId === undefined ? uri : resolveUri(ownId, uri)) ?? uri)[0];
    const document: SchemaDocument = {
      uri: documentUri,
      root,
      dialect: options.dialect,
      legacy: options.dialect === 'draft-07',
      displayPrefix: options.display === 'uri' ? documentUri : '',
      official: options.official ?? false,
      references: [],
      ajvLimitation: undefined,
      patterns: [],
    };
    this.documents.set(documentUri, document);
    if (uri !== documentUri) this.documents.set(splitFragment(uri)[0], document);
    this.resources.set(splitFragment(uri)[0], root);
    this.resources.set(documentUri, root);
    this.walk(root, [], documentUri, document, true);
    return document;
  }

  /** The document registered under `uri` (without fragment), here or in a parent. */
  getDocument(uri: string): SchemaDocument | undefined {
    return this.documents.get(uri) ?? this.parent?.getDocument(uri);
  }

  /** What the index knows of `schema`, here or in a parent. */
  getInfo(schema: JsonSchema): SchemaNodeInfo | undefined {
    if (typeof schema !== 'object' || schema === null) return undefined;
    return this.nodes.get(schema) ?? this.parent?.getInfo(schema);
  }

  /** The schema carrying `$dynamicAnchor: name` in the resource `resourceUri`. */
  getDynamicAnchor(resourceUri: string, name: string): SchemaObject | undefined {
    const key = `${resourceUri}#${name}`;
    return this.dynamicAnchors.get(key) ?? this.parent?.getDynamicAnchor(resourceUri, name);
  }

  private getResource(uri: string): JsonSchema | undefined {
    const own = this.resources.get(uri);
    return own !== undefined ? own : this.parent?.getResource(uri);
  }

  private getAnchor(key: string): SchemaObject | undefined {
    return this.anchors.get(key) ?? this.parent?.getAnchor(key);
  }

  /** Resolves `reference` against `base`; `undefined` when its target is unknown. */
  resolve(reference: string, base: string): ResolvedReference | undefined {
    const uri = resolveUri(reference, base);
    if (uri === undefined) return undefined;
    const [documentUri, fragment] = splitFragment(uri);
    const resource = this.getResource(documentUri);
    if (resource === undefined) return undefined;
    if (fragment === undefined || fragment === '') return this.describeTarget(resource, uri, documentUri);
    const segments = parsePointerFragment(fragment);
    if (segments === undefined) {
      const anchored = this.getAnchor(`${documentUri}#${decodeFragment(fragment)}`);
      return anchored === undefined ? undefined : this.describeTarget(anchored, uri, documentUri);
    }
    let current: unknown = resource;
    let info = this.getInfo(resource);
    let rest: string[] = [];
    for (const segment of segments) {
      if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
      const childInfo = typeof current === 'object' && current !== null ? this.getInfo(current as SchemaObject) : undefined;
      if (childInfo !== undefined) {
        info = childInfo;
        rest = [];
      } else {
        rest.push(segment);
      }
    }
    if (typeof current !== 'boolean' && (typeof current !== 'object' || current === null || Array.isArray(current))) return undefined;
    const schema = current as JsonSchema;
    const location = (info?.location ?? `${documentUri}#`) + rest.map((segment) => `/${escapePointerSegment(segment)}`).join('');
    return { schema, uri, base: info?.base ?? documentUri, location };
  }

  private describeTarget(schema: JsonSchema, uri: string, documentUri: string): ResolvedReference {
    const info = this.getInfo(schema);
    return { schema, uri, base: info?.base ?? documentUri, location: info?.location ?? `${documentUri}#` };
  }

  /**
   * Checks that every reference of `document` (and of the documents it reaches)
   * resolves, and that no cycle of references applies in place.
   * @throws SchemaProblem with reason `unresolved-ref`, `remote-ref` or `recursion`.
   */
  checkReferences(document: SchemaDocument): void {
    const checked = this.reachableDocuments(document).filter((reached) => !reached.official);
    for (const reference of checked.flatMap((reached) => reached.references)) {
      if (reference.keyword === '$recursiveRef' && reference.value !== '#') {
        throw new SchemaProblem('invalid-keyword', reference.location, `$recursiveRef must be "#", not "${reference.value}"`);
      }
      if (this.resolve(reference.value, reference.base) !== undefined) continue;
      const uri = resolveUri(reference.value, reference.base);
      const documentUri = uri === undefined ? undefined : splitFragment(uri)[0];
      const remote =
        documentUri !== undefined &&
        documentUri !== reference.document.uri &&
        !documentUri.startsWith(ANONYMOUS_BASE_URI.replace(/[^/]*$/, '')) &&
        this.getResource(documentUri) === undefined;
      throw new SchemaProblem(
        remote ? 'remote-ref' : 'unresolved-ref',
        reference.location,
        remote
          ? `${reference.keyword} "${reference.value}" points to ${documentUri}, a document that is not registered`
          : `${reference.keyword} "${reference.value}" does not resolve to any schema`,
      );
    }
    this.checkInPlaceCycles(document);
  }

  /** The documents `document` reaches through its references, itself included. */
  reachableDocuments(document: SchemaDocument): SchemaDocument[] {
    const seen = new Set<SchemaDocument>([document]);
    const queue = [document];
    while (queue.length > 0) {
      const current = queue.shift() as SchemaDocument;
      for (const reference of current.references) {
        const target = this.resolve(reference.value, reference.base);
        const info = target === undefined ? undefined : this.getInfo(target.schema);
        const reached = info?.document ?? (target === undefined ? undefined : this.getDocument(splitFragment(target.uri)[0]));
        if (reached !== undefined && !seen.has(reached)) {
          seen.add(reached);
          queue.push(reached);
        }
      }
    }
    return [...seen];
  }

  private checkInPlaceCycles(document: SchemaDocument): void {
    const done = new Set<SchemaObject>();
    const onPath = new Set<SchemaObject>();
    const visit = (node: JsonSchema): void => {
      if (typeof node !== 'object' || node === null || done.has(node)) return;
      onPath.add(node);
      const info = this.getInfo(node);
      const legacyRef = info?.document.legacy === true && typeof node.$ref === 'string';
      for (const keyword of REFERENCE_KEYWORDS_OF[info?.document.dialect ?? document.dialect]) {
        const value = node[keyword];
        if (typeof value !== 'string') continue;
        const target = this.resolve(value, info?.base ?? document.uri)?.schema;
        if (typeof target !== 'object' || target === null) continue;
        if (onPath.has(target)) {
          throw new SchemaProblem(
            'recursion',
            `${info?.location ?? '#'}/${keyword}`,
            `${keyword} "${value}" leads back to itself without descending into the value, which would recurse forever`,
          );
        }
        visit(target);
      }
      if (!legacyRef) {
        for (const child of subschemasOf(node)) {
          if (IN_PLACE_KEYWORDS.has(child.keyword)) visit(child.schema);
        }
      }
      onPath.delete(node);
      done.add(node);
    };
    for (const [node, info] of this.nodes) {
      if (info.document === document) visit(node);
    }
  }

  private walk(schema: JsonSchema, segments: string[], inheritedBase: string, document: SchemaDocument, documentRoot: boolean): void {
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return;
    if (this.nodes.has(schema)) return;
    const location = `${document.displayPrefix}#${segments.map((segment) => `/${escapePointerSegment(segment)}`).join('')}`;
    // Draft-07 says `$ref` hides its siblings, but ajv (which validates draft-07)
    // still honours a sibling `$id` and definitions; index them as ajv sees them.
    let base = inheritedBase;
    let resourceRoot = documentRoot;
    const id = schema.$id;
    if (typeof id === 'string') {
      if (id.startsWith('#')) {
        this.addAnchor(`${base}#${id.slice(1)}`, schema, `${location}/$id`);
      } else {
        const resolved = resolveUri(id, base);
        if (resolved !== undefined) {
          const [resourceUri, fragment] = splitFragment(resolved);
          base = resourceUri;
          resourceRoot = true;
          const existing = this.resources.get(resourceUri);
          if (existing !== undefined && existing !== schema && !documentRoot) {
            throw new SchemaProblem('invalid-keyword', `${location}/$id`, `$id "${id}" is used by two different schemas`);
          }
          this.resources.set(resourceUri, schema);
          if (document.legacy && fragment !== undefined && fragment !== '') this.addAnchor(resolved, schema, `${location}/$id`);
        }
      }
    }
    this.nodes.set(schema, { base, location, resourceRoot, document });
    if (typeof schema.$anchor === 'string') this.addAnchor(`${base}#${schema.$anchor}`, schema, `${location}/$anchor`);
    if (typeof schema.$dynamicAnchor === 'string') {
      this.addAnchor(`${base}#${schema.$dynamicAnchor}`, schema, `${location}/$dynamicAnchor`);
      this.dynamicAnchors.set(`${base}#${schema.$dynamicAnchor}`, schema);
    }
    for (const keyword of REFERENCE_KEYWORDS_OF[document.dialect]) {
      const value = schema[keyword];
      if (value === undefined) continue;
      if (typeof value !== 'string') {
        throw new SchemaProblem('invalid-keyword', `${location}/${keyword}`, `${keyword} must be a string (a URI reference)`);
      }
      document.references.push({ keyword, value, base, location: `${location}/${keyword}`, node: schema, document });
      if (keyword !== '$ref') document.ajvLimitation ??= keyword;
    }
    document.ajvLimitation ??= findAjvLimitation(schema);
    document.patterns.push(...checkPatterns(schema, location));
    for (const child of subschemasOf(schema)) {
      this.walk(child.schema, [...segments, ...child.segments], base, document, false);
    }
  }

  private addAnchor(key: string, schema: SchemaObject, location: string): void {
    const existing = this.anchors.get(key);
    if (existing !== undefined && existing !== schema) {
      throw new SchemaProblem('invalid-keyword', location, `anchor "${splitFragment(key)[1] ?? ''}" is defined twice`);
    }
    this.anchors.set(key, schema);
  }
}

/** Every direct subschema of `schema`, with the keyword that holds it. */
export function subschemasOf(schema: SchemaObject): Subschema[] {
  const found: Subschema[] = [];
  const add = (value: unknown, keyword: string, segments: string[]): void => {
    if (typeof value === 'boolean' || (typeof value === 'object' && value !== null && !Array.isArray(value))) {
      found.push({ schema: value as JsonSchema, keyword, segments });
    }
  };
  for (const keyword of SINGLE_SCHEMA_KEYWORDS) {
    if (Object.hasOwn(schema, keyword)) add(schema[keyword], keyword, [keyword]);
  }
  for (const keyword of SCHEMA_LIST_KEYWORDS) {
    const list = Object.hasOwn(schema, keyword) ? schema[keyword] : undefined;
    if (Array.isArray(list)) list.forEach((item, index) => add(item, keyword, [keyword, String(index)]));
  }
  for (const keyword of SCHEMA_MAP_KEYWORDS) {
    const map = Object.hasOwn(schema, keyword) ? schema[keyword] : undefined;
    if (typeof map !== 'object' || map === null || Array.isArray(map)) continue;
    for (const name of Object.keys(map)) add((map as Record<string, unknown>)[name], keyword, [keyword, name]);
  }
  return found;
}

const PROPERTY_NAME_KEYWORDS = ['properties', 'dependentSchemas', 'dependentRequired'] as const;

function findAjvLimitation(schema: SchemaObject): string | undefined {
  if (schema.unevaluatedItems !== undefined) return 'unevaluatedItems';
  if (schema.unevaluatedProperties !== undefined) return 'unevaluatedProperties';
  if (Array.isArray(schema.enum) && schema.enum.length === 0) return 'empty enum';
  const required = schema.required;
  if (Array.isArray(required) && required.includes('__proto__')) return 'required __proto__';
  for (const keyword of PROPERTY_NAME_KEYWORDS) {
    const map = schema[keyword];
    if (typeof map === 'object' && map !== null && Object.hasOwn(map, '__proto__')) return `${keyword} __proto__`;
  }
  return undefined;
}

/** The node's patterns, each checked to be a valid ECMAScript regular expression. */
function checkPatterns(schema: SchemaObject, location: string): SchemaPattern[] {
  const found: SchemaPattern[] = [];
  if (typeof schema.pattern === 'string') found.push({ source: schema.pattern, location: `${location}/pattern` });
  const patternProperties = schema.patternProperties;
  if (typeof patternProperties === 'object' && patternProperties !== null && !Array.isArray(patternProperties)) {
    for (const pattern of Object.keys(patternProperties)) {
      found.push({ source: pattern, location: `${location}/patternProperties/${escapePointerSegment(pattern)}` });
    }
  }
  for (const { source, location: where } of found) compilePattern(source, where);
  return found;
}

/**
 * Compiles a schema's regular expression with the `u` flag (as ajv does).
 * @throws SchemaProblem with reason `invalid-keyword` for an invalid expression.
 */
export function compilePattern(pattern: string, location: string): RegExp {
  try {
    return new RegExp(pattern, 'u');
  } catch (error) {
    throw new SchemaProblem('invalid-keyword', location, `"${pattern}" is not a valid regular expression`, error);
  }
}

function decodeFragment(fragment: string): string {
  try {
    return decodeURIComponent(fragment);
  } catch {
    return fragment;
  }
}
