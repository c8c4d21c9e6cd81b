import * as domain from './index';

describe('@ca/domain public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(domain).sort()).toEqual([
      'MAX_TOOL_NAME_LENGTH',
      'TOOL_SOURCE_KINDS',
      'isCapabilityAtLeastAsStrict',
      'isToolSourceKind',
      'isValidToolName',
      'normalizeCapability',
    ]);
  });
});
