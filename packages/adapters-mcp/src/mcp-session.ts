import { messageOf } from '@ca/domain';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  ElicitationCompleteNotificationSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type ClientCapabilities,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Root,
  type Tool as McpToolDefinition,
} from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { InteractionHandler, RuntimeLogger } from '@ca/tool-lifecycle';
import { answerElicitation, answerSampling, type SamplingGate } from './client-requests';
import { type ParsedMcpServer } from './mcp-config';
import { describeOAuthError, isOAuthError, OAuthSession, type McpTokenStore } from './mcp-oauth';
import { McpServerError } from './mcp-server-error';
import { ProcessStdioTransport, type McpSpawn } from './process-stdio-transport';
import { sanitizeText } from './sanitize-text';

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

/**
 * How the Streamable HTTP transport retries a stream that broke: twice, 1 s
 * then 1.5 s later (the SDK's defaults, fixed here because the adapter's
 * promise depends on them): a server that is gone is reported about 3 s after
 * it went away, not when the call's timeout runs out.
 */
const HTTP_RECONNECTION = Object.freeze({ initialReconnectionDelay: 1_000, maxReconnectionDelay: 30_000, reconnectionDelayGrowFactor: 1.5, maxRetries: 2 });

/** How long the transport's attempts to reconnect take, plus a margin for a loaded machine. */
const RECONNECTION_WINDOW_MS = HTTP_RECONNECTION.initialReconnectionDelay * (1 + HTTP_RECONNECTION.reconnectionDelayGrowFactor) + 2_000;

/** Longest a plan waits for a server to fetch its new roots before its first call. */
const ROOTS_FETCH_WAIT_MS = 5_000;
/**
 * How long after fetching its roots a server is given to apply them: servers
 * apply them asynchronously (server-filesystem resolves each path first), and
 * the protocol has no message that says they did.
 */
const ROOTS_SETTLE_MS = 100;
/** Longest text of one server log message that reaches the logger. */
const MAX_LOG_MESSAGE_CHARACTERS = 2_000;
/**
 * Most sign-ins one request may cause after the handshake: one for a
 * missing or expired authorization (401), one to step up its scope (403
 * `insufficient_scope`). A server that still refuses fails the request
 * (`MCP_AUTH_FAILED`) instead of taking the person to the sign-in page again
 * and again.
 */
export const MAX_SIGN_INS_PER_REQUEST = 2;

/** Callbacks of one session into its source. */
export interface SessionEvents {
  /** The server sent `notifications/{tools,resources,prompts}/list_changed`. */
  readonly onListChanged?: (session: McpSession, list: 'tools' | 'resources' | 'prompts') => void;
  /** The server sent `notifications/resources/updated` for a subscribed resource. */
  readonly onResourceUpdated?: (session: McpSession, uri: string) => void;
  /** The server asked for the roots (called as the request is answered). */
  readonly onRootsFetched?: (session: McpSession) => void;
}

/** What opening a session needs. */
export interface SessionOptions {
  readonly server: ParsedMcpServer;
  readonly spawn?: McpSpawn;
  readonly fetch?: FetchLike;
  readonly logger: RuntimeLogger;
  /** Aborts the start and handshake. */
  readonly signal?: AbortSignal;
  readonly events?: SessionEvents;
  /** Why the session is opened, for logs: `discovery`, `plan '<id>'`, `shared`. */
  readonly purpose: string;
  /** Stop a stdio server with SIGTERM at once when closing (see `McpAdapterSettings.shutdown`). */
  readonly promptShutdown?: boolean;
  /**
   * The session's roots, declared as the `roots` capability (with
   * `listChanged`): `[]` for a discovery session, the plan's resources for a
   * plan's. Absent: the capability is not declared (shared sessions, or the
   * server's `roots: false`).
   */
  readonly roots?: readonly Root[];
  /** The plan the session belongs to (plan scope). */
  readonly planId?: string;
  /** Asks a person (elicitation, OAuth sign-in); absent: no elicitation capability. */
  readonly interaction?: InteractionHandler;
  /** Generates messages (sampling) within the per-plan limit; absent: no sampling capability. */
  readonly sampling?: SamplingGate;
  /** Where OAuth credentials are kept (servers with `oauth`). */
  readonly tokenStore?: McpTokenStore;
  /** How long a person has to complete an OAuth sign-in, in ms. */
  readonly authorizationTimeoutMs?: number;
}

/** One call in flight on a session, for telling which plan and tool a server's request belongs to. */
export interface InFlightCall {
  readonly planId: string;
  readonly toolName: string;
  /** Aborts when the call is cancelled (the execution's signal). */
  readonly signal?: AbortSignal;
}

/** The plan and tool a server's request can be attributed to. */
export interface Attribution {
  readonly planId?: string;
  readonly toolName?: string;
  /** The signal of the one call the request belongs to, when there is one. */
  readonly signal?: AbortSignal;
}

/** A list with more pages than fit, and whether it was cut. */
export interface ListedPage<T> {
  readonly items: readonly T[];
  readonly complete: boolean;
}

/**
 * One MCP client session with one server: a connected SDK `Client` over a
 * stdio process (in its own process group) or a Streamable HTTP session,
 * with the client side of the protocol the configuration asks for (roots,
 * elicitation, sampling, logging, list changes).
 *
 * @internal
 */
export class McpSession {
  readonly server: ParsedMcpServer;
  readonly client: Client;
  readonly #transport: ProcessStdioTransport | StreamableHTTPClientTransport;
  readonly #logger: RuntimeLogger;
  readonly #options: SessionOptions;
  #open = true;
  #closing: Promise<void> | undefined;
  #lost: string | undefined;
  #roots: readonly Root[] | undefined;
  #planId: string | undefined;
  #rootsFetches = 0;
  readonly #rootsWaiters = new Set<() => void>();
  /**
   * A pooled session (scope `shared`): the plans subscribed to each resource
   * URI, so that one plan's unsubscribe does not end another's subscription
   * and an update reaches only the plans that subscribed.
   */
  readonly subscribers = new Map<string, Set<string>>();
  /** Calls in flight, to attribute the server's requests; usually zero or one entry. */
  readonly inFlight: InFlightCall[] = [];
  /** True when the server may ask something of a call (elicitation, sampling): only then are calls tracked in {@link McpSession.inFlight}. */
  readonly tracksCalls: boolean;
  #holds = 0;
  #holdTimer: ReturnType<typeof setInterval> | undefined;
  /** The OAuth state of an HTTP server with `oauth`, kept for sign-ins after the handshake. */
  readonly #oauth: OAuthSession | undefined;
  /** Set once the handshake is done: from then on a refused request may start a sign-in. */
  #connected = false;
  /** Sign-ins completed after the handshake; a request refused before one of them completed is sent again without asking. */
  #signIns = 0;
  #signingIn: Promise<void> | undefined;
  /** Withdraws a sign-in in progress when the session closes. */
  readonly #closed = new AbortController();

  private constructor(
    options: SessionOptions,
    client: Client,
    transport: ProcessStdioTransport | StreamableHTTPClientTransport,
    oauth: OAuthSession | undefined,
  ) {
    this.server = options.server;
    this.client = client;
    this.#transport = transport;
    this.#oauth = oauth;
    this.#logger = options.logger;
    this.#options = options;
    this.#roots = options.roots;
    this.#planId = options.planId;
    this.tracksCalls = options.interaction !== undefined || options.sampling !== undefined;
  }

  /**
   * Starts (stdio) or reaches (HTTP) the server and completes the MCP
   * handshake within `connectTimeoutMs` — after an OAuth sign-in, when the
   * server wants one and a person can give it.
   *
   * @throws {McpServerError} `MCP_SERVER_START_FAILED`, naming the server,
   *   with the tail of its stderr (the process is gone when it is thrown);
   *   `MCP_AUTH_REQUIRED` / `MCP_AUTH_FAILED` for an HTTP server that wants
   *   credentials it did not get.
   * @throws The abort reason of `options.signal`, when it aborts first.
   */
  static async open(options: SessionOptions): Promise<McpSession> {
    const { server } = options;
    if (server.transport === 'stdio' || server.oauth === undefined) return McpSession.#connect(options, undefined, false);
    const oauth = await OAuthSession.start({
      server,
      store: options.tokenStore,
      logger: options.logger,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      ...(options.interaction === undefined ? {} : { interaction: options.interaction }),
      ...(options.authorizationTimeoutMs === undefined ? {} : { timeoutMs: options.authorizationTimeoutMs }),
    });
    // The session keeps the OAuth state (and the redirect listener) until it closes: a request may want a sign-in later.
    try {
      try {
        return await McpSession.#connect(options, oauth, true);
      } catch (error) {
        if (!oauth.wantsSignIn(error)) throw error;
      }
      // The server wants a person to sign in: once they did, connect again with the tokens.
      await oauth.signIn(options.signal);
      return await McpSession.#connect(options, oauth, false);
    } catch (error) {
      await oauth.finish();
      throw error;
    }
  }

  static async #connect(options: SessionOptions, oauth: OAuthSession | undefined, mayAskToSignIn: boolean): Promise<McpSession> {
    const { server, logger } = options;
    const capabilities: ClientCapabilities = {};
    if (options.roots !== undefined) capabilities.roots = { listChanged: true };
    // applyDefaults: the SDK fills in a form's schema defaults for the fields the person left out (SEP-1034).
    if (options.interaction !== undefined) capabilities.elicitation = { form: { applyDefaults: true }, url: {} };
    if (options.sampling !== undefined) capabilities.sampling = {};
    const client = new Client({ ...CLIENT_INFO }, { capabilities, jsonSchemaValidator: ACCEPT_ALL });
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
            serverName: server.name,
            ...(server.sandbox === undefined ? {} : { sandbox: server.sandbox }),
            onStderr: (text) => logger.debug(`MCP server '${server.name}' stderr: ${text.trimEnd()}`, { server: server.name }),
            onInvalidLine: (line) =>
              logger.warn(`MCP server '${server.name}' wrote a stdout line that is not a JSON-RPC message; it was ignored: ${line}`, {
                server: server.name,
              }),
          })
        : new StreamableHTTPClientTransport(new URL(server.url as string), {
            requestInit: { headers: { ...server.headers } },
            reconnectionOptions: HTTP_RECONNECTION,
            ...(oauth === undefined
              ? options.fetch === undefined
                ? {}
                : { fetch: options.fetch }
              : { fetch: oauth.watchScopeRefusals(options.fetch ?? fetch), authProvider: oauth.provider }),
          });
    const session = new McpSession(options, client, transport, oauth);
    session.#listen();
    if (oauth !== undefined && transport instanceof StreamableHTTPClientTransport) session.#signInOnRefusal(transport, oauth);
    try {
      await client.connect(transport, {
        timeout: server.connectTimeoutMs,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      session.#connected = true;
    } catch (error) {
      session.#open = false;
      await session.#closeTransport();
      if (options.signal?.aborted) throw options.signal.reason;
      if (mayAskToSignIn && oauth?.wantsSignIn(error)) throw error;
      throw session.#startFailure(error, oauth);
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

  /** The plan this session belongs to (plan scope), once it is known. */
  get planId(): string | undefined {
    return this.#planId;
  }

  /** How many times the server fetched the roots in this session. */
  get rootsFetches(): number {
    return this.#rootsFetches;
  }

  /** True when the server offers tool calls as tasks (`tasks.requests.tools.call`). */
  get serverRunsToolTasks(): boolean {
    return this.client.getServerCapabilities()?.tasks?.requests?.tools?.call !== undefined;
  }

  /**
   * Hands the session to a plan: it now belongs to `planId`, and its roots are
   * that plan's; the server is told (`notifications/roots/list_changed`) when
   * they changed. Used when a plan takes over the session that discovered.
   */
  async assignPlan(planId: string, roots: readonly Root[] | undefined): Promise<void> {
    this.#planId = planId;
    await this.reroot(roots);
  }

  /**
   * Gives the session new roots, telling the server
   * (`notifications/roots/list_changed`) when they changed. Used when an idle
   * pooled session is handed to plans with other roots.
   */
  async reroot(roots: readonly Root[] | undefined): Promise<void> {
    if (this.#roots === undefined || roots === undefined || sameRoots(this.#roots, roots)) return;
    this.#roots = roots;
    try {
      await this.client.sendRootsListChanged();
    } catch (error) {
      this.#logger.debug(`MCP server '${this.server.name}': telling it the roots changed failed: ${messageOf(error)}`, { server: this.server.name });
    }
  }

  /**
   * Resolves once the server has fetched the roots more than `fetchesBefore`
   * times, or after `timeoutMs`; for a server known to confine itself to its
   * roots, so that a plan's first call does not race the new roots.
   */
  waitForRootsFetch(fetchesBefore: number, timeoutMs = Math.min(ROOTS_FETCH_WAIT_MS, this.server.connectTimeoutMs)): Promise<boolean> {
    const settled = (fetched: boolean): Promise<boolean> =>
      fetched ? new Promise((resolve) => setTimeout(() => resolve(true), ROOTS_SETTLE_MS)) : Promise.resolve(false);
    if (this.#rootsFetches > fetchesBefore || !this.#open) return settled(this.#rootsFetches > fetchesBefore);
    return new Promise<boolean>((resolve) => {
      const done = (): void => {
        if (this.#rootsFetches <= fetchesBefore && this.#open) return;
        clearTimeout(timer);
        this.#rootsWaiters.delete(done);
        resolve(this.#rootsFetches > fetchesBefore);
      };
      const timer = setTimeout(() => {
        this.#rootsWaiters.delete(done);
        resolve(false);
      }, timeoutMs);
      this.#rootsWaiters.add(done);
    }).then(settled);
  }

  /**
   * After a request failed without an answer over HTTP (the connection was
   * refused or reset): waits, at most as long as the transport's attempts to
   * reconnect take, for the session to be found lost. True when it was: the
   * server is gone, not just one request.
   */
  async lostAfterNetworkFailure(error: unknown): Promise<boolean> {
    if (!(this.#transport instanceof StreamableHTTPClientTransport) || !this.#open) return !this.#open;
    if (error instanceof McpError || error instanceof StreamableHTTPError || error instanceof UnauthorizedError) return false;
    const deadline = Date.now() + RECONNECTION_WINDOW_MS;
    while (this.#open && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    return !this.#open;
  }

  /** The plan and tool a request of the server belongs to: this session's plan, or the one plan of every call in flight. */
  attribute(): Attribution {
    const calls = this.inFlight;
    const planId = this.#planId ?? (calls.length > 0 && calls.every((call) => call.planId === calls[0]?.planId) ? calls[0]?.planId : undefined);
    const tools = calls.filter((call) => call.planId === planId);
    return {
      ...(planId === undefined ? {} : { planId }),
      ...(tools.length === 1 ? { toolName: (tools[0] as InFlightCall).toolName } : {}),
      ...(tools.length === 1 && tools[0]?.signal !== undefined ? { signal: tools[0].signal } : {}),
    };
  }

  /**
   * Keeps the no-progress timeouts of the calls in flight from running out
   * while a person answers (or a model samples) for the server, until the
   * returned function is called. `maxTotalTimeoutMs` still holds.
   */
  holdTimeouts(): () => void {
    this.#holds++;
    this.#holdTimer ??= setInterval(() => this.#renewTimeouts(), Math.max(50, Math.floor(this.server.callTimeoutMs / 2)));
    this.#holdTimer.unref?.();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#renewTimeouts();
      if (--this.#holds === 0 && this.#holdTimer !== undefined) {
        clearInterval(this.#holdTimer);
        this.#holdTimer = undefined;
      }
    };
  }

  /**
   * Lists every tool, following `nextCursor` page after page.
   *
   * @throws {McpServerError} `MCP_LIST_TOOLS_FAILED` when a request fails, a
   *   cursor repeats, or there are more than `maxPages` pages;
   *   `MCP_SERVER_EXITED` when the server goes away meanwhile.
   */
  async listAllTools(maxPages: number, signal?: AbortSignal): Promise<McpToolDefinition[]> {
    try {
      const pages = await this.#listPages('tools/list', maxPages, signal, async (cursor, options) => {
        const result = await this.client.listTools(cursor === undefined ? undefined : { cursor }, options);
        return { items: result.tools, next: result.nextCursor };
      });
      if (!pages.complete) {
        throw this.#listFailure(`it returned more than ${maxPages} pages of tools/list; raise maxToolPages if the server really has that many tools.`);
      }
      return [...pages.items];
    } catch (error) {
      if (signal?.aborted || McpServerError.isInstance(error)) throw error;
      // Refused for want of an authorization: the documented auth codes, not a listing failure.
      throw authFailure(this.server, error) ?? this.#listFailure(`${messageOf(error)}.`, error);
    }
  }

  /** Every resource the server lists (at most `maxPages` pages; `complete: false` beyond). */
  listResources(maxPages: number, signal?: AbortSignal): Promise<ListedPage<Resource>> {
    return this.#listPages('resources/list', maxPages, signal, async (cursor, options) => {
      const result = await this.client.listResources(cursor === undefined ? undefined : { cursor }, options);
      return { items: result.resources, next: result.nextCursor };
    });
  }

  /** Every resource template the server lists (at most `maxPages` pages). */
  listResourceTemplates(maxPages: number, signal?: AbortSignal): Promise<ListedPage<ResourceTemplate>> {
    return this.#listPages('resources/templates/list', maxPages, signal, async (cursor, options) => {
      const result = await this.client.listResourceTemplates(cursor === undefined ? undefined : { cursor }, options);
      return { items: result.resourceTemplates, next: result.nextCursor };
    });
  }

  /** Every prompt the server lists (at most `maxPages` pages). */
  listPrompts(maxPages: number, signal?: AbortSignal): Promise<ListedPage<Prompt>> {
    return this.#listPages('prompts/list', maxPages, signal, async (cursor, options) => {
      const result = await this.client.listPrompts(cursor === undefined ? undefined : { cursor }, options);
      return { items: result.prompts, next: result.nextCursor };
    });
  }

  /**
   * The error that describes a session that ended while in use: exit code or
   * signal, the tail of stderr, non-JSON stdout — or, over HTTP, that the
   * server could no longer be reached.
   */
  exitedError(details: { readonly toolName?: string; readonly planId?: string } = {}): McpServerError {
    const name = this.server.name;
    const transport = this.#transport;
    const where = describeCall(details);
    if (!(transport instanceof ProcessStdioTransport)) {
      const why = this.#lost === undefined ? 'was closed' : `was lost: ${this.#lost}`;
      return new McpServerError({
        code: 'MCP_SERVER_EXITED',
        server: name,
        ...details,
        message: `The session with MCP server '${name}' (${this.server.url}) ${why}${where}. Check that the server runs; a new plan opens a new session.`,
      });
    }
    const oversized = transport.oversizedMessage;
    if (oversized !== undefined) {
      return new McpServerError({
        code: 'MCP_MESSAGE_TOO_LARGE',
        server: name,
        ...details,
        message: `MCP server '${name}' wrote a message (one stdout line) of more than ${describeBytes(oversized.limit)}, the most the adapter reads${where}. The message — the answer a request was waiting for — was dropped, and the session ended with the server's processes. Have the tool return less (pages, or a resource link to read), or fix the server; a new plan starts it again.`,
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
      this.#closed.abort(new Error(`the session with MCP server '${this.server.name}' closed`));
      this.#wakeRootsWaiters();
      if (this.#holdTimer !== undefined) clearInterval(this.#holdTimer);
      const transport = this.#transport;
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined && this.#lost === undefined) {
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
      await this.#oauth?.finish();
    })();
    return this.#closing;
  }

  // ---------------------------------------------------------------------------

  /**
   * After the handshake, a request the server refuses because it wants an
   * authorization it does not have — 401, or 403 `insufficient_scope` for a
   * wider scope (step-up) — starts the same sign-in as at connect (the
   * interaction handler takes the person to the page, the loopback listener
   * takes the code), and the request is sent again with the new token. At
   * most {@link MAX_SIGN_INS_PER_REQUEST} sign-ins per request; concurrent
   * requests share one sign-in.
   */
  #signInOnRefusal(transport: StreamableHTTPClientTransport, oauth: OAuthSession): void {
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      let signIns = 0;
      for (let attempt = 0; ; attempt++) {
        const completedBefore = this.#signIns;
        try {
          return await send(message, options);
        } catch (error) {
          if (!this.#connected || !this.#open || !oauth.wantsSignIn(error)) throw error;
          // Another request's sign-in completed while this one was refused: send it again with that token.
          if (this.#signIns !== completedBefore && attempt <= MAX_SIGN_INS_PER_REQUEST) continue;
          if (signIns >= MAX_SIGN_INS_PER_REQUEST) throw this.#refusedAfterSignIns(signIns, error);
          signIns++;
          await this.#signIn(oauth);
        }
      }
    };
  }

  /** One sign-in at a time; the calls' no-progress timeouts are held while the person signs in. */
  #signIn(oauth: OAuthSession): Promise<void> {
    this.#signingIn ??= (async () => {
      const release = this.holdTimeouts();
      try {
        const { planId, toolName } = this.attribute();
        await oauth.signIn(this.#closed.signal, { ...(planId === undefined ? {} : { planId }), ...(toolName === undefined ? {} : { toolName }) });
        this.#signIns++;
        this.#reopenEventStream(oauth);
      } finally {
        release();
        this.#signingIn = undefined;
      }
    })();
    return this.#signingIn;
  }

  /**
   * Opens the server's event stream again after a sign-in, when the server
   * had refused it for want of an authorization (right after the handshake,
   * before anyone signed in): the transport opens it once, after
   * `initialized`, and never again, so the server's notifications
   * (list_changed, resource updates, log messages) would not arrive until
   * the next session.
   */
  #reopenEventStream(oauth: OAuthSession): void {
    const transport = this.#transport;
    if (!(transport instanceof StreamableHTTPClientTransport) || !oauth.eventStreamRefused || !this.#open) return;
    oauth.eventStreamRefused = false;
    // Without an event id, resumeStream opens a new stream (no Last-Event-ID), as the transport does after `initialized`.
    transport.resumeStream('').catch((error: unknown) => {
      this.#logger.debug(`MCP server '${this.server.name}': opening its event stream after the sign-in failed: ${messageOf(error)}`, {
        server: this.server.name,
      });
    });
    this.#logger.debug(`MCP server '${this.server.name}': opening its event stream again, with the new authorization.`, { server: this.server.name });
  }

  #refusedAfterSignIns(signIns: number, cause: unknown): McpServerError {
    const server = this.server;
    return new McpServerError({
      code: 'MCP_AUTH_FAILED',
      server: server.name,
      cause,
      message: `MCP server '${server.name}' at ${server.url} still refused a request after ${signIns} sign-ins in a row; it was not sent again. The account may lack a permission the server wants (a scope the authorization server does not grant): check the account, or "oauth.scope" in the server's configuration.`,
    });
  }

  #listen(): void {
    const { client } = this;
    const server = this.server;
    const logger = this.#logger;
    const events = this.#options.events ?? {};
    client.onclose = () => {
      this.#open = false;
      this.#wakeRootsWaiters();
    };
    client.onerror = (error) => {
      logger.debug(`MCP server '${server.name}': ${error.message}`, { server: server.name });
      // The Streamable HTTP transport retries a broken stream, then gives up and
      // only says so: the calls waiting for an answer on it would wait for their timeout.
      if (this.#open && /Maximum reconnection attempts \(\d+\) exceeded/.test(error.message)) {
        this.#lost = `it stopped answering and ${HTTP_RECONNECTION.maxRetries} attempts to reconnect failed`;
        logger.warn(`MCP server '${server.name}' (${server.url}) can no longer be reached; its session is closed.`, { server: server.name });
        void this.close();
      }
    };
    const onListChanged = events.onListChanged;
    if (onListChanged !== undefined) {
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => onListChanged(this, 'tools'));
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => onListChanged(this, 'resources'));
      client.setNotificationHandler(PromptListChangedNotificationSchema, () => onListChanged(this, 'prompts'));
    }
    const onResourceUpdated = events.onResourceUpdated;
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      logger.debug(`MCP server '${server.name}' updated resource ${sanitizeText(notification.params.uri, 500)}.`, { server: server.name });
      onResourceUpdated?.(this, notification.params.uri);
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => this.#log(notification.params));
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
      logger.info(`MCP server '${server.name}' completed the elicitation ${sanitizeText(notification.params.elicitationId, 200)}.`, { server: server.name });
    });
    if (this.#roots !== undefined) {
      client.setRequestHandler(ListRootsRequestSchema, () => {
        const roots = this.#roots ?? [];
        this.#rootsFetches++;
        // That the server uses roots is known now, before whatever arrived in the same read (its tools/list
        // answer) lets a plan take this session over: that plan must then wait for its own roots.
        events.onRootsFetched?.(this);
        // Answered first, counted as fetched for the waiters on the next turn: the server has the list by then.
        setImmediate(() => this.#wakeRootsWaiters());
        return { roots: roots.map((root) => ({ ...root })) };
      });
    }
    const interaction = this.#options.interaction;
    if (interaction !== undefined) {
      client.setRequestHandler(ElicitRequestSchema, (request, extra) => answerElicitation(this, interaction, request.params, extra.signal, logger));
    }
    const sampling = this.#options.sampling;
    if (sampling !== undefined) {
      client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => answerSampling(this, sampling, request.params, extra.signal, logger));
    }
  }

  #log(params: { readonly level: string; readonly logger?: string; readonly data?: unknown }): void {
    const server = this.server.name;
    const text = typeof params.data === 'string' ? params.data : safeJson(params.data);
    const origin = params.logger === undefined ? '' : ` (${sanitizeText(params.logger, 100)})`;
    const message = `MCP server '${server}'${origin}: ${sanitizeText(text, MAX_LOG_MESSAGE_CHARACTERS)}`;
    // A pooled session has no plan of its own: the message belongs to the one plan whose calls are in flight, if there is one.
    const planId = this.#planId ?? this.attribute().planId;
    const fields = { server, mcpLogLevel: params.level, ...(planId === undefined ? {} : { planId }) };
    switch (params.level) {
      case 'debug':
        this.#logger.debug(message, fields);
        return;
      case 'info':
      case 'notice':
        this.#logger.info(message, fields);
        return;
      case 'warning':
        this.#logger.warn(message, fields);
        return;
      default:
        this.#logger.error(message, fields);
    }
  }

  #renewTimeouts(): void {
    // The SDK keeps each request's no-progress timer here; re-arming it is what progress does.
    const pending = (this.client as unknown as { _timeoutInfo?: Map<number, TimeoutInfo> })._timeoutInfo;
    if (!(pending instanceof Map)) return;
    const now = Date.now();
    for (const info of pending.values()) {
      if (info.maxTotalTimeout !== undefined && now - info.startTime >= info.maxTotalTimeout) continue;
      clearTimeout(info.timeoutId);
      info.timeoutId = setTimeout(info.onTimeout, info.timeout);
    }
  }

  #wakeRootsWaiters(): void {
    for (const waiter of [...this.#rootsWaiters]) waiter();
  }

  /**
   * Follows `nextCursor` for at most `maxPages` pages. A failed request
   * rejects with its own error (`MCP_SERVER_EXITED` when the server went
   * away), a repeated cursor with an `Error`.
   */
  async #listPages<T>(
    method: string,
    maxPages: number,
    signal: AbortSignal | undefined,
    fetchPage: (
      cursor: string | undefined,
      options: { timeout: number; signal?: AbortSignal },
    ) => Promise<{ items: readonly T[]; next?: string | null | undefined }>,
  ): Promise<ListedPage<T>> {
    const items: T[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < maxPages; page++) {
      let result;
      try {
        result = await fetchPage(cursor, { timeout: this.server.callTimeoutMs, ...(signal === undefined ? {} : { signal }) });
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (!this.#open) throw this.exitedError();
        throw error;
      }
      items.push(...result.items);
      const next = result.next;
      if (next === undefined || next === null || next === '') return { items, complete: true };
      if (seen.has(next)) throw new Error(`${method} returned the cursor ${JSON.stringify(next)} twice; the server's pagination loops`);
      seen.add(next);
      cursor = next;
    }
    return { items, complete: false };
  }

  async #closeTransport(): Promise<void> {
    try {
      await this.#transport.close();
    } catch {
      // Closing an HTTP transport only aborts its requests; a stdio one never throws.
    }
  }

  #startFailure(error: unknown, oauth: OAuthSession | undefined): McpServerError {
    const server = this.server;
    const transport = this.#transport;
    if (!(transport instanceof ProcessStdioTransport)) {
      const auth = authFailure(server, error, oauth);
      if (auth !== undefined) return auth;
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
    } else if (transport.oversizedMessage !== undefined) {
      reason = `it wrote a stdout line of more than ${describeBytes(transport.oversizedMessage.limit)} (the most the adapter reads as one message) before completing the MCP handshake`;
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

interface TimeoutInfo {
  timeoutId: ReturnType<typeof setTimeout>;
  readonly startTime: number;
  readonly timeout: number;
  readonly maxTotalTimeout?: number;
  readonly onTimeout: () => void;
}

/**
 * The authentication failure `error` stands for, as `MCP_AUTH_FAILED` (the
 * server answered 401 or 403: its status is kept) or `MCP_AUTH_REQUIRED` (it
 * wants an OAuth authorization the session could not get); undefined for
 * any other error.
 *
 * @internal
 */
export function authFailure(
  server: ParsedMcpServer,
  error: unknown,
  oauth?: OAuthSession,
  details: { toolName?: string; planId?: string } = {},
): McpServerError | undefined {
  const where = describeCall(details);
  const ownFailure = oauth?.failure;
  if (ownFailure !== undefined) return ownFailure;
  if (McpServerError.isInstance(error) && (error.code === 'MCP_AUTH_REQUIRED' || error.code === 'MCP_AUTH_FAILED')) {
    // A sign-in after the handshake failed, inside the request: the same error, with the call it was for.
    return details.toolName === undefined && details.planId === undefined
      ? error
      : new McpServerError({
          code: error.code,
          server: server.name,
          ...(error.status === undefined ? {} : { status: error.status }),
          ...details,
          cause: error.cause,
          message: error.message,
        });
  }
  if (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403)) {
    const status = error.code;
    // The SDK stepped the scope up once already and the server still wants more.
    const afterStepUp = status === 403 && /upscoping/.test(error.message);
    const advice =
      server.oauth === undefined
        ? `Check the credentials in "headers" (a missing or expired token), or add "oauth" to the server's configuration if it uses OAuth.`
        : afterStepUp
          ? `It still wants a scope the authorization server did not grant after signing in again for it (insufficient_scope): check the account's permissions, or "oauth.scope" in the server's configuration.`
          : `Its OAuth credentials were refused; sign in again, or check "oauth" in the server's configuration.`;
    return new McpServerError({
      code: 'MCP_AUTH_FAILED',
      server: server.name,
      status,
      ...details,
      cause: error,
      message: `MCP server '${server.name}' at ${server.url} refused the request${where}: HTTP ${status} (${status === 401 ? 'not authenticated' : 'forbidden'}). ${advice}`,
    });
  }
  if (isOAuthError(error)) {
    return new McpServerError({
      code: 'MCP_AUTH_FAILED',
      server: server.name,
      ...details,
      cause: error,
      message: `The authorization server of MCP server '${server.name}' (${server.url}) refused${where}: ${describeOAuthError(error)}. Check "oauth" in the server's configuration (client id and secret, scope).`,
    });
  }
  if (error instanceof UnauthorizedError) {
    return new McpServerError({
      code: 'MCP_AUTH_REQUIRED',
      server: server.name,
      ...details,
      cause: error,
      message:
        server.oauth === undefined
          ? `MCP server '${server.name}' at ${server.url} wants an OAuth authorization${where}. Add "oauth" to the server's configuration, or pass a token in "headers".`
          : `MCP server '${server.name}' at ${server.url} wants a new OAuth authorization${where}, which needs a person to sign in. Sign in again (with an interaction handler), then retry.`,
    });
  }
  return undefined;
}

function sameRoots(a: readonly Root[], b: readonly Root[]): boolean {
  return a.length === b.length && a.every((root, index) => root.uri === b[index]?.uri && JSON.stringify(root._meta) === JSON.stringify(b[index]?._meta));
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
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

/** `10 MiB (10485760 bytes)`. */
function describeBytes(bytes: number): string {
  return `${bytes / (1024 * 1024)} MiB (${bytes} bytes)`;
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
