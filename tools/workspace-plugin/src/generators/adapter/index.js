// Entry Nx loads for `nx g @ca/workspace-plugin:adapter`: the generator is
// TypeScript (generator.ts), compiled on load; see ../../require-typescript.js.
require('../../require-typescript').registerTypeScript();

const generator = require('./generator.ts');

module.exports = generator;
