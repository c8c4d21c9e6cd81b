'use strict';
// A plain round-robin HTTP proxy, no affinity: each request goes to the next backend in turn, whatever
// its Mcp-Session-Id. Responses (event streams included) are piped back as they come. A backend that
// refuses the connection (a dead replica) is skipped for that request, as nginx's
// `proxy_next_upstream error` does; a request already sent to a backend that dies is not sent again:
// the client sees it fail (502 or a cut stream). The client's Host header is passed on as it came
// (nginx's `proxy_set_header Host $host`), so the replicas' DNS-rebinding checks see what the client sent,
// and its address is added to X-Forwarded-For.
//
//   const { startRoundRobinProxy } = require('packages/mcp-server/src/__fixtures__/round-robin-proxy');
//   const proxy = await startRoundRobinProxy(['http://127.0.0.1:4001', 'http://127.0.0.1:4002']);
//   proxy.url; proxy.counts; await proxy.close();
//
//   node tools/reliability/round-robin-proxy.js PORT BACKEND_URL...
const http = require('node:http');

/**
 * @param {readonly string[]} backends - base URLs (`http://host:port`).
 * @param {{ port?: number }} [options] - `port`: where it listens (default a free one).
 * @returns {Promise<{ url: URL, counts: number[], close(): Promise<void> }>}
 */
async function startRoundRobinProxy(backends, options = {}) {
  const targets = backends.map((backend) => new URL(backend));
  const counts = targets.map(() => 0);
  let next = 0;
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const first = next++ % targets.length;
      const attempt = (tries) => {
        const index = (first + tries) % targets.length;
        const target = targets[index];
        const forwarded = [request.headers['x-forwarded-for'], request.socket.remoteAddress].filter(Boolean).join(', ');
        const headers = { ...request.headers, 'x-forwarded-for': forwarded };
        const upstream = http.request({ hostname: target.hostname, port: target.port, method: request.method, path: request.url, headers }, (answer) => {
          counts[index]++;
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
          answer.on('error', () => response.destroy());
        });
        upstream.on('error', (error) => {
          // Nothing reached the backend: try the next one. Anything else is the client's to see.
          if (error.code === 'ECONNREFUSED' && tries + 1 < targets.length) return attempt(tries + 1);
          if (!response.headersSent) {
            response.writeHead(502, { 'content-type': 'application/json' });
            response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: `Bad gateway: ${error.code ?? error.message}` }, id: null }));
          } else response.destroy();
        });
        response.on('close', () => upstream.destroy());
        upstream.end(body);
      };
      attempt(0);
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const address = server.address();
  return {
    url: new URL(`http://127.0.0.1:${address.port}`),
    counts,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** `node round-robin-proxy.js PORT BACKEND_URL...` */
function main(argv) {
  const [port, ...backends] = argv;
  return startRoundRobinProxy(backends, { port: Number(port) }).then((proxy) => process.stdout.write(`Round-robin proxy at ${proxy.url.href}\n`));
}

module.exports = { startRoundRobinProxy, main };

if (require.main === module) void main(process.argv.slice(2));
