import { CaError } from '@ca/domain';
import type { SchemaDirection } from './schema-direction';
import { describeSchemaProperty, describeSubject } from './schema-direction';

/**
 * Why a schema could not be compiled:
 * - `not-a-schema`: neither an object nor a boolean (or not JSON: a cycle);
 * - `unknown-dialect`: `$schema` names no supported dialect;
 * - `invalid-keyword`: a keyword has a value its metaschema refuses
 *   (`{ type: 'strnig' }`, `{ minLength: -1 }`, a bad `pattern`);
 * - `unresolved-ref`: a `$ref` points nowhere;
 * - `remote-ref`: a `$ref` points to a document that is not registered
 *   (nothing is ever fetched over the network);
 * - `recursion`: a `$ref` cycle that never descends into the value, or a
 *   schema nested or recursive beyond what the engine can compile;
 * - `unsupported-pattern`: an untrusted schema's `pattern` or
 *   `patternProperties` uses what the linear-time engine cannot run
 *   (lookahead, lookbehind, backreferences, a repetition above 1000);
 * - `other`: anything else the engine refused.
 */
export type SchemaCompileErrorReason =
  'not-a-schema' | 'unknown-dialect' | 'invalid-keyword' | 'unresolved-ref' | 'remote-ref' | 'recursion' | 'unsupported-pattern' | 'other';

/** Options of {@link SchemaCompileError}. */
export interface SchemaCompileErrorOptions {
  /** Why the schema was refused. */
  readonly reason: SchemaCompileErrorReason;
  /** Where in the schema: a JSON Pointer fragment (`'#/properties/a'`) or the `$ref` that failed. */
  readonly location: string;
  /** What is wrong, without the tool or the advice (both are added). */
  readonly detail: string;
  /** The tool the schema belongs to. */
  readonly toolName?: string;
  /** Whether the schema is the tool's input or output schema. */
  readonly direction?: SchemaDirection;
  /** Replaces the generated message. */
  readonly message?: string;
  /** The underlying error (the engine's), per ES2022. */
  readonly cause?: unknown;
}

const ADVICE: Readonly<Record<SchemaCompileErrorReason, string>> = {
  'not-a-schema': 'Provide a JSON Schema object (or true/false).',
  'unknown-dialect':
    'Declare $schema as draft-07, 2019-09 or 2020-12 (or register the metaschema with addSchema), or remove $schema to use the default dialect.',
  'invalid-keyword': 'Correct the keyword value so the schema satisfies its metaschema.',
  'unresolved-ref': 'Point the $ref at an existing definition ($defs, $anchor or $id) or register the target with addSchema.',
  'remote-ref': 'Schemas are never fetched over the network: register the referenced document with addSchema (or the remotes option) or inline it.',
  recursion: 'Remove the $ref cycle (every cycle must go through properties or items) or flatten the schema.',
  'unsupported-pattern':
    "Rewrite the pattern without lookahead, lookbehind or backreferences (schemas from sources the service does not control run on a linear-time engine), or, for the service's own schemas, compile them as trusted.",
  other: 'Simplify or correct the schema.',
};

/**
 * A schema cannot be compiled. Raised when a tool is registered or
 * discovered, never at call time, so a bad schema never crashes a call.
 *
 * Code: `SCHEMA_INVALID`. Recognise it with `SchemaCompileError.isInstance`, which also works
 * across two installed copies of this package.
 */
export class SchemaCompileError extends CaError {
  declare readonly code: 'SCHEMA_INVALID';
  /** Why the schema was refused. */
  readonly reason: SchemaCompileErrorReason;
  /** Where in the schema: a JSON Pointer fragment (`'#/properties/a'`) or the `$ref` that failed. */
  readonly location: string;
  /** Whether the schema is the tool's input or output schema, when known. */
  declare readonly direction?: SchemaDirection;

  /**
   * @param options - reason, location and detail, with the tool and direction when known.
   */
  constructor(options: SchemaCompileErrorOptions) {
    super('SCHEMA_INVALID', options.message ?? describeFailure(options), options);
    this.reason = options.reason;
    this.location = options.location;
    if (options.direction !== undefined) this.direction = options.direction;
  }
}

function describeFailure(options: SchemaCompileErrorOptions): string {
  const subject = describeSubject(options.toolName, options.direction);
  const what = describeSchemaProperty(options.direction);
  const sentence = subject === '' ? what.charAt(0).toUpperCase() + what.slice(1) : what;
  return `${subject}${sentence} is invalid at ${options.location}: ${options.detail}. ${ADVICE[options.reason]}`;
}
