module.exports = {
  ...require('../../jest.preset.js'),
  displayName: '@ca/plan-restate',
  rootDir: __dirname,
};
