#!/usr/bin/env node
'use strict';
// The `build` target of every package (nx.json): `tsc -p <tsconfig>`, then
// every file under the output folder that this compilation did not emit is
// removed. tsc never deletes what an earlier build emitted, so a source that
// moved or went would otherwise leave its old .js, .d.ts and maps behind, to
// be packed or resolved before the new ones.
//
// The output folder is never emptied first: tests that run while another
// task builds (the publishing test builds every package itself) keep
// resolving `dist/index.js` throughout, since tsc overwrites files in place.
//
//   node tools/scripts/build-package.js packages/x/tsconfig.lib.json
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const tsconfig = process.argv[2];
if (tsconfig === undefined) {
  console.error('usage: build-package.js <tsconfig.lib.json>');
  process.exit(2);
}
const tsc = require.resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', tsconfig, '--listEmittedFiles'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
const emitted = new Set();
for (const line of result.stdout.split('\n')) {
  if (line.startsWith('TSFILE: ')) emitted.add(path.resolve(line.slice('TSFILE: '.length).trim()));
  else if (line.trim() !== '') process.stdout.write(`${line}\n`);
}
process.stderr.write(result.stderr);
if (result.status !== 0) process.exit(result.status ?? 1);

// The output folder is the deepest folder that holds every emitted file
// (dist/, for a package whose src/index.ts emits dist/index.js): derived
// from what tsc listed, so the configuration is not read a second time.
if (emitted.size === 0) process.exit(0); // nothing emitted (noEmit): leave the folder as it is
let outRoot = path.dirname([...emitted][0]);
for (const file of emitted) {
  while (!file.startsWith(outRoot + path.sep)) outRoot = path.dirname(outRoot);
}
if (!outRoot.startsWith(path.resolve(path.dirname(tsconfig)) + path.sep)) {
  console.error(`build-package.js: tsc emitted outside the package (${outRoot}); nothing pruned`);
  process.exit(0);
}

/** Removes what this build did not write; returns true when the folder is left empty. */
function prune(folder) {
  let empty = true;
  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) {
      if (prune(full)) fs.rmdirSync(full);
      else empty = false;
    } else if (emitted.has(full)) {
      empty = false;
    } else {
      fs.rmSync(full, { force: true });
    }
  }
  return empty;
}
if (fs.existsSync(outRoot)) prune(outRoot);
