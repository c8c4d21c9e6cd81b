import type { SchemaCompileErrorReason } from './schema-compile-error';

/**
 * Internal: a schema problem found before the tool and direction are known.
 * The validator turns it into a `SchemaCompileError`.
 */
export class SchemaProblem extends Error {
  constructor(
    readonly reason: SchemaCompileErrorReason,
    readonly location: string,
    readonly detail: string,
    readonly problemCause?: unknown,
  ) {
    super(detail);
    this.name = 'SchemaProblem';
  }
}
