import * as wrapped from './index';

describe('@ca/adapters-wrapped public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(wrapped).sort()).toEqual([
      'WrappedToolError',
      'WrappedToolSource',
      'createWrappedAdapter',
      'fromAiSdkTool',
      'fromFunction',
      'fromLangChainTool',
      'registerWrappedAdapter',
      'wrapTool',
    ]);
  });
});
