import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** One address in front of several hosts (what Restate is given). */
export interface Forwarder {
  readonly url: string;
  readonly port: number;
  /** How many connections went to each target. */
  readonly connections: Map<string, number>;
  close(): Promise<void>;
}

/**
 * A TCP forwarder: each connection goes to the first target (in turn) that
 * accepts it, so a host that died is passed over. Restate pins an invocation
 * to the deployment (the URL) it started on: several hosts need one address
 * that reaches a live one. HTTP/2 runs over it unchanged.
 */
export async function startForwarder(targets: () => readonly { readonly host: string; readonly port: number }[]): Promise<Forwarder> {
  let next = 0;
  const connections = new Map<string, number>();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((incoming) => {
    sockets.add(incoming);
    incoming.on('close', () => sockets.delete(incoming));
    incoming.pause();
    const list = targets();
    const tryTarget = (tries: number) => {
      if (tries >= list.length || list.length === 0) {
        incoming.destroy();
        return;
      }
      const target = list[(next++ + tries) % list.length] as { host: string; port: number };
      const outgoing = net.connect(target.port, target.host);
      outgoing.once('error', () => {
        outgoing.destroy();
        tryTarget(tries + 1);
      });
      outgoing.once('connect', () => {
        outgoing.removeAllListeners('error');
        sockets.add(outgoing);
        outgoing.on('close', () => sockets.delete(outgoing));
        const key = `${target.host}:${target.port}`;
        connections.set(key, (connections.get(key) ?? 0) + 1);
        outgoing.on('error', () => incoming.destroy());
        incoming.on('error', () => outgoing.destroy());
        incoming.pipe(outgoing).pipe(incoming);
        incoming.on('close', () => outgoing.destroy());
        outgoing.on('close', () => incoming.destroy());
        incoming.resume();
      });
    };
    tryTarget(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
