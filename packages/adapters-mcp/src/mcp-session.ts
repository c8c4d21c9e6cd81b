import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type Tool as McpToolDefinition,
} from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { RuntimeLogger } from '@ca/tool-lifecycle';
import { messageOf, type ParsedMcpServer } from './mcp-config';
import { McpServerError } from './mcp-server-error';
import { ProcessStdioTransport, type McpSpawn } from './process-stdio-transport';

/** Name and version the adapter announces to servers in `initialize`. */
export const CLIENT_INFO = Object.freeze({ name: '@ca/adapters-mcp', version: '0.1.0' });

/**
 * Accepts every value: structured content is validated once, by the runtime,
 * against the tool's `outputSchema` with its draft 2020-12 validator, not
 * again by the SDK's draft-07 ajv.
 */
const ACCEPT_ALL: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

/** What opening a session needs. */
export interface SessionOptions {
  readonly server: ParsedMcpServer;
  readonly spawn?: McpSpawn;
  readonly fetch?: FetchLike;
  readonly logger: RuntimeLogger;
  /** Aborts the start and handshake. */
  readonly signal?: AbortSignal;
  /** Called when the server sends `notifications/tools/list_changed`. */
  readonly onToolsChanged?: (session: McpSession) => void;
  /** Why the session is opened, for logs: `discovery`, `plan '<id>'`, `shared`. */
  readonly purpose: string;
  /** Stop a stdio server with SIGTERM at once when closing (see `McpAdapterSettings.shutdown`). */
  readonly promptShutdown?: boolean;
}

/**
 * One MCP client session with one server: a connected SDK `Client` over a
 * stdio process (in its own process group) or a Streamable HTTP session.
 *
 * @internal
 */
export class McpSession {
  readonly server: ParsedMcpServer;
  readonly client: Client;
  readonly #transport: ProcessStdioTransport | StreamableHTTPClientTransport;
  readonly #logger: RuntimeLogger;
  #open = true;
  #closing: Promise<void> | undefined;

  private constructor(server: ParsedMcpServer, client: Client, transport: ProcessStdioTransport | StreamableHTTPClientTransport, logger: RuntimeLogger) {
    this.server = server;
    this.client = client;
    this.#transport = transport;
    this.#logger = logger;
  }

  /**
   * Starts (stdio) or reaches (HTTP) the server and completes the MCP
   * handshake within `connectTimeoutMs`.
   *
   * @throws {McpServerError} `MCP_SERVER_START_FAILED`, naming the server,
   *   with the tail of its stderr; the process is gone when it is thrown.
   * @throws The abort reason of `options.signal`, when it aborts first.
   */
  static async open(options: SessionOptions): Promise<McpSession> {
    const { server, logger } = options;
    const client = new Client({ ...CLIENT_INFO }, { capabilities: {}, jsonSchemaValidator: ACCEPT_ALL });
    const transport =
      server.transport === 'stdio'
        ? new ProcessStdioTransport({
            command: server.command as string,
            args: server.args,
            env: server.env,
            inheritEnv: server.inheritEnv,
            ...(server.cwd === undefined ? {} : { cwd: server.cwd }),
            ...(options.spawn === undefined ? {} : { spawn: options.spawn }),
            shutdownGraceMs: server.shutdownGraceMs,
            promptShutdown: options.promptShutdown === true,
            ...(server.sandbox === undefined ? {} : { sandbox: server.sandbox, serverName: server.name }),
            onStderr: (text) => logger.debug(`MCP server '${server.name}' stderr: ${text.trimEnd()}`, { server: server.name }),
            onInvalidLine: (line) =>
              logger.warn(`MCP server '${server.name}' wrote a stdout line that is not a JSON-RPC message; it was ignored: ${line}`, {
                server: server.name,
              }),
          })
        : new StreamableHTTPClientTransport(new URL(server.url as string), {
            requestInit: { headers: { ...server.headers } },
            ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
          });
    const session = new McpSession(server, client, transport, logger);
    client.onclose = () => {
      session.#open = false;
    };
    client.onerror = (error) => logger.debug(`MCP server '${server.name}': ${error.message}`, { server: server.name });
    if (options.onToolsChanged !== undefined) {
      const onToolsChanged = options.onToolsChanged;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => onToolsChanged(session));
    }
    try {
      await client.connect(transport, {
        timeout: server.connectTimeoutMs,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (error) {
      session.#open = false;
      await session.#closeTransport();
      if (options.signal?.aborted) throw options.signal.reason;
      throw session.#startFailure(error);
    }
    logger.debug(`MCP server '${server.name}' connected (${options.purpose}).`, {
      server: server.name,
      ...(transport instanceof ProcessStdioTransport ? { pid: transport.pid } : {}),
    });
    return session;
  }

  /** False once the connection is closed (by us, or because the server went away). */
  get isOpen(): boolean {
    return this.#open;
  }

  /** Pid of the server process (stdio sessions). */
  get pid(): number | undefined {
    return this.#transport instanceof ProcessStdioTransport ? this.#transport.pid : undefined;
  }

  /** The version the server announced, if any. */
  get serverVersion(): string | undefined {
    return this.client.getServerVersion()?.version;
  }

  /**
   * Lists every tool, following `nextCursor` page after page.
   *
   * @throws {McpServerError} `MCP_LIST_TOOLS_FAILED` when a request fails, a
   *   cursor repeats, or there are more than `maxPages` pages;
   *   `MCP_SERVER_EXITED` when the server goes away meanwhile.
   */
  async listAllTools(maxPages: number, signal?: AbortSignal): Promise<McpToolDefinition[]> {
    const tools: McpToolDefinition[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      if (page >= maxPages) {
        throw this.#listFailure(`it returned more than ${maxPages} pages of tools/list; raise maxToolPages if the server really has that many tools.`);
      }
      let result;
      try {
        result = await this.client.listTools(cursor === undefined ? undefined : { cursor }, {
          timeout: this.server.callTimeoutMs,
          ...(signal === undefined ? {} : { signal }),
        });
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (!this.#open) throw this.exitedError();
        throw this.#listFailure(`tools/list failed: ${messageOf(error)}.`, error);
      }
      tools.push(...result.tools);
      const next = result.nextCursor;
      if (next === undefined || next === null || next === '') return tools;
      if (seen.has(next)) {
        throw this.#listFailure(`tools/list returned the cursor ${JSON.stringify(next)} twice; the server's pagination loops.`);
      }
      seen.add(next);
      cursor = next;
    }
  }

  /**
   * The error that describes a session that ended while in use: exit code or
   * signal, the tail of stderr, non-JSON stdout.
   */
  exitedError(details: { readonly toolName?: string; readonly planId?: string } = {}): McpServerError {
    const name = this.server.name;
    const transport = this.#transport;
    const where = describeCall(details);
    if (!(transport instanceof ProcessStdioTransport)) {
      return new McpServerError({
        code: 'MCP_SERVER_EXITED',
        server: name,
        ...details,
        message: `The session with MCP server '${name}' (${this.server.url}) was closed${where}. Start a new plan to open a new session.`,
      });
    }
    const exit = transport.exit;
    const how =
      exit === undefined
        ? 'closed the connection'
        : exit.signal !== null
          ? `was ended by ${exit.signal}`
          : exit.code !== null
            ? `exited with code ${exit.code}`
            : 'exited';
    const stderr = transport.stderrTail();
    return new McpServerError({
      code: 'MCP_SERVER_EXITED',
      server: name,
      ...details,
      ...(stderr.length > 0 ? { stderr } : {}),
      ...(exit === undefined ? {} : { exitCode: exit.code, signal: exit.signal }),
      message: `MCP server '${name}' ${how}${where}.${describeStderr(stderr)}${this.describeInvalidOutput()} Fix the server or its configuration; a new plan starts it again.`,
    });
  }

  /** ` The server also wrote N line(s) to stdout that are not JSON-RPC …` or `''`. */
  describeInvalidOutput(): string {
    if (!(this.#transport instanceof ProcessStdioTransport)) return '';
    const invalid = this.#transport.invalidOutput;
    if (invalid.count === 0) return '';
    return ` The server also wrote ${invalid.count} line(s) to stdout that are not JSON-RPC messages (stdout is reserved for MCP messages; log to stderr), the last: ${JSON.stringify(invalid.last)}.`;
  }

  /**
   * Closes the session: an HTTP session is terminated (DELETE) first; a
   * stdio server and its process group are ended. Idempotent; never throws.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#open = false;
      const transport = this.#transport;
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
        try {
          await withDeadline(transport.terminateSession(), this.server.shutdownGraceMs);
        } catch (error) {
          this.#logger.debug(`MCP server '${this.server.name}': terminating the HTTP session failed: ${messageOf(error)}`, {
            server: this.server.name,
          });
        }
      }
      try {
        await this.client.close();
      } catch (error) {
        this.#logger.debug(`MCP server '${this.server.name}': closing the client failed: ${messageOf(error)}`, { server: this.server.name });
      }
      await this.#closeTransport();
    })();
    return this.#closing;
  }

  async #closeTransport(): Promise<void> {
    try {
      await this.#transport.close();
    } catch {
      // Closing an HTTP transport only aborts its requests; a stdio one never throws.
    }
  }

  #startFailure(error: unknown): McpServerError {
    const server = this.server;
    const transport = this.#transport;
    if (!(transport instanceof ProcessStdioTransport)) {
      const reason =
        error instanceof McpError && error.code === ErrorCode.RequestTimeout
          ? `it did not complete the MCP handshake within ${server.connectTimeoutMs} ms`
          : describeHttpError(error);
      return new McpServerError({
        code: 'MCP_SERVER_START_FAILED',
        server: server.name,
        cause: error,
        message: `MCP server '${server.name}' at ${server.url} could not be reached: ${reason}. Check that the server runs and that "url" and "headers" are right, or raise connectTimeoutMs.`,
      });
    }
    const commandLine = [server.command, ...server.args].join(' ');
    const exit = transport.exit;
    const spawnError = transport.spawnError as (Error & { code?: string }) | undefined;
    let reason: string;
    if (spawnError !== undefined) {
      reason =
        spawnError.code === 'ENOENT'
          ? `the command '${server.command}' was not found (is it installed and on PATH${server.cwd === undefined ? '' : `, or relative to cwd '${server.cwd}'`}?)`
          : `it could not be spawned: ${spawnError.message}`;
    } else if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      reason = `it did not complete the MCP handshake within ${server.connectTimeoutMs} ms`;
    } else if (exit !== undefined) {
      reason =
        exit.signal !== null
          ? `it was ended by ${exit.signal} before completing the MCP handshake`
          : `it exited with code ${exit.code} before completing the MCP handshake`;
    } else {
      reason = `the MCP handshake failed: ${messageOf(error)}`;
    }
    const stderr = transport.stderrTail();
    return new McpServerError({
      code: 'MCP_SERVER_START_FAILED',
      server: server.name,
      cause: spawnError ?? error,
      ...(stderr.length > 0 ? { stderr } : {}),
      ...(exit === undefined ? {} : { exitCode: exit.code, signal: exit.signal }),
      message: `MCP server '${server.name}' could not be started (${commandLine}): ${reason}.${describeStderr(stderr)}${this.describeInvalidOutput()} Check "command", "args", "env" and "cwd" of the server in the MCP configuration.`,
    });
  }

  #listFailure(reason: string, cause?: unknown): McpServerError {
    return new McpServerError({
      code: 'MCP_LIST_TOOLS_FAILED',
      server: this.server.name,
      ...(cause === undefined ? {} : { cause }),
      message: `The tools of MCP server '${this.server.name}' could not be listed: ${reason}`,
    });
  }
}

function describeCall(details: { readonly toolName?: string; readonly planId?: string }): string {
  const tool = details.toolName === undefined ? '' : ` during a call of tool '${details.toolName}'`;
  const plan = details.planId === undefined ? '' : ` in plan '${details.planId}'`;
  return `${tool}${plan}`;
}

/** `' Its stderr ended with:\n…'` or `''`. */
export function describeStderr(stderr: string): string {
  return stderr.length === 0 ? ' It wrote nothing to stderr.' : ` Its stderr ended with:\n${stderr}\n`;
}

function describeHttpError(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  const detail = cause instanceof Error ? `: ${cause.message}` : '';
  return `${messageOf(error)}${detail}`;
}

async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
