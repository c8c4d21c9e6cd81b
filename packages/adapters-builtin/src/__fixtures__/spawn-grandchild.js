// Starts a grandchild that sleeps for a minute in the same process group,
// writes "<own pid> <grandchild pid>" to the file named by argv[2], then
// either exits at once (argv[3] === 'exit') or hangs, ignoring SIGTERM.
const { spawn } = require('node:child_process');
const { writeFileSync } = require('node:fs');

const grandchild = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
writeFileSync(process.argv[2], `${process.pid} ${grandchild.pid}`);
process.stdout.write(`started ${grandchild.pid}\n`);
if (process.argv[3] === 'exit') {
  grandchild.unref();
  process.exit(0);
}
process.on('SIGTERM', () => process.stdout.write('ignoring SIGTERM\n'));
setInterval(() => {}, 1000);
