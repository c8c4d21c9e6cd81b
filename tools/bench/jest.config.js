// The smoke run starts one process per benchmark (MCP servers included): a
// generous per-test timeout, as a hang guard only.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/bench',
  rootDir: __dirname,
  testTimeout: 120_000,
};
