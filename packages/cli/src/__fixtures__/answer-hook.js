'use strict';
// A command hook in Claude Code's contract that answers what its arguments
// say: `node answer-hook.js '<answer JSON>' [record-file]` prints the answer
// (exit 0) and, given a file, first appends the call it was given to it (one
// JSON line), so that a test can see what the hook program saw.
const fs = require('node:fs');

let text = '';
process.stdin.on('data', (chunk) => (text += chunk));
process.stdin.on('end', () => {
  const [answer = '', record] = process.argv.slice(2);
  if (record !== undefined) fs.appendFileSync(record, `${text.trim()}\n`);
  process.stdout.write(answer);
});
