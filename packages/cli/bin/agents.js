#!/usr/bin/env node
// The `agents` command's launcher. It is committed (not built) so that the bin
// link exists right after `npm ci` in the repository, before anything is
// built; it loads the build, or says how to make it.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const built = join(__dirname, '..', 'dist', 'bin.js');
if (existsSync(built)) {
  require(built);
} else {
  process.stderr.write(
    `agents: @ca/cli is not built (${built} is missing). In the repository run \`npm run build\` ` +
      '(or `npx nx build @ca/cli`) first, then `npx --no agents …`.\n',
  );
  process.exitCode = 1;
}
