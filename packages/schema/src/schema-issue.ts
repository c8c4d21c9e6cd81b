/**
 * One reason why a value does not satisfy a schema. Every issue of a
 * validation is reported (not only the first).
 */
export interface SchemaIssue {
  /** JSON Pointer (RFC 6901) into the validated value; `''` for the value itself. */
  readonly instancePath: string;
  /** JSON Pointer into the schema, as a URI fragment: `'#/properties/a/type'`. */
  readonly schemaPath: string;
  /** The keyword that failed: `'type'`, `'required'`, `'additionalProperties'`, … */
  readonly keyword: string;
  /** Human-readable, starting with where the problem is: `'/a must be string'`, `'value must be object'`. */
  readonly message: string;
  /** Keyword-specific details, such as `{ missingProperty: 'name' }` for `required`. */
  readonly params?: Readonly<Record<string, unknown>>;
}

/**
 * The outcome of a validation. The valid outcome is one shared frozen object,
 * so a successful validation allocates nothing.
 */
export type SchemaValidationResult = { readonly valid: true } | { readonly valid: false; readonly issues: readonly SchemaIssue[] };

/** The one valid result, shared by every validation that succeeds. */
export const VALID_RESULT: SchemaValidationResult = Object.freeze({ valid: true as const });

/** Keyword of the issue reported when a value is too deeply nested (or circular) to be validated. */
export const DEPTH_KEYWORD = 'maxDepth';

/** Builds a frozen invalid result. */
export function invalidResult(issues: readonly SchemaIssue[]): SchemaValidationResult {
  return Object.freeze({ valid: false as const, issues: Object.freeze(issues.slice()) });
}

/** Builds an issue whose message starts with where the problem is (`/a must be string`). */
export function createIssue(
  instancePath: string,
  schemaPath: string,
  keyword: string,
  problem: string,
  params?: Readonly<Record<string, unknown>>,
): SchemaIssue {
  const message = `${instancePath === '' ? 'value' : instancePath} ${problem}`;
  return params === undefined ? { instancePath, schemaPath, keyword, message } : { instancePath, schemaPath, keyword, message, params };
}

/**
 * The issue reported when validation itself overflows the stack: a value
 * nested deeper than the engine can follow, or a circular value checked by a
 * recursive schema.
 */
export function createDepthIssue(): SchemaIssue {
  return createIssue('', '#', DEPTH_KEYWORD, 'is nested too deeply (or is circular) to be validated; send a flatter, acyclic value');
}

/** True when `error` is the engine's stack overflow (`RangeError: Maximum call stack size exceeded`). */
export function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}
