module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/tool-context',
  rootDir: __dirname,
};
