import * as builtin from './index';

describe('@ca/adapters-builtin public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(builtin).sort()).toEqual([
      'BUILTIN_TOOL_NAMES',
      'BuiltinToolError',
      'BuiltinToolSource',
      'createBuiltinAdapter',
      'createCheckpoint',
      'registerBuiltinAdapter',
      'rollback',
    ]);
  });
});
