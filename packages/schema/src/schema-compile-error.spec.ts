import { SCHEMA_VALIDATOR_ERROR_CODES } from './error-codes';
import { SchemaCompileError } from './schema-compile-error';

describe('SchemaCompileError', () => {
  it('carries a stable code, the reason, the location, the tool, the direction and the cause', () => {
    const cause = new Error('ajv said no');
    const error = new SchemaCompileError({
      reason: 'invalid-keyword',
      location: '#/type',
      detail: 'keyword value at #/type must be equal to one of the allowed values',
      toolName: 'echo',
      direction: 'input',
      cause,
    });
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: 'SchemaCompileError',
      code: SCHEMA_VALIDATOR_ERROR_CODES.SCHEMA_INVALID,
      reason: 'invalid-keyword',
      location: '#/type',
      toolName: 'echo',
      direction: 'input',
      cause,
    });
    expect(error.message).toBe(
      "Tool 'echo' input: the tool's inputSchema is invalid at #/type: keyword value at #/type must be equal to one of" +
        ' the allowed values. Correct the keyword value so the schema satisfies its metaschema.',
    );
  });

  it('reads well without a tool and says what to do for a remote reference', () => {
    const error = new SchemaCompileError({ reason: 'remote-ref', location: '#/$ref', detail: '$ref "https://x/s.json" is not registered' });
    expect(error.message).toMatch(/^The schema is invalid at #\/\$ref: .*never fetched over the network/);
    expect(error.toolName).toBeUndefined();
    expect(error.direction).toBeUndefined();
  });

  it('is recognised by its brand, also from another copy of the package', () => {
    const error = new SchemaCompileError({ reason: 'other', location: '#', detail: 'x' });
    expect(SchemaCompileError.isInstance(error)).toBe(true);
    expect(SchemaCompileError.isInstance(Object.assign(new Error('x'), { [Symbol.for('ca.error.SchemaCompileError')]: true }))).toBe(true);
    expect(SchemaCompileError.isInstance(new Error('x'))).toBe(false);
    expect(SchemaCompileError.isInstance(undefined)).toBe(false);
  });
});
