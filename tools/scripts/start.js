#!/usr/bin/env node
'use strict';
// `npm start`: the project's main job. Builds the packages, then runs the
// demo plans of examples/ through the `agents` command. With `--no-build`
// (`npm start -- --no-build`) it runs the demo on the packages as they are
// built already: the quick-start test does so after its own build
// dependency, so that its bounds measure the demo, not a build.
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' };
const args = process.argv.slice(2);
const build = !args.includes('--no-build');

if (build) {
  process.stderr.write('Building the @ca packages (first run takes a minute)…\n');
  try {
    execFileSync('npx', ['nx', 'run-many', '-t', 'build', '--outputStyle=static'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  } catch (error) {
    process.stderr.write(
      `The build failed (${error.signal ?? `exit code ${error.status}`}); the demo needs the built packages. Run 'npx nx run-many -t build' to see why.\n`,
    );
    process.exit(typeof error.status === 'number' && error.status !== 0 ? error.status : 1);
  }
  process.stderr.write('Built. Running the demo plans…\n');
}
try {
  execFileSync(process.execPath, [path.join(root, 'examples', 'demo.js'), ...args.filter((arg) => arg !== '--no-build')], { cwd: root, env, stdio: 'inherit' });
} catch (error) {
  process.exitCode = typeof error.status === 'number' ? error.status : 1;
}
