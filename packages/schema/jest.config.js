module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/schema',
  rootDir: __dirname,
};
