import { describeValue, messageOf, type JsonSchema } from '@ca/domain';
import Ajv from 'ajv';
import type { ErrorObject, Format, Options as AjvOptions, ValidateFunction } from 'ajv';
import type { DataValidateFunction } from 'ajv/dist/types';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { escapePointerSegment, resolveUri, splitFragment } from './json-pointer';
import type { LinearPattern } from './linear-pattern';
import { compileLinearPattern } from './linear-pattern';
import { OFFICIAL_METASCHEMAS } from './official-metaschemas';
import { PatternCompileError } from './pattern-compile-error';
import { SchemaCompileError } from './schema-compile-error';
import type { SchemaDialect } from './schema-dialect';
import { dialectOfMetaschemaUri, isSchemaDialect } from './schema-dialect';
import type { SchemaDirection } from './schema-direction';
import type { SchemaDocument } from './schema-index';
import { ANONYMOUS_BASE_URI, SchemaIndex } from './schema-index';
import type { FormatCheck, PatternCompiler } from './schema-interpreter';
import { SchemaInterpreter, deepEqual, findDuplicate, isMultipleOf } from './schema-interpreter';
import type { SchemaIssue, SchemaValidationResult } from './schema-issue';
import { VALID_RESULT, createDepthIssue, createIssue, invalidResult, isStackOverflow } from './schema-issue';
import { SchemaProblem } from './schema-problem';
import type { SchemaTrust } from './schema-trust';
import { isSchemaTrust } from './schema-trust';

/** A schema compiled once, ready to validate any number of values. */
export interface CompiledSchema {
  /** The dialect the schema is validated under. */
  readonly dialect: SchemaDialect;
  /** The schema as it was given (the first of structurally equal schemas, when cached). */
  readonly schema: JsonSchema;
  /**
   * Validates `value`. Never compiles and never throws, for any value —
   * circular, huge or too deeply nested ones included (those yield an issue
   * with keyword `maxDepth`); only a proxy whose traps throw is out of scope.
   * A valid value yields one shared frozen result, so success allocates nothing.
   */
  validate(value: unknown): SchemaValidationResult;
}

/** What a compilation is for, so that its errors can name it. */
export interface SchemaCompileOptions {
  /** The tool the schema belongs to. */
  readonly toolName?: string;
  /** Whether the schema is the tool's input or output schema. */
  readonly direction?: SchemaDirection;
  /**
   * Where the schema comes from. Default `'untrusted'`: its `pattern`s,
   * `patternProperties` and `format: 'regex'` run on a linear-time engine, and
   * a pattern that engine cannot run (lookaround, backreferences) is a
   * `SchemaCompileError` with reason `unsupported-pattern`. `'trusted'` (the
   * service's own schemas) runs them on JavaScript's `RegExp`.
   */
  readonly trust?: SchemaTrust;
}

/** Compiles, caches and applies JSON Schemas; see {@link createSchemaValidator}. */
export interface SchemaValidator {
  /**
   * Compiles `schema`, or returns the cached compilation: the cache is keyed by
   * object identity first and then by a stable serialisation, so structurally
   * equal schemas compile once. Failures are not cached.
   * Untrusted and trusted compilations of one schema are cached apart.
   * @throws SchemaCompileError when the schema cannot be compiled: not a
   *   schema, unknown `$schema`, invalid keyword value, unresolvable or remote
   *   `$ref`, a reference cycle, or (untrusted) a pattern the linear-time
   *   engine cannot run.
   * @throws TypeError when `options.trust` is neither `'trusted'` nor `'untrusted'`.
   */
  compile(schema: JsonSchema, options?: SchemaCompileOptions): CompiledSchema;
  /**
   * `compile(schema, options).validate(value)`.
   * @throws SchemaCompileError when the schema cannot be compiled (never for the value).
   */
  validate(schema: JsonSchema, value: unknown, options?: SchemaCompileOptions): SchemaValidationResult;
  /**
   * Registers a schema that `$ref`s (and `$schema`) may resolve to by its URI:
   * `id`, or else its `$id`. Nothing is ever fetched over the network.
   * Registering an equal schema again under the same URI does nothing.
   * @throws SchemaCompileError when the schema has no URI, another schema is
   *   registered under it, or it is not a valid schema.
   */
  addSchema(schema: JsonSchema, id?: string): void;
}

/** Options of {@link createSchemaValidator}. */
export interface SchemaValidatorOptions {
  /** Dialect of schemas without `$schema`. Default: `'draft-2020-12'`. */
  readonly defaultDialect?: SchemaDialect;
  /**
   * Assert `format` (with ajv-formats: `email`, `uri`, `date-time`, …) in
   * every dialect. Default: `false` — `format` is an annotation, as draft
   * 2020-12 and 2019-09 specify, so that a schema's `format` never refuses
   * values the rest of the schema allows. Unknown formats are ignored.
   */
  readonly formats?: boolean;
  /** Schemas to register before any compilation, by URI (see {@link SchemaValidator.addSchema}). */
  readonly remotes?: Readonly<Record<string, JsonSchema>>;
}

type AjvEngine = Ajv;

/** ajv's `code.regExp`: a pattern engine, and how standalone code would name it (never generated here). */
type RegExpEngine = NonNullable<NonNullable<AjvOptions['code']>['regExp']>;

const AJV_CLASSES: Readonly<Record<SchemaDialect, new (options: AjvOptions) => AjvEngine>> = {
  'draft-07': Ajv,
  'draft-2019-09': Ajv2019,
  'draft-2020-12': Ajv2020,
};

const VALIDATION_VOCABULARY = 'https://json-schema.org/draft/2020-12/vocab/validation';
const MAX_METASCHEMA_CHAIN = 8;
const META_ERRORS_IN_MESSAGE = 3;

let officialIndex: SchemaIndex | undefined;

/** The official metaschemas, indexed once per process. */
function getOfficialIndex(): SchemaIndex {
  if (officialIndex === undefined) {
    const index = new SchemaIndex();
    for (const { dialect, schema } of OFFICIAL_METASCHEMAS) {
      index.addDocument(schema, schema.$id, { dialect, display: 'uri', official: true });
    }
    officialIndex = index;
  }
  return officialIndex;
}

/**
 * Creates a schema validator: ajv (`Ajv2020`, `Ajv2019` or `Ajv` by the
 * schema's dialect) with these settings for untrusted schemas:
 * - every issue is reported (`allErrors`);
 * - unknown keywords (`title`, `examples`, vendor `x-…` keys) are tolerated,
 *   but keyword values are checked against the dialect's metaschema, so
 *   `{ type: 'strnig' }` or `{ minLength: -1 }` is refused;
 * - properties are looked up as own properties only (`__proto__`,
 *   `constructor` are ordinary names; nothing is polluted);
 * - nothing is fetched: `$ref`s resolve only to the schema itself, to
 *   registered schemas and to the official metaschemas;
 * - schemas that ajv mishandles (`$dynamicRef`, `unevaluatedItems` /
 *   `unevaluatedProperties`, an empty `enum`, a custom metaschema) are
 *   evaluated by a built-in 2020-12 interpreter instead.
 * @throws TypeError when `defaultDialect` is not a supported dialect.
 * @throws SchemaCompileError when a schema of `remotes` is invalid.
 */
export function createSchemaValidator(options: SchemaValidatorOptions = {}): SchemaValidator {
  return new DefaultSchemaValidator(options);
}

/**
 * Which engine validates 2020-12 schemas: `auto` (ajv, or the interpreter for
 * what ajv mishandles) or always the `interpreter` (for its own tests).
 */
export type EngineChoice = 'auto' | 'interpreter';

/** Internal: the implementation behind {@link createSchemaValidator}. Not exported from the package. */
export class DefaultSchemaValidator implements SchemaValidator {
  private readonly defaultDialect: SchemaDialect;
  private readonly assertFormats: boolean;
  private readonly registry: SchemaIndex;
  private readonly remotes = new Map<string, JsonSchema>();
  private readonly engines = new Map<string, AjvEngine>();
  private readonly byIdentity: Readonly<Record<SchemaTrust, WeakMap<object, CompiledSchema>>> = {
    trusted: new WeakMap(),
    untrusted: new WeakMap(),
  };
  private readonly bySerialisation = new Map<string, CompiledSchema>();
  private readonly formatChecks = new Map<SchemaTrust, FormatCheck>();
  /** Untrusted patterns compiled for the linear-time engine, shared by ajv, the interpreter and the `regex` format. */
  private readonly linearPatterns = new Map<string, LinearPattern | PatternCompileError>();
  private readonly linearRegExp: RegExpEngine;

  constructor(
    options: SchemaValidatorOptions,
    private readonly engineChoice: EngineChoice = 'auto',
  ) {
    const defaultDialect = options.defaultDialect ?? 'draft-2020-12';
    if (!isSchemaDialect(defaultDialect)) {
      throw new TypeError(`Unknown defaultDialect '${String(defaultDialect)}': use 'draft-07', 'draft-2019-09' or 'draft-2020-12'.`);
    }
    this.defaultDialect = defaultDialect;
    this.assertFormats = options.formats === true;
    this.registry = new SchemaIndex(getOfficialIndex());
    this.linearRegExp = Object.assign((source: string) => this.linearPattern(source), { code: 'compileLinearPattern' });
    for (const [uri, schema] of Object.entries(options.remotes ?? {})) this.addSchema(schema, uri);
  }

  compile(schema: JsonSchema, options: SchemaCompileOptions = {}): CompiledSchema {
    const trust = options.trust ?? 'untrusted';
    if (!isSchemaTrust(trust)) throw new TypeError(`Unknown schema trust '${String(trust)}': use 'trusted' or 'untrusted'.`);
    const byIdentity = this.byIdentity[trust];
    if (typeof schema === 'object' && schema !== null) {
      const cached = byIdentity.get(schema);
      if (cached !== undefined) return cached;
    }
    try {
      if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
        throw new SchemaProblem('not-a-schema', '#', `expected a JSON Schema object or a boolean, got ${describeValue(schema)}`);
      }
      const key = `${trust}:${serialise(schema)}`;
      let compiled = this.bySerialisation.get(key);
      if (compiled === undefined) {
        compiled = this.compileUncached(schema, trust);
        this.bySerialisation.set(key, compiled);
      }
      if (typeof schema === 'object') byIdentity.set(schema, compiled);
      return compiled;
    } catch (error) {
      throw toCompileError(error, options);
    }
  }

  validate(schema: JsonSchema, value: unknown, options?: SchemaCompileOptions): SchemaValidationResult {
    return this.compile(schema, options).validate(value);
  }

  addSchema(schema: JsonSchema, id?: string): void {
    try {
      if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
        throw new SchemaProblem('not-a-schema', '#', `expected a JSON Schema object or a boolean, got ${describeValue(schema)}`);
      }
      const ownId = typeof schema === 'object' && typeof schema.$id === 'string' ? schema.$id : undefined;
      const given = id ?? ownId;
      const uri = given === undefined ? undefined : resolveUri(given, ANONYMOUS_BASE_URI);
      if (given === undefined || uri === undefined || given.trim() === '') {
        throw new SchemaProblem('other', '#', 'a schema added with addSchema needs an absolute URI: pass an id or give the schema an $id');
      }
      const key = splitFragment(uri)[0];
      const existing = this.remotes.get(key);
      if (existing !== undefined) {
        if (deepEqual(existing, schema)) return;
        throw new SchemaProblem('other', key, `another schema is already registered as ${key}`);
      }
      serialise(schema);
      const { dialect } = this.detectDialect(schema);
      this.checkAgainstMetaschema(schema, dialect, `${key}#`);
      this.registry.addDocument(schema, key, { dialect, display: 'uri' });
      this.remotes.set(key, schema);
      for (const engine of this.engines.values()) addToEngine(engine, schema, key);
    } catch (error) {
      throw toCompileError(error, {});
    }
  }

  private compileUncached(schema: JsonSchema, trust: SchemaTrust): CompiledSchema {
    const { dialect, metaschema } = this.detectDialect(schema);
    this.checkAgainstMetaschema(schema, dialect, '#');
    const index = new SchemaIndex(this.registry);
    const document = index.addDocument(schema, rootUri(schema), { dialect });
    index.checkReferences(document);
    if (trust === 'untrusted') this.checkLinearPatterns(index, document);
    if (dialect === 'draft-2020-12' && (this.engineChoice === 'interpreter' || this.needsInterpreter(index, document, metaschema))) {
      return this.interpret(schema, dialect, index, metaschema, trust);
    }
    let check: ValidateFunction;
    try {
      const engine = declaresIdentifiers(schema) ? this.createEngine(dialect, trust) : this.getEngine(dialect, trust);
      check = engine.compile(schema);
    } catch (error) {
      if (dialect === 'draft-2020-12' && (isStackOverflow(error) || /only supports hash fragment/.test(messageOf(error)))) {
        return this.interpret(schema, dialect, index, metaschema, trust);
      }
      throw engineProblem(error);
    }
    return new AjvCompiledSchema(dialect, schema, check);
  }

  /**
   * Every pattern the schema can reach (its own and those of registered
   * documents it refers to) must run on the linear-time engine; the first that
   * cannot is reported where it stands.
   */
  private checkLinearPatterns(index: SchemaIndex, document: SchemaDocument): void {
    for (const reached of index.reachableDocuments(document)) {
      if (reached.official) continue;
      for (const { source, location } of reached.patterns) {
        const compiled = this.linearPatterns.get(source) ?? this.compileLinear(source);
        if (PatternCompileError.isInstance(compiled)) throw patternProblem(compiled, location);
      }
    }
  }

  /** The pattern compiled for the linear-time engine (cached, failures too, since patterns repeat across schemas). */
  private linearPattern(source: string): LinearPattern {
    const compiled = this.linearPatterns.get(source) ?? this.compileLinear(source);
    if (PatternCompileError.isInstance(compiled)) throw compiled;
    return compiled;
  }

  private compileLinear(source: string): LinearPattern | PatternCompileError {
    let compiled: LinearPattern | PatternCompileError;
    try {
      compiled = compileLinearPattern(source);
    } catch (error) {
      if (!PatternCompileError.isInstance(error)) throw error;
      compiled = error;
    }
    this.linearPatterns.set(source, compiled);
    return compiled;
  }

  private needsInterpreter(index: SchemaIndex, document: SchemaDocument, metaschema: JsonSchema | undefined): boolean {
    if (metaschema !== undefined) return true;
    return index.reachableDocuments(document).some((reached) => !reached.official && reached.ajvLimitation !== undefined);
  }

  private interpret(schema: JsonSchema, dialect: SchemaDialect, index: SchemaIndex, metaschema: JsonSchema | undefined, trust: SchemaTrust): CompiledSchema {
    const vocabulary = typeof metaschema === 'object' ? metaschema.$vocabulary : undefined;
    const validationVocabulary = typeof vocabulary !== 'object' || vocabulary === null || Object.hasOwn(vocabulary, VALIDATION_VOCABULARY);
    const compilePattern: PatternCompiler | undefined = trust === 'untrusted' ? (source) => this.linearPattern(source) : undefined;
    const interpreter = new SchemaInterpreter({
      index,
      formatCheck: this.assertFormats ? this.getFormatCheck(trust) : undefined,
      validationVocabulary,
      compilePattern,
    });
    return new InterpretedCompiledSchema(dialect, schema, interpreter);
  }

  /**
   * The dialect of `schema`, and the custom metaschema it declares (a
   * registered schema whose own `$schema` chain ends at an official one).
   */
  private detectDialect(schema: JsonSchema): { dialect: SchemaDialect; metaschema?: JsonSchema } {
    if (typeof schema !== 'object' || !Object.hasOwn(schema, '$schema')) return { dialect: this.defaultDialect };
    const declared = schema.$schema;
    if (typeof declared !== 'string') {
      throw new SchemaProblem('unknown-dialect', '#/$schema', `$schema must be a URI string, got ${describeValue(declared)}`);
    }
    const official = dialectOfMetaschemaUri(declared);
    if (official !== undefined) return { dialect: official };
    let current: string = declared;
    let metaschema: JsonSchema | undefined;
    for (let step = 0; step < MAX_METASCHEMA_CHAIN; step++) {
      const uri = resolveUri(current, ANONYMOUS_BASE_URI);
      const registered = uri === undefined ? undefined : this.remotes.get(splitFragment(uri)[0]);
      if (registered === undefined || typeof registered !== 'object') break;
      metaschema ??= registered;
      const next = registered.$schema;
      if (typeof next !== 'string') return { dialect: this.defaultDialect, metaschema };
      const dialect = dialectOfMetaschemaUri(next);
      if (dialect !== undefined) return { dialect, metaschema };
      current = next;
    }
    throw new SchemaProblem(
      'unknown-dialect',
      '#/$schema',
      `$schema "${declared}" is not a supported dialect (draft-07, 2019-09, 2020-12) nor a registered metaschema`,
    );
  }

  private checkAgainstMetaschema(schema: JsonSchema, dialect: SchemaDialect, locationPrefix: string): void {
    // The metaschemas are the service's (official or registered): their patterns are trusted.
    const engine = this.getEngine(dialect, 'trusted');
    let valid: boolean;
    try {
      valid = engine.validateSchema(schema) as boolean;
    } catch (error) {
      if (isStackOverflow(error)) throw error;
      throw engineProblem(error);
    }
    if (valid) return;
    const errors = engine.errors ?? [];
    const described = [...new Set(errors.map(describeMetaError))];
    const shown = described.slice(0, META_ERRORS_IN_MESSAGE).join('; ');
    const more = described.length > META_ERRORS_IN_MESSAGE ? `; and ${described.length - META_ERRORS_IN_MESSAGE} more` : '';
    throw new SchemaProblem('invalid-keyword', locationPrefix + (errors[0]?.instancePath ?? ''), shown + more);
  }

  private getEngine(dialect: SchemaDialect, trust: SchemaTrust): AjvEngine {
    const key = `${trust}:${dialect}`;
    let engine = this.engines.get(key);
    if (engine === undefined) {
      engine = this.createEngine(dialect, trust);
      this.engines.set(key, engine);
    }
    return engine;
  }

  /** A new ajv instance with the settings of this validator and every registered schema. */
  private createEngine(dialect: SchemaDialect, trust: SchemaTrust): AjvEngine {
    const engine = new AJV_CLASSES[dialect]({
      allErrors: true,
      // Unknown keywords, union types and loose tuples are tolerated (untrusted
      // schemas use them legitimately); keyword values are still checked
      // against the metaschema (validateSchema stays on).
      strict: false,
      ownProperties: true,
      validateFormats: this.assertFormats,
      logger: false,
      ...(trust === 'untrusted' ? { code: { regExp: this.linearRegExp } } : {}),
    });
    if (this.assertFormats) addFormats(engine);
    // ajv-formats checks `regex` with RegExp; an untrusted schema's regex is one the linear-time engine runs.
    if (this.assertFormats && trust === 'untrusted')
      engine.addFormat('regex', (value: string) => !PatternCompileError.isInstance(this.linearPatterns.get(value) ?? this.compileLinear(value)));
    replaceUniqueItems(engine);
    replaceMultipleOf(engine);
    replaceConstAndEnum(engine);
    for (const [uri, schema] of this.remotes) addToEngine(engine, schema, uri);
    return engine;
  }

  private getFormatCheck(trust: SchemaTrust): FormatCheck {
    let formatCheck = this.formatChecks.get(trust);
    if (formatCheck === undefined) {
      const formats = this.getEngine('draft-2020-12', trust).formats;
      formatCheck = (name, value) => {
        const format: Format | undefined = Object.hasOwn(formats, name) ? formats[name] : undefined;
        return format === undefined ? undefined : checkFormat(format, value);
      };
      this.formatChecks.set(trust, formatCheck);
    }
    return formatCheck;
  }
}

class AjvCompiledSchema implements CompiledSchema {
  constructor(
    readonly dialect: SchemaDialect,
    readonly schema: JsonSchema,
    private readonly check: ValidateFunction,
  ) {}

  // An arrow property, so that a detached `validate` (`const { validate } = compiled`) still works.
  readonly validate = (value: unknown): SchemaValidationResult => {
    const check = this.check;
    try {
      if (check(value)) return VALID_RESULT;
    } catch (error) {
      return failureOf(error);
    }
    return invalidResult((check.errors ?? []).map(toIssue));
  };
}

class InterpretedCompiledSchema implements CompiledSchema {
  constructor(
    readonly dialect: SchemaDialect,
    readonly schema: JsonSchema,
    private readonly interpreter: SchemaInterpreter,
  ) {}

  readonly validate = (value: unknown): SchemaValidationResult => {
    const issues: SchemaIssue[] = [];
    try {
      if (this.interpreter.validate(this.schema, value, issues)) return VALID_RESULT;
    } catch (error) {
      return failureOf(error);
    }
    return invalidResult(issues);
  };
}

function failureOf(error: unknown): SchemaValidationResult {
  if (isStackOverflow(error)) return invalidResult([createDepthIssue()]);
  return invalidResult([createIssue('', '#', 'exception', `could not be validated: ${messageOf(error)}`)]);
}

function toIssue(error: ErrorObject): SchemaIssue {
  return createIssue(error.instancePath, error.schemaPath, error.keyword, error.message ?? `must pass "${error.keyword}"`, error.params);
}

/**
 * ajv compares array items pairwise (quadratic: 8 s for 20 000 objects), which
 * lets an untrusted value stall a call; this keyword finds duplicates in
 * linear time instead, with ajv's message and parameters.
 */
function replaceUniqueItems(engine: AjvEngine): void {
  engine.removeKeyword('uniqueItems');
  const validateUniqueItems: DataValidateFunction = (unique: unknown, data: unknown) => {
    validateUniqueItems.errors = undefined;
    if (unique !== true || !Array.isArray(data)) return true;
    const duplicate = findDuplicate(data);
    if (duplicate === undefined) return true;
    const [i, j] = duplicate;
    // ajv fills in instancePath and schemaPath when they are left undefined.
    const error: Partial<ErrorObject> = {
      keyword: 'uniqueItems',
      params: { i, j },
      message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
    };
    validateUniqueItems.errors = [error];
    return false;
  };
  engine.addKeyword({ keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', errors: true, validate: validateUniqueItems });
}

/**
 * ajv's const and enum compare with fast-deep-equal, which calls an object's
 * own `valueOf`/`toString` when they differ from Object.prototype's: a JSON
 * input such as `{"toString": {}}` makes it throw, so a valid value was
 * refused with a "could not be validated" issue. The interpreter's JSON
 * equality reads own keys only.
 */
function replaceConstAndEnum(engine: AjvEngine): void {
  engine.removeKeyword('const');
  engine.removeKeyword('enum');
  const validateConst: DataValidateFunction = (allowedValue: unknown, data: unknown) => {
    validateConst.errors = undefined;
    if (deepEqual(data, allowedValue)) return true;
    const error: Partial<ErrorObject> = { keyword: 'const', params: { allowedValue }, message: 'must be equal to constant' };
    validateConst.errors = [error];
    return false;
  };
  const validateEnum: DataValidateFunction = (allowedValues: unknown, data: unknown) => {
    validateEnum.errors = undefined;
    if (Array.isArray(allowedValues) && allowedValues.some((allowed) => deepEqual(data, allowed))) return true;
    const error: Partial<ErrorObject> = { keyword: 'enum', params: { allowedValues }, message: 'must be equal to one of the allowed values' };
    validateEnum.errors = [error];
    return false;
  };
  engine.addKeyword({ keyword: 'const', errors: true, validate: validateConst });
  engine.addKeyword({ keyword: 'enum', schemaType: 'array', errors: true, validate: validateEnum });
}

/** ajv's multipleOf is wrong for large numbers; the interpreter's check is not. */
function replaceMultipleOf(engine: AjvEngine): void {
  engine.removeKeyword('multipleOf');
  const validateMultipleOf: DataValidateFunction = (divisor: unknown, data: unknown) => {
    validateMultipleOf.errors = undefined;
    if (typeof divisor !== 'number' || typeof data !== 'number' || isMultipleOf(data, divisor)) return true;
    const error: Partial<ErrorObject> = { keyword: 'multipleOf', params: { multipleOf: divisor }, message: `must be multiple of ${divisor}` };
    validateMultipleOf.errors = [error];
    return false;
  };
  engine.addKeyword({ keyword: 'multipleOf', type: 'number', schemaType: 'number', errors: true, validate: validateMultipleOf });
}

function addToEngine(engine: AjvEngine, schema: JsonSchema, uri: string): void {
  // Metaschema validation already happened in addSchema, under the schema's own dialect.
  engine.addSchema(schema as object, uri, undefined, false);
}

function checkFormat(format: Format, value: unknown): boolean | undefined {
  if (typeof format === 'string' || typeof format === 'boolean') return undefined;
  if (format instanceof RegExp) return typeof value !== 'string' || format.test(value);
  if (typeof format === 'function') return typeof value !== 'string' || format(value) === true;
  if ('async' in format && format.async === true) return undefined;
  const type = format.type ?? 'string';
  if (typeof value !== type) return true;
  const check = format.validate;
  if (check instanceof RegExp) return check.test(String(value));
  if (typeof check === 'function') return (check as (data: unknown) => unknown)(value) === true;
  return undefined;
}

function describeMetaError(error: ErrorObject): string {
  const where = error.instancePath === '' ? 'the schema' : `keyword value at #${error.instancePath}`;
  const allowed = Array.isArray(error.params.allowedValues) ? `: ${error.params.allowedValues.join(', ')}` : '';
  return `${where} ${error.message ?? 'is invalid'}${allowed}`;
}

function patternProblem(error: PatternCompileError, location: string): SchemaProblem {
  const shown = error.pattern.length > 200 ? `${error.pattern.slice(0, 200)}…` : error.pattern;
  if (error.problem === 'syntax') {
    return new SchemaProblem('invalid-keyword', location, `"${shown}" is not a valid regular expression (${error.detail})`, error);
  }
  return new SchemaProblem(
    'unsupported-pattern',
    location,
    `the pattern "${shown}" uses ${error.detail}, which the linear-time engine for untrusted schemas cannot run`,
    error,
  );
}

/** Turns an ajv compile failure into a problem with the closest reason. */
function engineProblem(error: unknown): SchemaProblem {
  if (PatternCompileError.isInstance(error)) return patternProblem(error, '#');
  if (isStackOverflow(error)) {
    return new SchemaProblem('recursion', '#', 'the schema is nested or recursive beyond what the engine can compile', error);
  }
  const message = messageOf(error);
  const missing = (error as { missingRef?: unknown }).missingRef;
  if (typeof missing === 'string') {
    const remote = /^https?:/i.test(missing) && !missing.startsWith(ANONYMOUS_BASE_URI.replace(/[^/]*$/, ''));
    return new SchemaProblem(remote ? 'remote-ref' : 'unresolved-ref', missing, message, error);
  }
  const keyword = /^(?:keyword\s+)?"?([$\w-]+)"?\s/.exec(message)?.[1];
  if (error instanceof SyntaxError || /must|invalid|should/i.test(message)) {
    return new SchemaProblem('invalid-keyword', keyword === undefined ? '#' : `#/${escapePointerSegment(keyword)}`, message, error);
  }
  return new SchemaProblem('other', '#', message, error);
}

function toCompileError(error: unknown, options: SchemaCompileOptions): SchemaCompileError {
  if (SchemaCompileError.isInstance(error)) return error;
  const { toolName, direction } = options;
  if (error instanceof SchemaProblem) {
    return new SchemaCompileError({
      reason: error.reason,
      location: error.location,
      detail: error.detail,
      toolName,
      direction,
      cause: error.problemCause,
    });
  }
  if (isStackOverflow(error)) {
    return new SchemaCompileError({
      reason: 'recursion',
      location: '#',
      detail: 'the schema is nested or recursive beyond what can be compiled (stack overflow)',
      toolName,
      direction,
      cause: error,
    });
  }
  const problem = engineProblem(error);
  return new SchemaCompileError({
    reason: problem.reason,
    location: problem.location,
    detail: problem.detail,
    toolName,
    direction,
    cause: error,
  });
}

function rootUri(schema: JsonSchema): string {
  if (typeof schema === 'object' && typeof schema.$id === 'string') {
    const resolved = resolveUri(schema.$id, ANONYMOUS_BASE_URI);
    if (resolved !== undefined) return splitFragment(resolved)[0];
  }
  return ANONYMOUS_BASE_URI;
}

/** True when the schema declares `$id`, `$anchor` or `$dynamicAnchor` anywhere (ajv would register them instance-wide). */
function declaresIdentifiers(schema: JsonSchema): boolean {
  if (typeof schema !== 'object') return false;
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current !== 'object' || current === null) continue;
    if (Array.isArray(current)) {
      pending.push(...current);
      continue;
    }
    const record = current as Record<string, unknown>;
    if (typeof record.$id === 'string' || typeof record.$anchor === 'string' || typeof record.$dynamicAnchor === 'string') return true;
    for (const key of Object.keys(record)) pending.push(record[key]);
  }
  return false;
}

/**
 * Stable serialisation (sorted keys) of a schema, the second-level cache key.
 * @throws SchemaProblem `not-a-schema` when the schema contains a cycle.
 */
function serialise(schema: JsonSchema): string {
  const ancestors = new Set<object>();
  const visit = (value: unknown, path: string): string => {
    if (typeof value !== 'object' || value === null) {
      return typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean' || value === null
        ? JSON.stringify(value)
        : `<${typeof value}>`;
    }
    if (ancestors.has(value)) throw new SchemaProblem('not-a-schema', path, 'the schema contains a cycle, so it is not JSON');
    ancestors.add(value);
    let text: string;
    if (Array.isArray(value)) {
      text = `[${value.map((item, index) => visit(item, `${path}/${index}`)).join(',')}]`;
    } else {
      const record = value as Record<string, unknown>;
      text = `{${Object.keys(record)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${visit(record[key], `${path}/${escapePointerSegment(key)}`)}`)
        .join(',')}}`;
    }
    ancestors.delete(value);
    return text;
  };
  return visit(schema, '#');
}
