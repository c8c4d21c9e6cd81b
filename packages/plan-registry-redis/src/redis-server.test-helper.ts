import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

export const tlsFixtures = path.join(__dirname, '__fixtures__', 'tls');

/** A `redis-server` of the test's own, on a free port of 127.0.0.1, keeping nothing on disk. */
export interface TestRedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` (or `rediss://localhost:<port>` with TLS). */
  readonly url: string;
  /** Stops it (SIGTERM, then SIGKILL); everything it held is gone. */
  stop(): Promise<void>;
  /** Stops it and starts a fresh one on the same port, as a server restarted without persistence. */
  restart(): Promise<void>;
}

export interface TestRedisOptions {
  /** Extra arguments (`--user`, ACL rules). */
  readonly args?: readonly string[];
  /** Serve TLS only, with the fixture certificate. */
  readonly tls?: boolean;
}

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
  const listen = options.tls
    ? [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--tls-cert-file',
        path.join(tlsFixtures, 'server.crt'),
        '--tls-key-file',
        path.join(tlsFixtures, 'server.key'),
        '--tls-ca-cert-file',
        path.join(tlsFixtures, 'ca.crt'),
        '--tls-auth-clients',
        'no',
      ]
    : ['--port', String(port)];
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

/** Starts a `redis-server` on a free port; `stop()` it when done. */
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
    url: options.tls ? `rediss://localhost:${port}` : `redis://127.0.0.1:${port}`,
    stop: () => stopProcess(current),
    restart: async () => {
      await stopProcess(current);
      current = await launch(port, options);
    },
  };
}

/**
 * A TCP proxy in front of a server that the test can cut: `cut()` drops every
 * connection through it and refuses new ones (each is closed at once) until
 * `restore()`, as a network partition between one host and the server.
 */
export interface CuttableProxy {
  readonly port: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number): Promise<CuttableProxy> {
  const sockets = new Set<net.Socket>();
  let down = false;
  const server = net.createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut: () => {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    restore: () => {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Waits until `condition` holds, polling; fails after `timeoutMs`. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
