import * as custom from './index';

describe('@ca/adapters-custom public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(custom).sort()).toEqual([
      'CUSTOM_TOOL',
      'CustomTool',
      'CustomToolRegistrationError',
      'CustomToolSource',
      'createCustomAdapter',
      'defineTool',
      'registerCustomAdapter',
    ]);
  });
});
