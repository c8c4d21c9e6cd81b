import { describeValue } from '@ca/domain';
import { ModelTools, type ModelToolsOptions } from '@ca/model-tools';
import type { ToolExecutionTrace } from '@ca/tool-context';
import { silentLogger, type PlanEndReport, type RuntimeLogger, type ToolRuntime } from '@ca/tool-lifecycle';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { GatewayClients, type SessionApprovals } from '../clients/gateway-clients';
import { McpGatewayError, invalidArgument } from '../errors/mcp-gateway-error';
import { OutputChecks } from '../listing/output-schemas';
import { GatewaySession } from './gateway-session';
import { resolveProfile, type McpSessionInfo, type McpSessionProfile } from './session-profile';

/** Where upstream resource updates come from (`McpToolSource` of `@ca/adapters-mcp` is one). */
export interface ResourceUpdateSource {
  onResourceUpdated(listener: (update: { readonly uri: string; readonly planId?: string }) => void): () => void;
}

/** Options of {@link McpGateway}. */
export interface McpGatewayOptions {
  /**
   * Routes approvals and upstream questions to each session's client. Give
   * the same one whose handlers the runtime was built with (its
   * `approvalHandler` as the runtime's `APPROVAL_HANDLER`, its
   * `interactionHandler` and `samplingHandler` to the MCP adapter); default a
   * new one, which reaches no client unless the runtime uses it.
   */
  readonly clients?: GatewayClients;
  /** What each session gets (its plan, its tools): one profile, or one chosen per session (by its sign-in, say). Default: every tool, a read-write plan. */
  readonly profile?: McpSessionProfile | ((session: McpSessionInfo) => McpSessionProfile | Promise<McpSessionProfile>);
  /** The name and version the server gives clients; default `{ name: 'agents-mcp-gateway', version }` of this package. */
  readonly serverInfo?: { readonly name: string; readonly version: string };
  /** Most characters of text one result gives a client (default 100,000); beyond, it is cut with a marker. `structuredContent` longer than this as JSON is left out (a tool with an output schema then answers with an error). */
  readonly maxResultCharacters?: number;
  /** Largest image, audio or binary resource (decoded bytes) a result passes on (default 4 MiB). */
  readonly maxImageBytes?: number;
  /** Most tool calls one session runs at once (default 16); more are answered with an error. */
  readonly maxConcurrentCalls?: number;
  /** Most tool calls one session makes in all (default 100,000; its plan keeps a trace of each). */
  readonly maxCallsPerSession?: number;
  /** How long a question to a client (an approval, an upstream server's form) may wait, in ms (default 600,000). */
  readonly interactionTimeoutMs?: number;
  /** Where the gateway logs sessions and what it could not pass on (default: nowhere). */
  readonly logger?: RuntimeLogger;
  /** Upstream resource updates, passed on to the sessions that subscribed. */
  readonly resourceUpdates?: ResourceUpdateSource;
  /**
   * Code mode (`agents mcp serve --code-mode`): sessions list the runtime's
   * program tool (`code.run` of `@ca/code-mode`) and `tools.search` instead
   * of the tools, and a program's calls go through the session's plan like
   * any call (see `ModelToolsOptions.codeMode` of `@ca/model-tools`). The
   * profile's `tools` globs then choose among those two.
   */
  readonly codeMode?: ModelToolsOptions['codeMode'];
  /** Receives the trace of every execution a session makes, as it ends (`--traces`). */
  readonly onTrace?: (trace: ToolExecutionTrace) => void;
  /** Called when a session has ended, with its plan's end report. */
  readonly onSessionEnd?: (ended: {
    readonly session: McpSessionInfo;
    readonly planId: string | undefined;
    readonly report: PlanEndReport | undefined;
  }) => void;
}

/** One client session of a gateway. */
export interface McpGatewaySession {
  readonly info: McpSessionInfo;
  /** The session's plan id, once its plan exists (the client initialized). */
  readonly planId: string | undefined;
  /** The client's name and version, as it introduced itself. */
  readonly clientName: string;
  /** Resolves once the session has ended and its plan with it. */
  readonly ended: Promise<void>;
  /** What the server offers the client: its capabilities and instructions and name (what `initialize` or `server/discover` answers). */
  readonly offer: {
    readonly capabilities: Record<string, unknown>;
    readonly instructions: string | undefined;
    readonly serverInfo: { readonly name: string; readonly version: string };
  };
  /** Ends the session and its plan (idempotent). */
  close(reason?: string): Promise<void>;
}

const DEFAULT_MAX_RESULT_CHARACTERS = 100_000;
const DEFAULT_MAX_CONCURRENT_CALLS = 16;
const DEFAULT_MAX_CALLS_PER_SESSION = 100_000;
const DEFAULT_INTERACTION_TIMEOUT_MS = 600_000;
/** How long the gateway waits for more changes of the catalog before telling the sessions. */
const CHANGE_SETTLE_MS = 50;

function packageVersion(): string {
  try {
    return (require('../../package.json') as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

function positiveInteger(value: number | undefined, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw invalidArgument(field, 'a whole number ≥ 1', describeValue(value));
  return value;
}

/**
 * The runtime as an MCP server: each client session (on any transport — stdio
 * and Streamable HTTP have their own `serve…` functions) is one plan of the
 * runtime, with the profile's policy and resources; its tools are the
 * runtime's tools the plan may run, as MCP tools (`@ca/model-tools`, format
 * `mcp`), and every call goes through `runtime.execute` — policy, schema,
 * approval, limits, sandbox, hooks, trace. Upstream MCP servers' resources
 * and prompts pass through; approvals and upstream questions are asked of
 * the client (elicitation) when it can be asked.
 */
export class McpGateway {
  private readonly sessions = new Set<GatewaySession>();
  private readonly clients: GatewayClients;
  private readonly modelTools: ModelTools;
  private readonly outputChecks = new OutputChecks();
  private readonly logger: RuntimeLogger;
  private readonly settings: Omit<ConstructorParameters<typeof GatewaySession>[2], 'onEnd'>;
  private readonly unsubscribers: (() => void)[] = [];
  private changeTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;

  /** @throws McpGatewayError (`GATEWAY_INVALID_ARGUMENT`) for an option it cannot use. */
  constructor(
    readonly runtime: ToolRuntime,
    private readonly options: McpGatewayOptions = {},
  ) {
    if (typeof (runtime as Partial<ToolRuntime>)?.execute !== 'function')
      throw invalidArgument('runtime', 'a ToolRuntime (from @ca/tool-lifecycle)', describeValue(runtime));
    if (options.clients !== undefined && typeof (options.clients as Partial<GatewayClients>)?.attach !== 'function') {
      throw invalidArgument('clients', 'a GatewayClients (from @ca/mcp-server)', describeValue(options.clients));
    }
    const profile = options.profile;
    if (profile !== undefined && typeof profile !== 'function') resolveProfile(profile);
    this.clients = options.clients ?? new GatewayClients();
    this.logger = options.logger ?? silentLogger;
    const maxResultCharacters = positiveInteger(options.maxResultCharacters, 'maxResultCharacters', DEFAULT_MAX_RESULT_CHARACTERS);
    this.modelTools = new ModelTools(runtime, {
      maxResultCharacters,
      ...(options.maxImageBytes === undefined ? {} : { maxImageBytes: options.maxImageBytes }),
      // MCP has no strict mode; a client's call has no id to make a step of; refused tools are kept for the listing to leave out.
      strict: false,
      refused: 'mark',
      callIdAsStep: false,
      ...(options.codeMode === undefined ? {} : { codeMode: options.codeMode }),
    });
    this.settings = {
      runtime,
      modelTools: this.modelTools,
      clients: this.clients,
      outputChecks: this.outputChecks,
      logger: this.logger,
      serverInfo: options.serverInfo ?? { name: 'agents-mcp-gateway', version: packageVersion() },
      maxConcurrentCalls: positiveInteger(options.maxConcurrentCalls, 'maxConcurrentCalls', DEFAULT_MAX_CONCURRENT_CALLS),
      maxCallsPerSession: positiveInteger(options.maxCallsPerSession, 'maxCallsPerSession', DEFAULT_MAX_CALLS_PER_SESSION),
      maxResultCharacters,
      interactionTimeoutMs: positiveInteger(options.interactionTimeoutMs, 'interactionTimeoutMs', DEFAULT_INTERACTION_TIMEOUT_MS),
      onTrace: options.onTrace,
    };
    this.unsubscribers.push(runtime.onToolsChanged(() => this.scheduleChange()));
    if (options.resourceUpdates !== undefined) {
      this.unsubscribers.push(
        options.resourceUpdates.onResourceUpdated((update) => {
          for (const session of this.sessions) if (update.planId === undefined || session.planId === update.planId) session.resourceUpdated(update.uri);
        }),
      );
    }
  }

  /** How many sessions are open. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /**
   * Serves one client session on `transport` (a `StdioServerTransport`, a
   * `StreamableHTTPServerTransport`, an in-memory pair): its profile is
   * chosen, its plan starts when the client has initialized.
   * @throws McpGatewayError when the gateway is closing or the profile is not valid.
   */
  async connect(transport: Transport, info: McpSessionInfo = { transport: 'custom' }): Promise<McpGatewaySession> {
    if (this.stopping !== undefined) throw new McpGatewayError({ problem: { kind: 'session-ended', reason: 'the gateway is closing' } });
    const chosen = typeof this.options.profile === 'function' ? await this.options.profile(info) : this.options.profile;
    const profile = resolveProfile(chosen);
    const catalog = await this.runtime.listTools();
    let resolveEnded!: () => void;
    const ended = new Promise<void>((resolve) => (resolveEnded = resolve));
    const session = new GatewaySession(
      info,
      profile,
      {
        ...this.settings,
        onEnd: (ending, report) => {
          this.sessions.delete(ending);
          this.options.onSessionEnd?.({ session: info, planId: ending.planId, report });
          resolveEnded();
        },
      },
      catalog,
    );
    this.sessions.add(session);
    try {
      await session.connect(transport);
    } catch (error) {
      await session.close('it could not be started');
      throw error;
    }
    return {
      info,
      get planId() {
        return session.planId;
      },
      get clientName() {
        return session.clientName;
      },
      ended,
      offer: session.offer,
      close: (reason = 'the server closed it') => session.close(reason),
    };
  }

  /** The name of the tool that runs a program, when the gateway offers code mode (`codeMode`): `code.run` unless it names another. */
  get programToolName(): string | undefined {
    const codeMode = this.options.codeMode;
    if (codeMode === undefined || codeMode === false) return undefined;
    return codeMode === true ? 'code.run' : (codeMode.toolName ?? 'code.run');
  }

  /** @internal Shares approvals given for a session's plan between the replicas that serve it (see `GatewayClients.shareApprovals`). */
  shareApprovals(shared: SessionApprovals | undefined): void {
    this.clients.shareApprovals(shared);
  }

  /** Ends every session (each plan ended, its tools deactivated once) and stops listening to the runtime. Idempotent. */
  close(reason = 'the gateway stopped'): Promise<void> {
    this.stopping ??= (async () => {
      clearTimeout(this.changeTimer);
      for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
      await Promise.all([...this.sessions].map((session) => session.close(reason)));
    })();
    return this.stopping;
  }

  private scheduleChange(): void {
    if (this.changeTimer !== undefined || this.stopping !== undefined) return;
    this.changeTimer = setTimeout(() => {
      this.changeTimer = undefined;
      for (const session of this.sessions) void session.catalogChanged();
    }, CHANGE_SETTLE_MS);
    this.changeTimer.unref();
  }
}
