import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { InteractionContext, InteractionHandler, InteractionRequest, InteractionResponse } from '@ca/tool-lifecycle';
import type { McpServerConfig, McpStdioServerConfig } from './mcp-config';
import type { McpSpawn } from './process-stdio-transport';

/** The fixture MCP server (plain CommonJS, run with this Node). */
export const FIXTURE_SERVER = join(__dirname, '__fixtures__', 'fixture-server.js');
const LOOPBACK_PRELOAD = join(__dirname, '__fixtures__', 'listen-on-loopback.js');

/** Entry script of @modelcontextprotocol/server-everything. */
export const EVERYTHING_SERVER = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
/** Entry script of @modelcontextprotocol/server-filesystem. */
export const FILESYSTEM_SERVER = join(dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')), 'dist', 'index.js');

/** A stdio config entry running the fixture server with `env`. */
export function fixtureServer(env: Record<string, string> = {}, extra: Partial<McpStdioServerConfig> = {}): McpServerConfig {
  return { command: process.execPath, args: [FIXTURE_SERVER], env, ...extra };
}

/** A spawn that counts and remembers the processes it starts. */
export function countingSpawn(): { readonly spawn: McpSpawn; readonly pids: number[]; count(): number } {
  const pids: number[] = [];
  return {
    pids,
    count: () => pids.length,
    spawn: (command, args, options: SpawnOptions) => {
      const child = spawn(command, [...args], options);
      if (child.pid !== undefined) pids.push(child.pid);
      return child;
    },
  };
}

/** Polls `predicate` every 20 ms until it holds; throws after `timeoutMs` (a hang guard, not a speed check). */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A fresh temporary directory; remove it with {@link removeTempDir}. */
export function makeTempDir(prefix = 'ca-mcp-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Removes a temporary directory made by {@link makeTempDir}. */
export function removeTempDir(path: string | undefined): Promise<void> {
  return path === undefined ? Promise.resolve() : rm(path, { recursive: true, force: true });
}

/** Reads a JSON file, or undefined when it does not exist yet. */
export async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Lines of a text file, or [] when it does not exist. */
export async function readLines(path: string): Promise<string[]> {
  try {
    return (await readFile(path, 'utf8')).split('\n').filter((line) => line.length > 0);
  } catch {
    return [];
  }
}

/** server-everything in Streamable HTTP mode, on 127.0.0.1 and a free port. */
export interface HttpServer {
  readonly url: string;
  readonly pid: number;
  /** Everything the server wrote to stdout (it logs requests there). */
  output(): string;
  stop(): Promise<void>;
}

/** Starts server-everything's Streamable HTTP mode on 127.0.0.1; resolves once it listens. */
export function startEverythingHttp(timeoutMs = 20_000): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, ['--require', LOOPBACK_PRELOAD, EVERYTHING_SERVER, 'streamableHttp'], {
      env: { PATH: process.env['PATH'] ?? '', FIXTURE_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    const exited = new Promise<void>((done) => child.once('close', () => done()));
    const stop = async (): Promise<void> => {
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // Already gone.
      }
      await exited;
    };
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`server-everything (HTTP) did not start within ${timeoutMs} ms. stderr: ${stderr}`));
    }, timeoutMs);
    child.stdout?.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
      const match = /FIXTURE_LISTENING (\d+)/.exec(stderr);
      if (match !== null) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${match[1]}/mcp`, pid: child.pid as number, output: () => stdout, stop });
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** The Streamable HTTP fixture server (see `__fixtures__/http-server.js`), running. */
export interface FixtureHttpServer {
  readonly url: string;
  readonly pid: number;
  /** Ends it at once (SIGKILL to its process group) and waits for it to be gone. */
  kill(): Promise<void>;
}

/** Starts `__fixtures__/http-server.js` on 127.0.0.1 with `env`; resolves once it listens. */
export function startFixtureHttp(env: Record<string, string> = {}, timeoutMs = 20_000): Promise<FixtureHttpServer> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, [join(__dirname, '__fixtures__', 'http-server.js')], {
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let stderr = '';
    const exited = new Promise<void>((done) => child.once('close', () => done()));
    const kill = async (): Promise<void> => {
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // Already gone.
      }
      await exited;
    };
    const timer = setTimeout(() => {
      void kill();
      reject(new Error(`The HTTP fixture server did not start within ${timeoutMs} ms. stderr: ${stderr}`));
    }, timeoutMs);
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
      const match = /FIXTURE_LISTENING (\d+)/.exec(stderr);
      if (match !== null) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${match[1]}/mcp`, pid: child.pid as number, kill });
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/**
 * What a browser does with an authorization URL when the person approves:
 * loads the authorization server's page, which redirects, and follows the
 * redirect to the loopback address the adapter listens on.
 */
export async function followAuthorizationRedirect(url: string): Promise<number> {
  const page = await fetch(url, { redirect: 'manual' });
  const location = page.headers.get('location');
  if (location === null) throw new Error(`The authorization page answered ${page.status} without a redirect.`);
  const callback = await fetch(location);
  await callback.text();
  return callback.status;
}

/** A person at a browser: approves every sign-in page (the test authorization servers consent at once), or says no. */
export class PersonAtBrowser implements InteractionHandler {
  readonly asked: { request: InteractionRequest; context: InteractionContext }[] = [];
  constructor(private readonly approve = true) {}
  async interact(request: InteractionRequest, context: InteractionContext): Promise<InteractionResponse> {
    this.asked.push({ request, context });
    if (!this.approve || request.kind !== 'url') return { action: 'decline' };
    await followAuthorizationRedirect(request.url);
    return { action: 'accept' };
  }

  /** The scopes each sign-in page asked for. */
  scopes(): (string | null)[] {
    return this.asked.map(({ request }) => new URL((request as { url: string }).url).searchParams.get('scope'));
  }
}

/** The error `promise` rejects with; fails when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error & { code?: string; [key: string]: unknown }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string; [key: string]: unknown };
  }
  throw new Error('Expected the promise to reject, but it resolved.');
}
