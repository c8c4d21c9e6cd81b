module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/adapters-custom',
  rootDir: __dirname,
};
