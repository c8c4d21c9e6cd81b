import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { MINIMAL_ENVIRONMENT_VARIABLES, ProcessStartError, startProcess, type RunningProcess, createSandbox, type SandboxLauncher } from '@ca/sandbox';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ParsedMcpSandbox } from './mcp-config';

/**
 * Starts a process, with the signature of `child_process.spawn` restricted to
 * what the adapter uses (the process runner's `ProcessSpawn`). Inject your own
 * (to count or wrap spawns) through `McpAdapterSettings.spawn`; it must honour
 * `options.detached`, `stdio`, `cwd` and `env`.
 */
export type McpSpawn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

/** How a server process ended. */
export interface ProcessExit {
  /** Exit code, or `null` when a signal ended it or it never started. */
  readonly code: number | null;
  /** The signal that ended it, if any. */
  readonly signal: NodeJS.Signals | null;
}

/** What ended a session whose server wrote a line longer than {@link MAX_MESSAGE_BYTES}. */
export interface OversizedMessage {
  /** How many bytes of the line had arrived when it was given up (more than the limit). */
  readonly bytes: number;
  /** The limit: {@link MAX_MESSAGE_BYTES}. */
  readonly limit: number;
}

/** Options of {@link ProcessStdioTransport}. */
export interface ProcessStdioTransportOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** The server's declared `env`, set on top of the inherited variables. */
  readonly env: Readonly<Record<string, string>>;
  /** Names taken from the runtime's environment besides the runner's minimal ones. */
  readonly inheritEnv?: readonly string[];
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
  /** The server's kernel sandbox, when its configuration opts in. */
  readonly sandbox?: ParsedMcpSandbox;
  /** The server's name, for messages of the sandbox. */
  readonly serverName?: string;
}

const STDERR_TAIL_BYTES = 8_192;
/**
 * The longest stdout line (one JSON-RPC message) the adapter reads, in bytes:
 * 10 MiB. A longer one ends the session (see {@link ProcessStdioTransport}).
 */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
const EXIT_TO_CLOSE_MS = 250;

/**
 * An MCP `Transport` over a child process's stdin/stdout, like the SDK's
 * `StdioClientTransport`, except that:
 * - the process is started by the runtime's process runner
 *   (`startProcess` of `@ca/sandbox`): the minimal environment
 *   plus the declared one, its own process group, and closing ends the whole
 *   group (see {@link ProcessStdioTransport.close}): grandchildren die with it,
 *   and when the server dies on its own, what it left in its group is killed;
 * - with `sandbox`, in the kernel sandbox of `@ca/sandbox`,
 *   whose PID namespace also ends what left the group;
 * - stderr is always read and its tail kept for error messages;
 * - a stdout line that is not JSON-RPC is reported and skipped, and the
 *   last one is kept for error messages;
 * - a stdout line longer than {@link MAX_MESSAGE_BYTES} ends the session at
 *   once: the message it carried (an answer some request waits for) is lost,
 *   so the transport reports the error, closes (the SDK fails the requests in
 *   flight) and ends the process group without waiting for the server to exit.
 *
 * @internal
 */
export class ProcessStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  readonly #options: ProcessStdioTransportOptions;
  #starting: Promise<void> | undefined;
  #running: RunningProcess | undefined;
  /** The start of a line not ended yet, in the chunks it arrived in (joined once, when the line ends). */
  #pendingChunks: Buffer[] = [];
  #pendingBytes = 0;
  #oversized: OversizedMessage | undefined;
  /** True once `onclose` was called: the session may end before the process does (an oversized line). */
  #closeAnnounced = false;
  #exit: ProcessExit | undefined;
  #spawnError: Error | undefined;
  #resolveExited!: (exit: ProcessExit) => void;
  readonly #exited: Promise<ProcessExit>;
  #closing: Promise<void> | undefined;
  #invalidLines = 0;
  /** A message was written in this turn of the event loop: later ones wait for its end, to leave in one write. */
  #batching = false;
  /** stdin is corked, holding the messages of this turn after the first. */
  #corked = false;
  #lastInvalidLine: string | undefined;

  constructor(options: ProcessStdioTransportOptions) {
    this.#options = options;
    this.#exited = new Promise((resolve) => (this.#resolveExited = resolve));
  }

  /** Pid of the server process (also its process group id); undefined before start. */
  get pid(): number | undefined {
    return this.#running?.pid;
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

  /** Set when the server wrote a line longer than {@link MAX_MESSAGE_BYTES}, which ended the session. */
  get oversizedMessage(): OversizedMessage | undefined {
    return this.#oversized;
  }

  /** How many stdout lines were not JSON-RPC messages, and the last of them. */
  get invalidOutput(): { readonly count: number; readonly last?: string } {
    return this.#lastInvalidLine === undefined ? { count: 0 } : { count: this.#invalidLines, last: this.#lastInvalidLine };
  }

  /** The last lines the process wrote to stderr (at most `maxCharacters`), trimmed. */
  stderrTail(maxCharacters = 2_000): string {
    const stderr = this.#running?.stderr().text ?? '';
    const text = stderr.length > maxCharacters ? stderr.slice(-maxCharacters) : stderr;
    const firstBreak = stderr.length > maxCharacters ? text.indexOf('\n') : -1;
    return (firstBreak >= 0 ? text.slice(firstBreak + 1) : text).trim();
  }

  start(): Promise<void> {
    if (this.#starting !== undefined) return Promise.reject(new Error('ProcessStdioTransport was already started.'));
    const { command, args, env, inheritEnv = [], cwd, spawn } = this.#options;
    this.#starting = this.#launcher()
      .then((launcher) =>
        startProcess({
          command,
          args,
          env,
          inheritEnv: [...MINIMAL_ENVIRONMENT_VARIABLES, ...inheritEnv],
          ...(cwd === undefined ? {} : { cwd }),
          ...(spawn === undefined ? {} : { spawn }),
          killGraceMs: this.#options.shutdownGraceMs,
          // A grandchild that left the group and holds the pipes must not delay the end for long.
          outputDrainMs: EXIT_TO_CLOSE_MS,
          maxStderrBytes: STDERR_TAIL_BYTES,
          onStderr: (text) => this.#options.onStderr?.(text),
          onError: (error) => this.onerror?.(error),
          ...(launcher === undefined ? {} : { launcher }),
        }),
      )
      .then(
        (running) => {
          this.#running = running;
          running.stdout.on('data', (chunk: Buffer) => this.#onStdout(chunk));
          running.stdout.on('error', (error) => this.onerror?.(error));
          void running.exited.then((exit) => this.#finish({ code: exit.exitCode, signal: exit.signal }));
        },
        (error: unknown) => {
          // The session reports the operating system's error (ENOENT: not installed), as before the runner.
          const cause = ProcessStartError.isInstance(error) ? error.cause : error;
          this.#spawnError = cause as Error;
          this.#finish({ code: null, signal: null });
          throw cause;
        },
      );
    return this.#starting;
  }

  /**
   * The launcher of the server's sandbox, or `undefined` without one. The
   * server is not tied to a plan (a session may serve several, or discovery):
   * it writes only what its configuration lists as `writable`.
   * @throws {SandboxUnavailableError} When the sandbox is required and does not work here.
   */
  async #launcher(): Promise<SandboxLauncher | undefined> {
    const sandbox = this.#options.sandbox;
    if (sandbox === undefined || sandbox.mode === 'off') return undefined;
    const { mode, network, bwrapPath } = sandbox;
    const name = this.#options.serverName === undefined ? 'sandbox' : `mcpServers.${this.#options.serverName}.sandbox`;
    return createSandbox({ mode, network, ...(bwrapPath === undefined ? {} : { bwrapPath }) }, { setting: name }).launcher({
      writes: 'in-place',
      network: true,
      writablePaths: sandbox.writable,
      readablePaths: sandbox.readable,
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#running?.stdin;
    if (stdin === undefined || this.#exit !== undefined || !stdin.writable) {
      return Promise.reject(new Error('Not connected: the MCP server process is not running.'));
    }
    // The first message of a turn of the event loop is written at once; the
    // others of the same turn (a pool serving many plans) wait for its end and
    // leave together, in one write: every write wakes the server, and on a busy
    // host each wake-up costs more than the bytes.
    if (this.#batching) {
      if (!this.#corked) {
        this.#corked = true;
        stdin.cork();
      }
    } else {
      this.#batching = true;
      setImmediate(() => this.#endBatch(stdin));
    }
    return new Promise<void>((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  #endBatch(stdin: NonNullable<RunningProcess['stdin']>): void {
    this.#batching = false;
    if (!this.#corked) return;
    this.#corked = false;
    stdin.uncork();
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
    this.#closing ??= this.#shutDown(this.#options.promptShutdown === true);
    return this.#closing;
  }

  async #shutDown(prompt: boolean): Promise<void> {
    try {
      await this.#starting;
    } catch {
      // It never started: nothing to stop.
    }
    const running = this.#running;
    if (running === undefined) {
      this.#finish({ code: null, signal: null });
      return;
    }
    // With promptShutdown (or a server that broke the stream), SIGTERM follows the end of stdin at once.
    await running.close(prompt ? { exitWaitMs: 0 } : {});
  }

  #finish(exit: ProcessExit): void {
    if (this.#exit !== undefined) return;
    this.#exit = exit;
    this.#dropPending();
    this.#resolveExited(exit);
    this.#announceClose();
  }

  #announceClose(): void {
    if (this.#closeAnnounced) return;
    this.#closeAnnounced = true;
    this.onclose?.();
  }

  #dropPending(): void {
    this.#pendingChunks = [];
    this.#pendingBytes = 0;
  }

  #onStdout(chunk: Buffer): void {
    if (this.#oversized !== undefined || this.#exit !== undefined) return;
    // Only the new chunk is searched for the end of the line; the chunks before it are joined once, when it ends.
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      const line = this.#pendingBytes === 0 ? piece : Buffer.concat([...this.#pendingChunks, piece], this.#pendingBytes + piece.length);
      this.#dropPending();
      if (line.length > MAX_MESSAGE_BYTES) return this.#overflow(line.length);
      const text = line.toString('utf8').replace(/\r$/, '');
      if (text.length > 0) this.#onLine(text);
      if (this.#closeAnnounced) return;
    }
    if (start === chunk.length) return;
    const rest = chunk.subarray(start);
    this.#pendingChunks.push(rest);
    this.#pendingBytes += rest.length;
    if (this.#pendingBytes > MAX_MESSAGE_BYTES) this.#overflow(this.#pendingBytes);
  }

  /**
   * The server wrote a line longer than the limit: the message in it is lost
   * (its request would wait for its timeout), and reading on would mean
   * buffering without end. The session ends now — `onclose` at once, so that
   * the requests in flight fail — and the process group is ended, without
   * waiting for the server to exit on its own.
   */
  #overflow(bytes: number): void {
    this.#dropPending();
    this.#oversized = { bytes, limit: MAX_MESSAGE_BYTES };
    const name = this.#options.serverName === undefined ? 'The MCP server' : `MCP server '${this.#options.serverName}'`;
    this.onerror?.(new Error(`${name} wrote a stdout line of more than ${MAX_MESSAGE_BYTES} bytes (the limit of one message); the session is closed.`));
    this.#closing ??= this.#shutDown(true);
    this.#announceClose();
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
