import * as schema from './index';

describe('@ca/schema public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(schema).sort()).toEqual([
      'PatternCompileError',
      'SCHEMA_VALIDATOR_ERROR_CODES',
      'SchemaCompileError',
      'ToolSchemaValidationError',
      'compileLinearPattern',
      'createSchemaValidator',
      'isSchemaTrust',
    ]);
  });
});
