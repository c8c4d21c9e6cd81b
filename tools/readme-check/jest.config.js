// Type-checking every README example and running the complete ones takes a
// while (one process per example, some start MCP servers): a generous
// per-test timeout, as a hang guard only.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/readme-check',
  rootDir: __dirname,
  testTimeout: 180_000,
};
