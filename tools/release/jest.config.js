module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/release-e2e',
  rootDir: __dirname,
  // publish-e2e.spec.ts builds, publishes to a local registry and installs
  // into a fresh project (third-party packages come from registry.npmjs.org).
  testTimeout: 300_000,
};
