module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/repo-checks',
  rootDir: __dirname,
};
