// The suites here are slow by design (property runs, a fault matrix with real
// processes and a 100 MB output, a soak of 100,000 executions): they get a
// generous per-test timeout, as a hang guard only — no assertion depends on
// how fast the machine is.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/reliability',
  rootDir: __dirname,
  testTimeout: 180_000,
};
