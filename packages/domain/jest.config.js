module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/domain',
  rootDir: __dirname,
};
