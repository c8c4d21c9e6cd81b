'use strict';
// The catalog, tasks and program rewriting of the code-mode token benchmark (tools/bench: 100 BFCL
// tools and 16 of a made-up workspace, deterministic fakes), for code-mode-front-doors.spec.ts;
// the tools themselves are also the custom tool module of `agents mcp serve --code-mode` there.
const { defineTool } = require('@ca/adapters-custom');
const { catalog } = require('../../../../bench/fixtures/code-mode/tools');
const { tasks } = require('../../../../bench/fixtures/code-mode/tasks');
const { programFor } = require('../../../../bench/code-mode-tokens.bench');

module.exports = catalog().map((tool) => defineTool(tool));
module.exports.catalog = catalog;
module.exports.tasks = tasks;
module.exports.programFor = programFor;
