#!/usr/bin/env node
// Starts Verdaccio (tools/release/verdaccio.config.yaml) on 127.0.0.1 with its
// storage in the directory given, on a free port chosen by the OS, and prints
// one JSON line `{"url":"http://127.0.0.1:<port>/","pid":<pid>}` once it
// listens. Stops cleanly on SIGTERM or SIGINT. The caller owns the storage
// directory and removes it.
//
//   node tools/release/start-registry.js --storage /tmp/ca-registry [--port 4873]
const fs = require('node:fs');
const path = require('node:path');

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : process.argv[index + 1];
}

async function main() {
  const storageArgument = option('storage');
  if (!storageArgument) {
    throw new Error('Pass --storage <directory>: where the registry keeps packages (created if missing; you remove it afterwards).');
  }
  const storage = path.resolve(storageArgument);
  const port = Number(option('port', '0'));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be an integer 0-65535, got ${option('port')}.`);
  fs.mkdirSync(storage, { recursive: true });

  const { parseConfigFile, runServer } = require('verdaccio');
  const config = parseConfigFile(path.join(__dirname, 'verdaccio.config.yaml'));
  config.storage = path.join(storage, 'storage');
  config.auth = { htpasswd: { file: path.join(storage, 'htpasswd'), max_users: -1 } };
  config.self_path = path.join(storage, 'config.yaml');
  config.configPath = config.self_path;

  const server = await runServer(config);
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}/`, pid: process.pid })}\n`);

  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections?.();
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error) => {
  process.stderr.write(`start-registry: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
