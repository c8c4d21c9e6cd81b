module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/tool-lifecycle',
  rootDir: __dirname,
};
