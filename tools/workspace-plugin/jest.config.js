module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/workspace-plugin',
  rootDir: __dirname,
  // generator-e2e.spec.ts builds, lints and tests a generated package with Nx.
  testTimeout: 300_000,
};
