// ai 7 and its @ai-sdk packages ship ES modules only: Jest's CommonJS runtime
// loads them compiled by ts-jest (allowJs), like the rest of the tests.
const preset = require('../../jest.preset.js');

module.exports = {
  ...preset,
  displayName: '@ca/model-tools',
  rootDir: __dirname,
  transform: {
    ...preset.transform,
    '^.+/node_modules/(ai|@ai-sdk/[^/]+|@workflow/[^/]+|zod)/.+\\.js$': [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', esModuleInterop: true }, isolatedModules: true, diagnostics: false },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(ai|@ai-sdk|@workflow|zod)/)'],
};
