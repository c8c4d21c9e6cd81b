import { spawn as nodeSpawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { PROCESS_GROUPS_SUPPORTED, signalProcessGroup } from '@ca/tool-lifecycle';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * Starts a process, with the signature of `child_process.spawn` restricted to
 * what the adapter uses. Inject your own (to count or wrap spawns) through
 * `McpAdapterSettings.spawn`; it must honour `options.detached` and `stdio`.
 */
export type McpSpawn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

/** How a server process ended. */
export interface ProcessExit {
  /** Exit code, or `null` when a signal ended it or it never started. */
  readonly code: number | null;
  /** The signal that ended it, if any. */
  readonly signal: NodeJS.Signals | null;
}

/** Options of {@link ProcessStdioTransport}. */
export interface ProcessStdioTransportOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly spawn?: McpSpawn;
  /** How long the process may take to exit after SIGTERM before its group is killed. */
  readonly shutdownGraceMs: number;
  /**
   * Send SIGTERM together with the end of stdin instead of first waiting
   * `shutdownGraceMs` for the server to exit on its own (see
   * `McpAdapterSettings.shutdown`).
   */
  readonly promptShutdown?: boolean;
  /** Called with each chunk of stderr (already kept in the tail). */
  readonly onStderr?: (text: string) => void;
  /** Called with each stdout line that is not a JSON-RPC message. */
  readonly onInvalidLine?: (line: string, error: unknown) => void;
}

const STDERR_TAIL_CHARACTERS = 8_192;
const MAX_LINE_BYTES = 10 * 1024 * 1024;
const EXIT_TO_CLOSE_MS = 250;

/**
 * An MCP `Transport` over a child process's stdin/stdout, like the SDK's
 * `StdioClientTransport`, except that:
 * - the process is spawned `detached`, so it leads its own process group, and
 *   closing ends the whole group (see {@link ProcessStdioTransport.close}):
 *   grandchildren die with it;
 * - stderr is always piped and its tail kept for error messages;
 * - a stdout line that is not JSON-RPC is reported and skipped, and the
 *   last one is kept for error messages.
 *
 * @internal
 */
export class ProcessStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  readonly #options: ProcessStdioTransportOptions;
  #child: ChildProcess | undefined;
  #pending: Buffer | undefined;
  #stderr = '';
  #exit: ProcessExit | undefined;
  #spawnError: Error | undefined;
  #resolveExited!: (exit: ProcessExit) => void;
  readonly #exited: Promise<ProcessExit>;
  #closing: Promise<void> | undefined;
  #invalidLines = 0;
  #lastInvalidLine: string | undefined;

  constructor(options: ProcessStdioTransportOptions) {
    this.#options = options;
    this.#exited = new Promise((resolve) => (this.#resolveExited = resolve));
  }

  /** Pid of the server process (also its process group id); undefined before start. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** How the process ended; undefined while it runs. */
  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  /** Why the process could not be spawned (e.g. `ENOENT`), if it could not. */
  get spawnError(): Error | undefined {
    return this.#spawnError;
  }

  /** Resolves when the process has exited and its pipes are closed. */
  get exited(): Promise<ProcessExit> {
    return this.#exited;
  }

  /** How many stdout lines were not JSON-RPC messages, and the last of them. */
  get invalidOutput(): { readonly count: number; readonly last?: string } {
    return this.#lastInvalidLine === undefined ? { count: 0 } : { count: this.#invalidLines, last: this.#lastInvalidLine };
  }

  /** The last lines the process wrote to stderr (at most `maxCharacters`), trimmed. */
  stderrTail(maxCharacters = 2_000): string {
    const text = this.#stderr.length > maxCharacters ? this.#stderr.slice(-maxCharacters) : this.#stderr;
    const firstBreak = this.#stderr.length > maxCharacters ? text.indexOf('\n') : -1;
    return (firstBreak >= 0 ? text.slice(firstBreak + 1) : text).trim();
  }

  start(): Promise<void> {
    if (this.#child !== undefined) return Promise.reject(new Error('ProcessStdioTransport was already started.'));
    const { command, args, env, cwd } = this.#options;
    const spawn = this.#options.spawn ?? (nodeSpawn as McpSpawn);
    return new Promise<void>((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(command, args, {
          env: { ...env },
          ...(cwd === undefined ? {} : { cwd }),
          stdio: ['pipe', 'pipe', 'pipe'],
          detached: PROCESS_GROUPS_SUPPORTED,
          shell: false,
          windowsHide: true,
        });
      } catch (error) {
        this.#finish({ code: null, signal: null }, error);
        reject(error);
        return;
      }
      this.#child = child;
      let spawned = false;
      child.once('spawn', () => {
        spawned = true;
        resolve();
      });
      child.once('error', (error) => {
        if (!spawned) {
          this.#spawnError = error;
          this.#finish({ code: null, signal: null }, error);
          reject(error);
        } else {
          this.onerror?.(error);
        }
      });
      child.once('close', (code, signal) => this.#finish({ code, signal }, undefined));
      // A grandchild holding the pipes open delays 'close' until it exits; do not wait for it for long.
      child.once('exit', (code, signal) => {
        setTimeout(() => this.#finish({ code, signal }, undefined), EXIT_TO_CLOSE_MS).unref();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => this.#onStdout(chunk));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (text: string) => {
        this.#stderr = (this.#stderr + text).slice(-STDERR_TAIL_CHARACTERS);
        this.#options.onStderr?.(text);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (stdin === undefined || stdin === null || this.#exit !== undefined || !stdin.writable) {
      return Promise.reject(new Error('Not connected: the MCP server process is not running.'));
    }
    return new Promise<void>((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /**
   * Ends the process and every process of its group, as the MCP stdio
   * transport specifies: closes stdin and waits for the server to exit (at
   * most `shutdownGraceMs`), then sends SIGTERM to the group and waits again,
   * then sends SIGKILL to the group — also after a clean exit, so that no
   * grandchild outlives the server. With `promptShutdown`, SIGTERM follows
   * the end of stdin at once. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  async #shutDown(): Promise<void> {
    const child = this.#child;
    if (child === undefined) {
      this.#finish({ code: null, signal: null }, undefined);
      return;
    }
    // The MCP stdio shutdown sequence: close stdin, then SIGTERM, then SIGKILL.
    if (this.#exit === undefined) {
      try {
        child.stdin?.end();
      } catch {
        // The pipe may already be broken; the signals below end the process anyway.
      }
      if (this.#options.promptShutdown !== true) await raceWithDelay(this.#exited, this.#options.shutdownGraceMs);
    }
    if (this.#exit === undefined) {
      signalProcessGroup(child, 'SIGTERM');
      await raceWithDelay(this.#exited, this.#options.shutdownGraceMs);
    }
    // Also after a clean exit: whatever the server left in its group must not outlive it.
    signalProcessGroup(child, 'SIGKILL');
    if (this.#exit === undefined) await raceWithDelay(this.#exited, this.#options.shutdownGraceMs);
  }

  #finish(exit: ProcessExit, spawnError: unknown): void {
    if (this.#exit !== undefined) return;
    this.#exit = exit;
    if (spawnError instanceof Error) this.#spawnError = spawnError;
    this.#pending = undefined;
    this.#resolveExited(exit);
    this.onclose?.();
  }

  #onStdout(chunk: Buffer): void {
    let buffer = this.#pending === undefined ? chunk : Buffer.concat([this.#pending, chunk]);
    let newline = buffer.indexOf(10);
    while (newline !== -1) {
      const line = buffer.toString('utf8', 0, newline).replace(/\r$/, '');
      buffer = buffer.subarray(newline + 1);
      if (line.length > 0) this.#onLine(line);
      newline = buffer.indexOf(10);
    }
    if (buffer.length > MAX_LINE_BYTES) {
      this.#pending = undefined;
      this.#recordInvalid(`${buffer.toString('utf8', 0, 200)}…`, new Error(`a stdout line exceeded ${MAX_LINE_BYTES} bytes`));
      return;
    }
    this.#pending = buffer.length === 0 ? undefined : buffer;
  }

  #onLine(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      this.#recordInvalid(line, error);
      return;
    }
    this.onmessage?.(message);
  }

  #recordInvalid(line: string, error: unknown): void {
    this.#invalidLines++;
    this.#lastInvalidLine = line.length > 200 ? `${line.slice(0, 200)}…` : line;
    this.#options.onInvalidLine?.(this.#lastInvalidLine, error);
  }
}

/** Waits for `promise` or `ms`, whichever comes first, leaving no timer behind. */
async function raceWithDelay(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
