'use strict';
// The plain round-robin proxy lives with the gateway's tests
// (packages/mcp-server/src/__fixtures__/round-robin-proxy.js), so that
// @ca/mcp-server's own specs need nothing of tools/; this path stays for
// scripts and for `node tools/reliability/round-robin-proxy.js PORT BACKEND_URL...`.
const proxy = require('../../packages/mcp-server/src/__fixtures__/round-robin-proxy.js');

module.exports = proxy;
if (require.main === module) void proxy.main(process.argv.slice(2));
