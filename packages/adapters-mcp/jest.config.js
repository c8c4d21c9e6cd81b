module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/adapters-mcp',
  rootDir: __dirname,
};
