import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** A restate-server a test started, on random ports in its own base folder. */
export interface TestRestateServer {
  readonly adminUrl: string;
  readonly ingressUrl: string;
  readonly baseDir: string;
  /** Stops it (SIGTERM, then SIGKILL after `graceMs`) and removes its base folder. */
  stop(graceMs?: number): Promise<void>;
}

/** The binary of `@restatedev/restate-server` (its linux-x64 package). */
export function restateServerBinary(): string {
  return require.resolve('@restatedev/restate-server-linux-x64/bin/restate-server');
}

/**
 * Starts restate-server for a test: `--bind-ip 127.0.0.1 --use-random-ports
 * true`, a base folder of its own, JSON logs read for the admin and ingress
 * ports. The server looks up its latest release on the internet at every
 * start: call this only inside a loopback-only network namespace
 * ({@link loopbackCommand}), as every process that talks to it.
 */
export async function startRestateServer(options: { readonly binary?: string; readonly startTimeoutMs?: number } = {}): Promise<TestRestateServer> {
  const baseDir = mkdtempSync(join(tmpdir(), 'ca-restate-'));
  const child: ChildProcess = spawn(
    options.binary ?? restateServerBinary(),
    ['--base-dir', baseDir, '--node-name', 'n1', '--bind-ip', '127.0.0.1', '--use-random-ports', 'true'],
    { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', RESTATE_LOG_FORMAT: 'json', DO_NOT_TRACK: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const ports: { admin?: number; ingress?: number } = {};
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('restate-server did not listen within the deadline')), options.startTimeoutMs ?? 60_000);
    const onLine = (line: string) => {
      if (!line.includes('listening')) return;
      try {
        const span = (JSON.parse(line) as { span?: { server_name?: string; 'server.port'?: number } }).span;
        if (span?.server_name === 'admin-api-server') ports.admin = span['server.port'];
        if (span?.server_name === 'http-ingress-server') ports.ingress = span['server.port'];
      } catch {
        return;
      }
      if (ports.admin !== undefined && ports.ingress !== undefined) {
        clearTimeout(timer);
        resolve();
      }
    };
    for (const stream of [child.stdout, child.stderr]) if (stream !== null) createInterface({ input: stream }).on('line', onLine);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`restate-server exited with ${String(code)} before it listened`));
    });
  });
  try {
    await ready;
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(baseDir, { recursive: true, force: true });
    throw error;
  }
  const adminUrl = `http://127.0.0.1:${ports.admin}`;
  // The admin API answers before the cluster is provisioned; wait until it serves queries.
  for (let tries = 0; tries < 200; tries++) {
    const ok = await fetch(`${adminUrl}/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    adminUrl,
    ingressUrl: `http://127.0.0.1:${ports.ingress}`,
    baseDir,
    stop: async (graceMs = 10_000) => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
}

/**
 * The command line that runs `command args…` in a new network namespace whose
 * only interface is loopback (brought up first): `unshare -n` as root,
 * `unshare -rn` otherwise. Nothing started inside can reach an address
 * outside 127.0.0.0/8.
 */
export function loopbackCommand(command: string, args: readonly string[]): { readonly command: string; readonly args: string[] } {
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  return { command: 'unshare', args: [asRoot ? '-n' : '-rn', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', command, ...args] };
}
