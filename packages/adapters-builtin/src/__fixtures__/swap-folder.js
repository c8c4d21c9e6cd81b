// Swaps a folder for a symbolic link to an outside folder and back, in a tight
// loop, until the stop file appears (or a time limit passes); then prints how
// many swaps it made. Used to race the file tools' checks against their use.
const { existsSync, renameSync } = require('node:fs');
const { join } = require('node:path');

const [work, stopFile, limitMs] = process.argv.slice(2);
const box = join(work, 'box');
const real = join(work, 'box.real');
const link = join(work, 'box.link');
const deadline = Date.now() + Number(limitMs || 30000);
let swaps = 0;
const round = () => {
  for (let index = 0; index < 200; index++) {
    renameSync(box, real); // the folder leaves
    renameSync(link, box); // the link to the outside folder takes its name
    renameSync(box, link);
    renameSync(real, box); // the folder is back
    swaps++;
  }
  if (existsSync(stopFile) || Date.now() > deadline) {
    process.stdout.write(`${swaps}\n`);
    return;
  }
  setImmediate(round);
};
round();
