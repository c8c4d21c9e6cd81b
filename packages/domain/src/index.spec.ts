import * as domain from './index';

describe('@ca/domain public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(domain).sort()).toEqual([
      'CaError',
      'KNOWN_TOOL_SOURCE_KINDS',
      'MAX_TOOL_NAME_LENGTH',
      'MAX_TOOL_SOURCE_KIND_LENGTH',
      'SAFE_MESSAGE_MAX_LENGTH',
      'asClause',
      'describeValue',
      'findSecrets',
      'hasBrand',
      'isCapabilityAtLeastAsStrict',
      'isKnownToolSourceKind',
      'isSecretName',
      'isToolSourceKind',
      'isValidToolName',
      'messageOf',
      'normalizeCapability',
      'redactSecrets',
      'redactUrlCredentials',
      'safeMessage',
      'urlCredentials',
    ]);
  });
});
