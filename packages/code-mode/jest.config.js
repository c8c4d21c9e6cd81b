module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/code-mode',
  rootDir: __dirname,
};
