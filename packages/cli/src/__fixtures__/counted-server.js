'use strict';
// @modelcontextprotocol/server-everything over stdio, counting its starts:
// appends this process's pid to $SERVER_STARTS first, so a test can tell how
// many times a command started the server.
const fs = require('node:fs');
const path = require('node:path');

if (process.env.SERVER_STARTS) fs.appendFileSync(process.env.SERVER_STARTS, `${process.pid}\n`);
const entry = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'transports', 'stdio.js');
import(require('node:url').pathToFileURL(entry).href);
