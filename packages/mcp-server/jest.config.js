// The tests start real MCP clients and servers over real transports (in-memory pairs, HTTP on 127.0.0.1, child processes):
// the timeout is a hang guard only, no assertion depends on how fast the machine is. jose ships ES modules only: Jest's
// CommonJS runtime loads it compiled by ts-jest (allowJs), like the rest of the tests.
const preset = require('../../jest.preset.js');

module.exports = {
  ...preset,
  displayName: '@ca/mcp-server',
  rootDir: __dirname,
  testTimeout: 60_000,
  transform: {
    ...preset.transform,
    '^.+/node_modules/jose/.+\\.js$': [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', esModuleInterop: true }, isolatedModules: true, diagnostics: false },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
};
