module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/adapters-builtin',
  rootDir: __dirname,
};
