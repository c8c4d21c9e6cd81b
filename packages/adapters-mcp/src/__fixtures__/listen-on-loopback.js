'use strict';
// Preloaded (node --require) into @modelcontextprotocol/server-everything in
// Streamable HTTP mode, which listens on every interface: makes its server
// listen on 127.0.0.1 only, on the port of FIXTURE_PORT (0: a free one), and
// reports the port on stderr as "FIXTURE_LISTENING <port>".
const net = require('node:net');

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function listenOnLoopback(...args) {
  const callback = typeof args[args.length - 1] === 'function' ? args.pop() : undefined;
  this.once('listening', () => process.stderr.write(`FIXTURE_LISTENING ${this.address().port}\n`));
  return listen.call(this, Number(process.env.FIXTURE_PORT || 0), '127.0.0.1', callback);
};
