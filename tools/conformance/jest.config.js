// Each scenario starts the suite (Node 22) and a client program (this Node):
// a few seconds each, one at a time. The timeout is a hang guard only; no
// assertion depends on how fast the machine is (the suite's own sse-retry
// timing check aside, see README).
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/conformance',
  rootDir: __dirname,
  testTimeout: 120_000,
};
