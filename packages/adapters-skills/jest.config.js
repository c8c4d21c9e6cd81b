module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/adapters-skills',
  rootDir: __dirname,
};
