// The suites here are slow by design (property runs, a fault matrix with real
// processes and a 100 MB output, a soak of 100,000 executions): they get a
// generous per-test timeout, as a hang guard only — no assertion depends on
// how fast the machine is. ai 7 and its @ai-sdk packages ship ES modules only
// (the code-mode front-door suite drives the AI SDK's loop): Jest's CommonJS
// runtime loads them compiled by ts-jest, as in @ca/model-tools.
const preset = require('../../jest.preset.js');

module.exports = {
  ...preset,
  displayName: '@ca/reliability',
  rootDir: __dirname,
  testTimeout: 180_000,
  transform: {
    ...preset.transform,
    '^.+/node_modules/(ai|@ai-sdk/[^/]+|@workflow/[^/]+|zod)/.+\\.js$': [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', esModuleInterop: true }, isolatedModules: true, diagnostics: false },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(ai|@ai-sdk|@workflow|zod)/)'],
};
