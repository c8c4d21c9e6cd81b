module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/sandbox',
  rootDir: __dirname,
};
