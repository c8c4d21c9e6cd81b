module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/plan-registry-redis',
  rootDir: __dirname,
};
