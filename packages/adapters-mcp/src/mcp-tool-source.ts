import { messageOf, normalizeCapability, type ToolCapabilityInput } from '@ca/domain';
import type { ToolExecutionContext } from '@ca/tool-context';
import {
  closestNames,
  createConsoleLogger,
  ToolNotFoundError,
  type InteractionHandler,
  type RuntimeLogger,
  type SamplingHandler,
  type ToolDescriptor,
  type ToolInstance,
  type ToolSource,
  type UnavailableTool,
} from '@ca/tool-lifecycle';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Prompt, Resource, Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import type { SamplingGate } from './client-requests';
import type { McpAdapterSettings } from './mcp-adapter-settings';
import { loadMcpConfig, parseMcpConfig, type McpServerScope, type ParsedMcpConfig, type ParsedMcpServer } from './mcp-config';
import { McpConfigError } from './mcp-config-error';
import { credentialsKey, DEFAULT_AUTHORIZATION_TIMEOUT_MS, MemoryTokenStore, type McpTokenStore } from './mcp-oauth';
import { McpOperationTool, OPERATION_NAMES, operationDescriptors } from './mcp-operations';
import { McpServerError } from './mcp-server-error';
import { readCachedToolList, toolListKey, type McpToolListCache, type McpToolListing } from './mcp-tool-list-cache';
import { McpSession, type SessionEvents } from './mcp-session';
import { McpTool, type McpSessionProvider } from './mcp-tool';
import type { McpSpawn } from './process-stdio-transport';
import { SessionPool, type SessionRequest } from './session-pool';
import { mapToolNames, matchesAnyGlob } from './tool-names';
import { warnOnce } from './warn-once';

const DEFAULT_MAX_TOOL_PAGES = 100;
const DEFAULT_MAX_SAMPLING_REQUESTS_PER_PLAN = 10;
const MAX_TIMER_MS = 2_147_483_647;
const DEFAULT_TOOL_LIST_TTL_MS = 86_400_000;

interface ServerCatalog {
  readonly tools: ReadonlyMap<string, ToolInstance>;
  readonly descriptors: readonly ToolDescriptor[];
  readonly unavailable: readonly UnavailableTool[];
  /** Serialised lists, to tell a real change from a repeated `list_changed`. */
  readonly signature: string;
}

/** What one listing of a server found. */
type ServerListing = McpToolListing;

interface ServerState {
  readonly config: ParsedMcpServer;
  readonly pool: SessionPool;
  catalog: ServerCatalog | undefined;
  discovering: Promise<ServerCatalog> | undefined;
  failure: UnavailableTool | undefined;
  refreshing: Promise<void> | undefined;
  refreshAgain: boolean;
  /** The catalog came from the tool-list cache and no session has listed the server since. */
  fromCache: boolean;
}

/** A resource a server said changed, on a session subscribed to it. */
export interface McpResourceUpdate {
  /** The configured server. */
  readonly server: string;
  /** The resource's URI. */
  readonly uri: string;
  /** The plan whose session received it (scope `plan`), or that subscribed to it (scope `shared`), when known. */
  readonly planId?: string;
}

/**
 * The tools of the MCP servers of one configuration, as a `ToolSource` of
 * kind `mcp`. Names are `mcp.<server>.<tool>`, plus the resource and prompt
 * operations of servers that offer them (`mcp.<server>.resources.read`, …);
 * see the package README for the lifecycle, the capability mapping and the
 * errors.
 */
export class McpToolSource implements ToolSource, McpSessionProvider {
  /** Always `'mcp'`. */
  readonly kind = 'mcp' as const;
  /** Servers' schemas are untrusted input: their patterns run on the linear-time engine. */
  readonly schemaTrust = 'untrusted' as const;
  /** `mcp:<server names>` or `mcp:<file path>`, unless set in the settings. */
  readonly id: string;
  /** @internal The service's interaction handler, if any (elicitation, OAuth sign-in). */
  readonly interactionHandler: InteractionHandler | undefined;
  readonly #logger: RuntimeLogger;
  readonly #spawn: McpSpawn | undefined;
  readonly #fetch: FetchLike | undefined;
  readonly #maxToolPages: number;
  readonly #discoverySessionReuseMs: number;
  readonly #promptShutdown: boolean;
  readonly #sampling: SamplingGate | undefined;
  readonly #samplingCounts = new Map<string, number>();
  readonly #planReferences = new Map<string, number>();
  readonly #tokenStore: McpTokenStore;
  readonly #authorizationTimeoutMs: number;
  readonly #listeners = new Set<() => void>();
  readonly #resourceListeners = new Set<(update: McpResourceUpdate) => void>();
  readonly #loadPath: string | undefined;
  readonly #toolListCache: McpToolListCache | undefined;
  readonly #toolListTtlMs: number;
  readonly #defaultScope: McpServerScope;
  #config: ParsedMcpConfig | undefined;
  #loading: Promise<ParsedMcpConfig> | undefined;
  #servers: Map<string, ServerState> | undefined;
  #disposed = false;

  /**
   * @param settings - See {@link McpAdapterSettings}.
   * @throws {McpConfigError} When `servers` is an object and not a valid configuration.
   * @throws {TypeError} For a setting of the wrong type or range.
   */
  constructor(settings: McpAdapterSettings) {
    this.#logger = settings.logger ?? createConsoleLogger();
    this.#spawn = settings.spawn;
    this.#fetch = settings.fetch;
    this.#maxToolPages = positiveInteger(settings.maxToolPages, DEFAULT_MAX_TOOL_PAGES, 'maxToolPages');
    const reuseMs = settings.discoverySessionReuseMs ?? 0;
    if (!Number.isInteger(reuseMs) || reuseMs < 0 || reuseMs > MAX_TIMER_MS) {
      throw new TypeError(
        `discoverySessionReuseMs must be a whole number of milliseconds from 0 to ${MAX_TIMER_MS}; got ${String(settings.discoverySessionReuseMs)}.`,
      );
    }
    this.#discoverySessionReuseMs = reuseMs;
    if (settings.shutdown !== undefined && settings.shutdown !== 'graceful' && settings.shutdown !== 'prompt') {
      throw new TypeError(`shutdown must be 'graceful' or 'prompt'; got ${String(settings.shutdown)}.`);
    }
    this.#promptShutdown = settings.shutdown === 'prompt';
    this.interactionHandler = checkHandler(settings.interactionHandler, 'interact', 'interactionHandler');
    const samplingHandler: SamplingHandler | undefined = checkHandler(settings.samplingHandler, 'createMessage', 'samplingHandler');
    const maxSampling = positiveInteger(settings.maxSamplingRequestsPerPlan, DEFAULT_MAX_SAMPLING_REQUESTS_PER_PLAN, 'maxSamplingRequestsPerPlan');
    this.#sampling =
      samplingHandler === undefined
        ? undefined
        : {
            handler: samplingHandler,
            maxRequestsPerPlan: maxSampling,
            take: (planId) => {
              const used = this.#samplingCounts.get(planId) ?? 0;
              if (used >= maxSampling) return false;
              this.#samplingCounts.set(planId, used + 1);
              return true;
            },
          };
    this.#tokenStore = settings.tokenStore ?? new MemoryTokenStore();
    this.#authorizationTimeoutMs = positiveInteger(settings.authorizationTimeoutMs, DEFAULT_AUTHORIZATION_TIMEOUT_MS, 'authorizationTimeoutMs');
    const cache = settings.toolListCache;
    if (cache !== undefined && (typeof cache?.load !== 'function' || typeof cache.save !== 'function')) {
      throw new TypeError(`toolListCache must be an object with load(key) and save(key, entry); got ${String(cache)}.`);
    }
    this.#toolListCache = cache;
    this.#toolListTtlMs = positiveInteger(settings.toolListTtlMs, DEFAULT_TOOL_LIST_TTL_MS, 'toolListTtlMs');
    const defaultScope = settings.defaultScope ?? 'plan';
    if (defaultScope !== 'plan' && defaultScope !== 'shared')
      throw new TypeError(`defaultScope must be 'plan' or 'shared'; got ${String(settings.defaultScope)}.`);
    this.#defaultScope = defaultScope;
    if (typeof settings.servers === 'string') {
      this.id = settings.id ?? `mcp:${settings.servers}`;
      this.#loadPath = settings.servers;
    } else {
      this.#loadPath = undefined;
      this.#config = parseMcpConfig(settings.servers, { defaultScope });
      this.id = settings.id ?? `mcp:${this.#config.servers.map((server) => server.name).join(',')}`;
    }
  }

  /**
   * Lists the tools of every server (cached; refreshed after a
   * `list_changed`). A plan-scoped server is started for a short discovery
   * session and stopped again; a shared one keeps its session. The schemas
   * are not compiled here: the runtime compiles each once, when it registers
   * the tool.
   *
   * A server that fails is reported by {@link McpToolSource.unavailable} and
   * logged, and the others' tools are still listed.
   *
   * @throws {McpServerError} When every configured server failed (the first
   *   server's error), or {@link McpConfigError} for an invalid config file.
   */
  async discover(signal?: AbortSignal): Promise<readonly ToolDescriptor[]> {
    const servers = await this.#states();
    const results = await Promise.allSettled([...servers.values()].map((state) => this.#discoverServer(state, signal)));
    const descriptors: ToolDescriptor[] = [];
    const failures: unknown[] = [];
    for (const result of results) {
      if (result.status === 'fulfilled') descriptors.push(...result.value.descriptors);
      else failures.push(result.reason);
    }
    if (failures.length > 0 && failures.length === results.length) throw failures[0];
    return descriptors;
  }

  /**
   * The tool named `name` (`mcp.<server>.<tool>`), discovering its server first if needed.
   *
   * @throws {ToolNotFoundError} When no configured server offers it.
   * @throws {McpServerError} When its server cannot be listed.
   */
  async get(name: string): Promise<ToolInstance> {
    const servers = await this.#states();
    const serverName = typeof name === 'string' && name.startsWith('mcp.') ? name.slice(4, name.indexOf('.', 4)) : undefined;
    const state = serverName === undefined ? undefined : servers.get(serverName);
    const tool = state === undefined ? undefined : (await this.#discoverServer(state)).tools.get(name);
    if (tool === undefined) {
      const known = [...servers.values()].flatMap((server) => [...(server.catalog?.tools.keys() ?? [])]);
      throw new ToolNotFoundError({ toolName: String(name), sourceId: this.id, suggestions: closestNames(String(name), known) });
    }
    return tool;
  }

  /**
   * The pin scope of a tool: `mcp:<server>` for `mcp.<server>.<tool>` (and
   * for `mcp.<server>`), whatever other servers the source holds, so a lock
   * made with every server checks a command that starts one (and adding a
   * server to the configuration leaves the others' pins as they are).
   * Another name gets the source's id.
   */
  pinScope(toolName: string): string {
    const server = serverOf(toolName);
    return server === undefined ? this.id : `mcp:${server}`;
  }

  /**
   * The definition of a tool as its server lists it now, before the first
   * call of a pinned tool: when the server's tools came from the tool-list
   * cache and no session has listed it since, it is listed live now (a
   * listing in the background is waited for), the catalog replaced (and the
   * listeners told) when it changed; otherwise what the source holds.
   * `undefined` when the server does not offer the tool (any more).
   *
   * @throws {McpServerError} When the server cannot be listed.
   */
  async confirm(toolName: string, signal?: AbortSignal): Promise<ToolDescriptor | undefined> {
    const servers = await this.#states();
    const server = serverOf(toolName);
    const state = server === undefined ? undefined : servers.get(server);
    if (state === undefined) return undefined;
    if (state.fromCache && state.refreshing !== undefined) await state.refreshing.catch(() => undefined);
    if (state.fromCache) {
      this.#checkNotDisposed(state.config.name);
      const listing = await state.pool.withListingSession(signal, (session) => this.#list(session, signal));
      this.#replaceListing(state, listing);
      await this.#saveListing(state, listing);
    }
    const catalog = state.catalog ?? (await this.#discoverServer(state, signal));
    return catalog.descriptors.find((descriptor) => descriptor.name === toolName);
  }

  /**
   * Tools the servers listed but that cannot be offered (a task-only tool
   * of a server that runs no tasks, a duplicate), and servers that could not
   * be listed (named `mcp.<server>`), each with the reason.
   */
  unavailable(): readonly UnavailableTool[] {
    const result: UnavailableTool[] = [];
    for (const state of this.#servers?.values() ?? []) {
      if (state.failure !== undefined) result.push(state.failure);
      if (state.catalog !== undefined) result.push(...state.catalog.unavailable);
    }
    return result;
  }

  /**
   * Calls `listener` when what a server offers really changed (after a
   * `notifications/{tools,resources,prompts}/list_changed`, the lists are
   * fetched again on the same session and compared).
   *
   * @returns A function that unsubscribes.
   */
  onToolsChanged(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /**
   * Calls `listener` for every `notifications/resources/updated` a server
   * sends (for a resource a plan subscribed to with `mcp.<server>.resources.subscribe`).
   *
   * @returns A function that unsubscribes.
   * @throws {TypeError} When `listener` is not a function.
   */
  onResourceUpdated(listener: (update: McpResourceUpdate) => void): () => void {
    if (typeof listener !== 'function') throw new TypeError(`onResourceUpdated needs a function (update) => void; got ${typeof listener}.`);
    this.#resourceListeners.add(listener);
    return () => {
      this.#resourceListeners.delete(listener);
    };
  }

  /**
   * Signs in to a server that uses OAuth, now: opens a session (taking a
   * person to the sign-in page through the interaction handler when the
   * server wants one), keeps the tokens in the token store, and closes it.
   *
   * @throws {McpServerError} `MCP_AUTH_REQUIRED` / `MCP_AUTH_FAILED`, or
   *   `MCP_SERVER_START_FAILED` when the server cannot be reached.
   * @throws {McpConfigError} When `server` is not a configured server with `oauth`.
   */
  async authorize(server: string, signal?: AbortSignal): Promise<void> {
    const state = await this.#oauthServer(server);
    const session = await this.#open(state, { purpose: 'sign-in', ...(signal === undefined ? {} : { signal }) });
    await session.close();
  }

  /**
   * Forgets what the token store keeps for a server that uses OAuth (its
   * tokens and registered client): the next session signs in again.
   *
   * @throws {McpConfigError} When `server` is not a configured server with `oauth`.
   */
  async forgetAuthorization(server: string): Promise<void> {
    const state = await this.#oauthServer(server);
    await this.#tokenStore.delete(credentialsKey(state.config));
  }

  /** Closes every session: shared ones and those of plans not yet ended. Idempotent. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    this.#listeners.clear();
    this.#resourceListeners.clear();
    await Promise.all([...(this.#servers?.values() ?? [])].map((state) => state.pool.dispose()));
  }

  /** @internal Opens the server's session for the plan, or leases the shared one. */
  async acquire(server: string, ctx: ToolExecutionContext): Promise<void> {
    const state = this.#stateOf(server);
    this.#checkNotDisposed(state.config.name);
    await state.pool.acquire(ctx);
    this.#planReferences.set(ctx.planId, (this.#planReferences.get(ctx.planId) ?? 0) + 1);
  }

  /** @internal Releases what {@link McpToolSource.acquire} took; closes a plan's session with its last tool. */
  async release(server: string, ctx: ToolExecutionContext): Promise<void> {
    const references = (this.#planReferences.get(ctx.planId) ?? 1) - 1;
    if (references > 0) this.#planReferences.set(ctx.planId, references);
    else {
      this.#planReferences.delete(ctx.planId);
      this.#samplingCounts.delete(ctx.planId);
    }
    await this.#stateOf(server).pool.release(ctx);
  }

  /** @internal A live session for a plan whose session with a shared `server` ended; undefined for scope `plan`. */
  replacementFor(server: string, planId: string): Promise<McpSession | undefined> {
    return this.#servers?.get(server)?.pool.replacementFor(planId) ?? Promise.resolve(undefined);
  }

  /** @internal The open session a plan uses for `server`, if activated. */
  sessionFor(server: string, planId: string): McpSession | undefined {
    return this.#servers?.get(server)?.pool.sessionFor(planId);
  }

  /**
   * How many plans currently lease the shared session of `server` (0 for a
   * plan-scoped server or before first use). For monitoring and tests.
   */
  sharedLeases(server: string): number {
    return this.#servers?.get(server)?.pool.sharedLeases ?? 0;
  }

  /**
   * How many sessions of the pool of `server` are open or opening (scope
   * `shared`; 0 for a plan-scoped server or before first use). For
   * monitoring and tests.
   */
  pooledSessions(server: string): number {
    return this.#servers?.get(server)?.pool.pooledSessions ?? 0;
  }

  /** How many plans currently hold a session with `server` (plan scope). For monitoring and tests. */
  openPlanSessions(server: string): number {
    return this.#servers?.get(server)?.pool.openPlanSessions ?? 0;
  }

  // ---------------------------------------------------------------------------

  async #states(): Promise<Map<string, ServerState>> {
    if (this.#servers !== undefined) return this.#servers;
    if (this.#config === undefined) {
      this.#loading ??= loadMcpConfig(this.#loadPath as string, { defaultScope: this.#defaultScope }).finally(() => {
        this.#loading = undefined;
      });
      this.#config = await this.#loading;
    }
    this.#servers ??= new Map(this.#config.servers.map((config) => [config.name, this.#newState(config)]));
    return this.#servers;
  }

  #newState(config: ParsedMcpServer): ServerState {
    const state: ServerState = {
      config,
      pool: new SessionPool({
        server: config,
        open: (request) => this.#open(state, request),
        logger: this.#logger,
        discoverySessionReuseMs: this.#discoverySessionReuseMs,
        isDisposed: () => this.#disposed,
      }),
      catalog: undefined,
      discovering: undefined,
      failure: undefined,
      refreshing: undefined,
      refreshAgain: false,
      fromCache: false,
    };
    return state;
  }

  #stateOf(server: string): ServerState {
    const state = this.#servers?.get(server);
    if (state === undefined) throw new Error(`MCP source '${this.id}' has no server '${server}' (internal error).`);
    return state;
  }

  async #oauthServer(server: string): Promise<ServerState> {
    const servers = await this.#states();
    const state = servers.get(server);
    if (state === undefined || state.config.oauth === undefined) {
      const configured = [...servers.values()].filter((item) => item.config.oauth !== undefined).map((item) => item.config.name);
      throw new McpConfigError({
        source: this.#config?.source ?? 'settings',
        server,
        message:
          state === undefined
            ? `No MCP server '${server}' is configured${configured.length > 0 ? `; servers that use OAuth: ${configured.join(', ')}` : ''}.`
            : `MCP server '${server}' does not use OAuth: add "oauth" to its entry (Streamable HTTP servers only).`,
      });
    }
    this.#checkNotDisposed(server);
    return state;
  }

  #checkNotDisposed(server: string): void {
    if (this.#disposed) {
      throw new McpServerError({
        code: 'MCP_SOURCE_DISPOSED',
        server,
        message: `MCP source '${this.id}' was disposed; create a new adapter (and runtime) to use server '${server}' again.`,
      });
    }
  }

  #discoverServer(state: ServerState, signal?: AbortSignal): Promise<ServerCatalog> {
    if (state.catalog !== undefined) return Promise.resolve(state.catalog);
    state.discovering ??= this.#listServer(state, signal).then(
      (catalog) => {
        state.discovering = undefined;
        state.catalog = catalog;
        state.failure = undefined;
        return catalog;
      },
      (error: unknown) => {
        state.discovering = undefined;
        const reason = messageOf(error);
        state.failure = {
          name: `mcp.${state.config.name}`,
          source: 'mcp',
          reason,
          ...(error instanceof Error ? { error: error as Error & { code?: string } } : {}),
        };
        this.#logger.error(reason, { server: state.config.name, sourceId: this.id });
        throw error;
      },
    );
    return state.discovering;
  }

  async #listServer(state: ServerState, signal?: AbortSignal): Promise<ServerCatalog> {
    this.#checkNotDisposed(state.config.name);
    const cached = await this.#cachedListing(state);
    if (cached !== undefined) {
      this.#checkCapabilityKeys(state.config, cached.tools, true);
      state.fromCache = true;
      return this.#catalogOf(state, cached);
    }
    const listing = await state.pool.withListingSession(signal, (session) => this.#list(session, signal));
    this.#checkCapabilityKeys(state.config, listing.tools, true);
    state.fromCache = false;
    await this.#saveListing(state, listing);
    return this.#catalogOf(state, listing);
  }

  /** The server's list from the tool-list cache, when there is one younger than the TTL. */
  async #cachedListing(state: ServerState): Promise<ServerListing | undefined> {
    if (this.#toolListCache === undefined) return undefined;
    let entry: unknown;
    try {
      entry = await this.#toolListCache.load(this.#cacheKey(state));
    } catch (error) {
      this.#logger.warn(`The cached tool list of MCP server '${state.config.name}' could not be read (the server is listed instead): ${messageOf(error)}`, {
        server: state.config.name,
      });
      return undefined;
    }
    const cached = entry === undefined ? undefined : readCachedToolList(entry);
    if (cached === undefined) return undefined;
    const age = Date.now() - Date.parse(cached.savedAt);
    if (!(age >= 0 && age < this.#toolListTtlMs)) return undefined;
    this.#logger.debug(`MCP server '${state.config.name}': ${cached.listing.tools.length} tools from the tool-list cache (listed ${cached.savedAt}).`, {
      server: state.config.name,
    });
    return cached.listing;
  }

  async #saveListing(state: ServerState, listing: ServerListing): Promise<void> {
    if (this.#toolListCache === undefined) return;
    try {
      await this.#toolListCache.save(this.#cacheKey(state), { server: state.config.name, savedAt: new Date().toISOString(), listing });
    } catch (error) {
      this.#logger.warn(`The tool list of MCP server '${state.config.name}' could not be cached: ${messageOf(error)}`, { server: state.config.name });
    }
  }

  #cacheKey(state: ServerState): string {
    return toolListKey(state.config, { elicitation: this.interactionHandler !== undefined, sampling: this.#sampling !== undefined });
  }

  /** Everything the server offers: every tool, and the first page of resources and prompts (for the descriptions). */
  async #list(session: McpSession, signal?: AbortSignal): Promise<ServerListing> {
    const capabilities = session.client.getServerCapabilities() ?? {};
    const firstPage = async <T>(kind: string, list: () => Promise<{ items: readonly T[] }>): Promise<readonly T[] | undefined> => {
      try {
        return (await list()).items;
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        this.#logger.debug(`MCP server '${session.server.name}' could not list its ${kind}: ${messageOf(error)}`, { server: session.server.name });
        return undefined;
      }
    };
    const [tools, knownResources, knownPrompts] = await Promise.all([
      session.listAllTools(this.#maxToolPages, signal),
      capabilities.resources === undefined ? undefined : firstPage<Resource>('resources', () => session.listResources(1, signal)),
      capabilities.prompts === undefined ? undefined : firstPage<Prompt>('prompts', () => session.listPrompts(1, signal)),
    ]);
    return {
      tools,
      offer: {
        resources: capabilities.resources !== undefined,
        subscribe: capabilities.resources?.subscribe === true,
        prompts: capabilities.prompts !== undefined,
        completions: capabilities.completions !== undefined,
        ...(knownResources === undefined ? {} : { knownResources }),
        ...(knownPrompts === undefined ? {} : { knownPrompts }),
      },
      ...(session.serverVersion === undefined ? {} : { serverVersion: session.serverVersion }),
      runsToolTasks: session.serverRunsToolTasks,
    };
  }

  /**
   * A `capabilities` key that names no tool of the server is a mistake in
   * the (trusted) configuration: an override meant to tighten must not
   * vanish through a typo. At discovery it fails the server; when the server
   * later drops the tool, it is a warning.
   */
  #checkCapabilityKeys(config: ParsedMcpServer, tools: readonly McpToolDefinition[], fatal: boolean): void {
    const names = new Set(tools.map((tool) => tool.name));
    for (const key of Object.keys(config.capabilities)) {
      if (names.has(key) || OPERATION_NAMES.has(key)) continue;
      const suggestions = closestNames(key, [...names, ...OPERATION_NAMES]);
      const message = `"capabilities" names '${key}', which MCP server '${config.name}' does not offer${suggestions.length > 0 ? ` (did you mean ${suggestions.map((name) => `'${name}'`).join(', ')}?)` : ''}; fix or remove that key, so that the override applies to the tool it was written for.`;
      if (fatal) {
        throw new McpConfigError({
          source: this.#config?.source ?? 'settings',
          server: config.name,
          key: `capabilities.${key}`,
          message: `Invalid MCP configuration (${this.#config?.source ?? 'settings'}): MCP server '${config.name}', key 'capabilities.${key}': ${message}`,
        });
      }
      warnOnce(this.#logger, `${this.id}\u0000${config.name}\u0000capabilities\u0000${key}`, message, { server: config.name });
    }
  }

  #open(state: ServerState, request: SessionRequest): Promise<McpSession> {
    const events: SessionEvents = {
      onListChanged: (session, list) => this.#onListChanged(state, session, list),
      onResourceUpdated: (session, uri) => this.#onResourceUpdated(state, session, uri),
      onRootsFetched: () => state.pool.noteRootsFetched(),
    };
    const opening = McpSession.open({
      server: state.config,
      logger: this.#logger,
      purpose: request.purpose,
      promptShutdown: this.#promptShutdown,
      events,
      tokenStore: this.#tokenStore,
      authorizationTimeoutMs: this.#authorizationTimeoutMs,
      ...(request.planId === undefined ? {} : { planId: request.planId }),
      ...(request.roots === undefined ? {} : { roots: request.roots }),
      ...(request.signal === undefined ? {} : { signal: request.signal }),
      ...(this.#spawn === undefined ? {} : { spawn: this.#spawn }),
      ...(this.#fetch === undefined ? {} : { fetch: this.#fetch }),
      ...(this.interactionHandler === undefined ? {} : { interaction: this.interactionHandler }),
      ...(this.#sampling === undefined ? {} : { sampling: this.#sampling }),
    });
    if (state.fromCache && request.purpose !== 'sign-in') {
      // Its tools came from the cache: the session the server was started for lists them once more, in the background.
      void opening.then(
        (session) => {
          if (state.fromCache) this.#onListChanged(state, session, 'cached');
        },
        () => undefined,
      );
    }
    return opening;
  }

  #onResourceUpdated(state: ServerState, session: McpSession, uri: string): void {
    // A shared session: one update per plan that subscribed to the URI through it.
    const plans = session.subscribers.get(uri);
    if (plans !== undefined && plans.size > 0) {
      for (const planId of plans) this.#emitResourceUpdate(state, { server: state.config.name, uri, planId });
      return;
    }
    this.#emitResourceUpdate(state, { server: state.config.name, uri, ...(session.planId === undefined ? {} : { planId: session.planId }) });
  }

  #emitResourceUpdate(state: ServerState, update: McpResourceUpdate): void {
    for (const listener of [...this.#resourceListeners]) {
      try {
        listener(update);
      } catch (error) {
        this.#logger.warn(`A resource-updated listener of MCP source '${this.id}' threw: ${messageOf(error)}`, { server: state.config.name });
      }
    }
  }

  /**
   * Lists a server again on an open session, after it said its `list`
   * changed (or, for `'cached'`, when its tools came from the tool-list cache
   * and a session was opened): a real change replaces the catalog and calls
   * the listeners; the list is cached either way.
   */
  #onListChanged(state: ServerState, session: McpSession, list: 'tools' | 'resources' | 'prompts' | 'cached'): void {
    if (this.#disposed) return;
    this.#logger.debug(
      list === 'cached'
        ? `MCP server '${state.config.name}' is listed again: its tools came from the tool-list cache.`
        : `MCP server '${state.config.name}' announced that its ${list} changed.`,
      { server: state.config.name },
    );
    if (state.refreshing !== undefined) {
      state.refreshAgain = true;
      return;
    }
    state.refreshing = (async () => {
      do {
        state.refreshAgain = false;
        let changed: boolean;
        try {
          const listing = await this.#list(session);
          changed = this.#replaceListing(state, listing, false);
          await this.#saveListing(state, listing);
        } catch (error) {
          if (!session.isOpen || this.#disposed) {
            // The session ended while listing (its plan is over): the next session lists again.
            this.#logger.debug(`MCP server '${state.config.name}': listing after a change stopped, the session ended: ${messageOf(error)}`, {
              server: state.config.name,
            });
            return;
          }
          this.#logger.warn(`MCP server '${state.config.name}' changed what it offers, but it could not be listed again: ${messageOf(error)}`, {
            server: state.config.name,
          });
          state.catalog = undefined;
          changed = true;
        }
        if (changed) this.#notifyChanged(state);
      } while (state.refreshAgain && session.isOpen);
    })().finally(() => {
      state.refreshing = undefined;
    });
  }

  /**
   * Takes a live listing of the server: the catalog is replaced when it
   * differs; with `notify` (default), the listeners are told of a change.
   * @returns Whether it changed.
   */
  #replaceListing(state: ServerState, listing: ServerListing, notify = true): boolean {
    this.#checkCapabilityKeys(state.config, listing.tools, false);
    const next = this.#catalogOf(state, listing);
    const changed = state.catalog === undefined || state.catalog.signature !== next.signature;
    if (changed) state.catalog = next;
    state.fromCache = false;
    if (changed && notify) this.#notifyChanged(state);
    return changed;
  }

  #notifyChanged(state: ServerState): void {
    if (this.#disposed) return;
    this.#logger.info(`MCP server '${state.config.name}' changed what it offers.`, { server: state.config.name });
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch (error) {
        this.#logger.warn(`A tools-changed listener of MCP source '${this.id}' threw: ${messageOf(error)}`, {});
      }
    }
  }

  #catalogOf(state: ServerState, listing: ServerListing): ServerCatalog {
    const config = state.config;
    const listed = listing.tools;
    const offered = listed.filter(
      (tool) => typeof tool.name === 'string' && matchesAnyGlob(tool.name, config.include) && !matchesAnyGlob(tool.name, config.exclude),
    );
    const names = mapToolNames(
      config.name,
      offered.map((tool) => tool.name),
      OPERATION_NAMES,
    );
    const tools = new Map<string, ToolInstance>();
    const descriptors: ToolDescriptor[] = [];
    const unavailable: UnavailableTool[] = [];
    const seen = new Set<string>();
    for (const definition of offered) {
      const name = names.get(definition.name) as string;
      const refuse = (reason: string): void => {
        warnOnce(this.#logger, `${this.id}\u0000${name}\u0000${reason}`, `Tool '${name}' of MCP server '${config.name}' is unavailable: ${reason}`, {
          server: config.name,
          toolName: name,
        });
        unavailable.push({ name, source: 'mcp', reason });
      };
      if (seen.has(definition.name)) {
        refuse(`the server listed the MCP tool '${definition.name}' more than once; only the first is offered.`);
        continue;
      }
      seen.add(definition.name);
      if (definition.name.length === 0) {
        refuse('the server listed a tool with an empty name.');
        continue;
      }
      const taskSupport = definition.execution?.taskSupport;
      if (taskSupport === 'required' && !listing.runsToolTasks) {
        refuse(
          `MCP tool '${definition.name}' can only run as a task (execution.taskSupport: "required"), but the server does not declare that it runs tool calls as tasks.`,
        );
        continue;
      }
      const descriptor = this.#describe(config, name, definition, listing.serverVersion);
      descriptors.push(descriptor);
      tools.set(
        name,
        new McpTool({
          descriptor,
          mcpName: definition.name,
          server: config,
          provider: this,
          logger: this.#logger,
          runsAsTask: (taskSupport === 'required' || taskSupport === 'optional') && listing.runsToolTasks,
        }),
      );
    }
    for (const { operation, descriptor } of operationDescriptors(config, listing.offer, listing.serverVersion)) {
      descriptors.push(descriptor);
      tools.set(
        descriptor.name,
        new McpOperationTool({ descriptor, operation, server: config, provider: this, logger: this.#logger, maxPages: this.#maxToolPages }),
      );
    }
    return {
      tools,
      descriptors,
      unavailable,
      signature: JSON.stringify([listed, listing.offer, listing.runsToolTasks]),
    };
  }

  #describe(config: ParsedMcpServer, name: string, definition: McpToolDefinition, serverVersion: string | undefined): ToolDescriptor {
    const hints = definition.annotations ?? {};
    // Annotations are the server's claims: believed only from a server the configuration trusts.
    const derived: ToolCapabilityInput = config.trustAnnotations
      ? {
          writes: hints.readOnlyHint !== true,
          checkpointable: false,
          ...(hints.destructiveHint === undefined ? {} : { destructive: hints.destructiveHint }),
          ...(hints.idempotentHint === undefined ? {} : { idempotent: hints.idempotentHint }),
          ...(hints.openWorldHint === undefined ? {} : { openWorld: hints.openWorldHint }),
        }
      : { writes: true, checkpointable: false, destructive: true, idempotent: false, openWorld: true };
    const override = config.capabilities[definition.name];
    const title = definition.title ?? hints.title;
    return Object.freeze({
      name,
      description: definition.description ?? title ?? '',
      source: 'mcp' as const,
      capability: normalizeCapability({ ...derived, ...override }),
      inputSchema: definition.inputSchema,
      ...(definition.outputSchema === undefined ? {} : { outputSchema: definition.outputSchema }),
      ...(serverVersion === undefined ? {} : { version: serverVersion }),
      annotations: Object.freeze({
        mcpServer: config.name,
        mcpToolName: definition.name,
        ...(title === undefined ? {} : { title }),
        ...(definition.annotations === undefined ? {} : { mcpAnnotations: definition.annotations, mcpAnnotationsTrusted: config.trustAnnotations }),
        ...(definition.execution?.taskSupport === undefined ? {} : { mcpTaskSupport: definition.execution.taskSupport }),
      }),
    });
  }
}

/** The server of `mcp.<server>.<tool>` or `mcp.<server>` (server names hold no dot). */
function serverOf(toolName: string): string | undefined {
  if (typeof toolName !== 'string' || !toolName.startsWith('mcp.')) return undefined;
  const end = toolName.indexOf('.', 4);
  const server = end === -1 ? toolName.slice(4) : toolName.slice(4, end);
  return server.length === 0 ? undefined : server;
}

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  const result = value ?? fallback;
  if (!Number.isInteger(result) || result < 1 || result > MAX_TIMER_MS) throw new TypeError(`${name} must be a positive whole number; got ${String(value)}.`);
  return result;
}

function checkHandler<T>(handler: T | undefined, method: string, name: string): T | undefined {
  if (handler === undefined) return undefined;
  if (typeof (handler as Record<string, unknown> | null)?.[method] !== 'function')
    throw new TypeError(`${name} must be an object with a ${method}() method; got ${String(handler)}.`);
  return handler;
}
