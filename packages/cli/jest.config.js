module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/cli',
  rootDir: __dirname,
};
