import { createSchemaValidator, type CompiledSchema } from '@ca/schema';

/** Most nodes of a schema looked at for patterns; a larger schema counts as having one. */
const MAX_NODES = 20_000;

/**
 * True when `schema` holds a `pattern` or `patternProperties` anywhere (or is
 * too large to tell). A client validates `structuredContent` against the
 * output schema it was given, usually with a backtracking engine: a pattern
 * written by an upstream server could make that client hang on a crafted
 * output, which the gateway checked already on a linear-time engine.
 */
export function holdsPattern(schema: unknown): boolean {
  const stack: unknown[] = [schema];
  let seen = 0;
  while (stack.length > 0) {
    const node = stack.pop();
    if (++seen > MAX_NODES) return true;
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
    } else if (typeof node === 'object' && node !== null) {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'pattern' || key === 'patternProperties') return true;
        stack.push(value);
      }
    }
  }
  return false;
}

/**
 * The gateway's own check of the outputs it passes on as `structuredContent`
 * (the runtime only warns about an output that misses its schema, unless
 * strict): a client that got the schema rejects a mismatch as a protocol
 * error, so the gateway answers such a call with a clear error instead.
 * Compiled once per schema, untrusted (patterns on the linear-time engine).
 */
export class OutputChecks {
  private readonly validator = createSchemaValidator();
  private readonly compiled = new WeakMap<object, CompiledSchema | null>();

  /** The problems of `value` against `schema`, one line each; empty when it matches (or the schema cannot be compiled: the runtime reported that). */
  problems(schema: object, value: unknown, toolName: string): string[] {
    let check = this.compiled.get(schema);
    if (check === undefined) {
      try {
        check = this.validator.compile(schema as never, { toolName, direction: 'output', trust: 'untrusted' });
      } catch {
        check = null;
      }
      this.compiled.set(schema, check);
    }
    if (check === null) return [];
    const result = check.validate(value);
    return result.valid ? [] : result.issues.slice(0, 5).map((issue) => issue.message);
  }
}
