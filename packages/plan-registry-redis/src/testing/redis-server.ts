import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

/** A `redis-server` of the test's own, on a free port of 127.0.0.1, keeping nothing on disk. */
export interface TestRedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` (or `rediss://localhost:<port>` with TLS). */
  readonly url: string;
  /** Every key the server holds, sorted (plain TCP servers only). */
  keys(): Promise<string[]>;
  /** Stops it (SIGTERM, then SIGKILL after 5 s); everything it held is gone. */
  stop(): Promise<void>;
  /** Stops it and starts a fresh one on the same port, as a server restarted without persistence. */
  restart(): Promise<void>;
}

/** Options of {@link startRedisServer}. */
export interface TestRedisOptions {
  /** Extra arguments of `redis-server` (`--user`, ACL rules, …). */
  readonly args?: readonly string[];
  /** Serve TLS only, with this certificate, key and CA (files in PEM); clients are not asked for certificates. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string; readonly caFile: string };
}

/** A TCP port of 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function launch(port: number, options: TestRedisOptions): Promise<ChildProcess> {
  const tls = options.tls;
  const listen =
    tls === undefined
      ? ['--port', String(port)]
      : [
          '--port',
          '0',
          '--tls-port',
          String(port),
          '--tls-cert-file',
          tls.certFile,
          '--tls-key-file',
          tls.keyFile,
          '--tls-ca-cert-file',
          tls.caFile,
          '--tls-auth-clients',
          'no',
        ];
  const child = spawn('redis-server', [...listen, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', ...(options.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve(child);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code} before it was ready:\n${output}`)));
  });
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Sends one command in the Redis protocol and reads the array of bulk strings it answers (enough for KEYS). */
function command(port: number, args: readonly string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    socket.on('connect', () => socket.write(`*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString();
      const lines = reply.split('\r\n');
      const count = Number(lines[0]?.slice(1));
      if (reply.startsWith('*') && lines.length >= 1 + count * 2 + 1) {
        socket.end();
        resolve(Array.from({ length: count }, (_, index) => lines[2 + index * 2] as string));
      }
    });
    socket.on('error', reject);
  });
}

/**
 * Starts a `redis-server` (it must be on the `PATH`: `apt-get install
 * redis-server`) on a free port of 127.0.0.1, without persistence, for one
 * test or suite; `stop()` it when done.
 * @throws Error with the server's output when it does not start.
 */
export async function startRedisServer(options: TestRedisOptions = {}): Promise<TestRedisServer> {
  let port = 0;
  let child: ChildProcess | undefined;
  // Another process may take the free port between the probe and the start: try a few.
  for (let attempt = 0; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await launch(port, options);
    } catch (error) {
      if (attempt >= 4) throw error;
    }
  }
  let current: ChildProcess = child;
  return {
    port,
    url: options.tls === undefined ? `redis://127.0.0.1:${port}` : `rediss://localhost:${port}`,
    keys: async () => (await command(port, ['KEYS', '*'])).sort(),
    stop: () => stopProcess(current),
    restart: async () => {
      await stopProcess(current);
      current = await launch(port, options);
    },
  };
}
