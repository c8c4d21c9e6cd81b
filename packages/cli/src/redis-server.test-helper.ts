import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

/** A `redis-server` of the test's own on a free port of 127.0.0.1, keeping nothing on disk. */
export interface TestRedisServer {
  readonly port: number;
  readonly url: string;
  /** Every key the server holds. */
  keys(): Promise<string[]>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function launch(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
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
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}:\n${output}`)));
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

export async function startRedisServer(): Promise<TestRedisServer> {
  let port = 0;
  let child: ChildProcess | undefined;
  for (let attempt = 0; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await launch(port);
    } catch (error) {
      if (attempt >= 4) throw error;
    }
  }
  const running = child;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    keys: async () => (await command(port, ['KEYS', '*'])).sort(),
    stop: () =>
      new Promise<void>((resolve) => {
        if (running.exitCode !== null || running.signalCode !== null) return resolve();
        running.once('exit', () => resolve());
        running.kill('SIGTERM');
      }),
  };
}
