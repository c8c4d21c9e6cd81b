import net from 'node:net';
import path from 'node:path';

export { freePort, startRedisServer } from './testing';
export type { TestRedisServer } from './testing';

export const tlsFixtures = path.join(__dirname, '__fixtures__', 'tls');

/** The fixture certificate, key and CA, for `startRedisServer({ tls: TLS_FILES })`. */
export const TLS_FILES = {
  certFile: path.join(tlsFixtures, 'server.crt'),
  keyFile: path.join(tlsFixtures, 'server.key'),
  caFile: path.join(tlsFixtures, 'ca.crt'),
} as const;

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
