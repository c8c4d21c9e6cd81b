module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/adapters-wrapped',
  rootDir: __dirname,
};
