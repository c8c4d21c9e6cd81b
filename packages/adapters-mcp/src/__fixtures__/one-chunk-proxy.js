'use strict';
// A stdio proxy in front of an MCP server (`node one-chunk-proxy.js <server
// script> [args…]`): it relays both ways line by line, except that it holds
// the server's first `roots/list` request until the server's next response
// and then writes both in one write, so that the client reads them in one
// chunk (the server asks for its roots while it answers tools/list, and a
// busy machine delivers both at once). Anything else passes through as is.
const { spawn } = require('node:child_process');

const server = spawn(process.execPath, process.argv.slice(2), { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(server.stdin);
process.stdin.on('end', () => server.stdin.end());
server.on('exit', (code, signal) => (signal ? process.kill(process.pid, signal) : process.exit(code ?? 0)));
process.on('SIGTERM', () => server.kill('SIGTERM'));

let pending = '';
let held;
let heldOnce = false;
server.stdout.setEncoding('utf8').on('data', (text) => {
  pending += text;
  let newline;
  while ((newline = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, newline + 1);
    pending = pending.slice(newline + 1);
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      message = undefined;
    }
    if (!heldOnce && message && message.method === 'roots/list') {
      heldOnce = true;
      held = line;
      continue;
    }
    if (held !== undefined && message && message.id !== undefined && message.method === undefined) {
      process.stdout.write(held + line);
      held = undefined;
      continue;
    }
    process.stdout.write(line);
  }
});
