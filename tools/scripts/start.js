#!/usr/bin/env node
'use strict';
// `npm start`: the project's main job. Builds the packages, then runs the
// demo plan of examples/ through the `agents` command.
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' };

process.stderr.write('Building the @ca packages (first run takes a minute)…\n');
execFileSync('npx', ['nx', 'run-many', '-t', 'build', '--outputStyle=static'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
try {
  execFileSync(process.execPath, [path.join(root, 'examples', 'demo.js'), ...process.argv.slice(2)], { cwd: root, env, stdio: 'inherit' });
} catch (error) {
  process.exitCode = typeof error.status === 'number' ? error.status : 1;
}
