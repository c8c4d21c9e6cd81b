import { normalizeCapability, type ToolCapabilityInput } from '@ca/domain';
import { createSchemaValidator, SchemaCompileError, type SchemaValidator } from '@ca/schema';
import type { ToolExecutionContext } from '@ca/tool-context';
import {
  closestNames,
  createConsoleLogger,
  ToolNotFoundError,
  type RuntimeLogger,
  type ToolDescriptor,
  type ToolSource,
  type UnavailableTool,
} from '@ca/tool-lifecycle';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import { linkToken } from './cancellation-link';
import type { McpAdapterSettings } from './mcp-adapter-settings';
import { loadMcpConfig, messageOf, parseMcpConfig, type ParsedMcpConfig, type ParsedMcpServer } from './mcp-config';
import { McpServerError } from './mcp-server-error';
import { McpSession } from './mcp-session';
import { McpTool, type McpSessionProvider } from './mcp-tool';
import type { McpSpawn } from './process-stdio-transport';
import { mapToolNames, matchesAnyGlob } from './tool-names';

const DEFAULT_MAX_TOOL_PAGES = 100;
const MAX_TIMER_MS = 2_147_483_647;

interface ServerCatalog {
  readonly tools: ReadonlyMap<string, McpTool>;
  readonly descriptors: readonly ToolDescriptor[];
  readonly unavailable: readonly UnavailableTool[];
  /** Serialised tool list, to tell a real change from a repeated `list_changed`. */
  readonly signature: string;
}

interface PlanSession {
  readonly opening: Promise<McpSession>;
  session: McpSession | undefined;
  references: number;
}

interface SharedSession {
  readonly opening: Promise<McpSession>;
  session: McpSession | undefined;
  leases: number;
}

/** A discovery session kept for the first plan of its server (see `discoverySessionReuseMs`). */
interface ParkedSession {
  readonly session: McpSession;
  readonly timer: ReturnType<typeof setTimeout>;
}

interface ServerState {
  readonly config: ParsedMcpServer;
  parked: ParkedSession | undefined;
  catalog: ServerCatalog | undefined;
  discovering: Promise<ServerCatalog> | undefined;
  failure: UnavailableTool | undefined;
  shared: SharedSession | undefined;
  readonly plans: Map<string, PlanSession>;
  refreshing: Promise<void> | undefined;
  refreshAgain: boolean;
}

/**
 * The tools of the MCP servers of one configuration, as a `ToolSource` of
 * kind `mcp`. Names are `mcp.<server>.<tool>`; see the package README for
 * the lifecycle, the capability mapping and the errors.
 */
export class McpToolSource implements ToolSource, McpSessionProvider {
  /** Always `'mcp'`. */
  readonly kind = 'mcp' as const;
  /** Servers' schemas are untrusted input: their patterns run on the linear-time engine. */
  readonly schemaTrust = 'untrusted' as const;
  /** `mcp:<server names>` or `mcp:<file path>`, unless set in the settings. */
  readonly id: string;
  readonly #logger: RuntimeLogger;
  readonly #validator: SchemaValidator;
  readonly #spawn: McpSpawn | undefined;
  readonly #fetch: FetchLike | undefined;
  readonly #maxToolPages: number;
  readonly #discoverySessionReuseMs: number;
  readonly #promptShutdown: boolean;
  readonly #listeners = new Set<() => void>();
  readonly #loadPath: string | undefined;
  #config: ParsedMcpConfig | undefined;
  #loading: Promise<ParsedMcpConfig> | undefined;
  #servers: Map<string, ServerState> | undefined;
  readonly #discoverySessions = new Set<McpSession>();
  #disposed = false;

  /**
   * @param settings - See {@link McpAdapterSettings}.
   * @throws {McpConfigError} When `servers` is an object and not a valid configuration.
   */
  constructor(settings: McpAdapterSettings) {
    this.#logger = settings.logger ?? createConsoleLogger();
    this.#validator = settings.schemaValidator ?? createSchemaValidator();
    this.#spawn = settings.spawn;
    this.#fetch = settings.fetch;
    const maxToolPages = settings.maxToolPages ?? DEFAULT_MAX_TOOL_PAGES;
    if (!Number.isInteger(maxToolPages) || maxToolPages < 1) {
      throw new TypeError(`maxToolPages must be a positive integer; got ${String(settings.maxToolPages)}.`);
    }
    this.#maxToolPages = maxToolPages;
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
    if (typeof settings.servers === 'string') {
      this.id = settings.id ?? `mcp:${settings.servers}`;
      this.#loadPath = settings.servers;
    } else {
      this.#loadPath = undefined;
      this.#config = parseMcpConfig(settings.servers);
      this.id = settings.id ?? `mcp:${this.#config.servers.map((server) => server.name).join(',')}`;
    }
  }

  /**
   * Lists the tools of every server (cached; refreshed after a
   * `list_changed`). A plan-scoped server is started for a short discovery
   * session and stopped again; a shared one keeps its session.
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
  async get(name: string): Promise<McpTool> {
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
   * Tools the servers listed but that cannot be offered (a schema that does
   * not compile, a task-only tool), and servers that could not be listed
   * (named `mcp.<server>`), each with the reason.
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
   * Calls `listener` when a server's tool list really changed (after a
   * `notifications/tools/list_changed`, the list is fetched again on the same
   * session and compared).
   *
   * @returns A function that unsubscribes.
   */
  onToolsChanged(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Closes every session: shared ones and those of plans not yet ended. Idempotent. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    this.#listeners.clear();
    const closing: Promise<void>[] = [];
    for (const session of this.#discoverySessions) closing.push(session.close());
    for (const state of this.#servers?.values() ?? []) {
      const parked = this.#takeParked(state);
      if (parked !== undefined) closing.push(parked.close());
      const shared = state.shared;
      state.shared = undefined;
      if (shared !== undefined) closing.push(shared.opening.then((session) => session.close(), () => undefined));
      for (const entry of state.plans.values()) closing.push(entry.opening.then((session) => session.close(), () => undefined));
      state.plans.clear();
    }
    await Promise.all(closing);
  }

  /** @internal Opens the server's session for the plan, or leases the shared one. */
  async acquire(server: string, ctx: ToolExecutionContext): Promise<void> {
    const state = this.#stateOf(server);
    this.#checkNotDisposed(state.config.name);
    if (state.config.scope === 'shared') {
      const shared = this.#sharedOf(state);
      shared.leases++;
      try {
        await shared.opening;
      } catch (error) {
        shared.leases--;
        throw error;
      }
      return;
    }
    let entry = state.plans.get(ctx.planId);
    if (entry === undefined) {
      const parked = this.#takeParked(state);
      let opening: Promise<McpSession>;
      if (parked !== undefined) {
        this.#logger.debug(`MCP server '${state.config.name}': plan '${ctx.planId}' takes over the discovery session.`, { server: state.config.name });
        opening = Promise.resolve(parked);
      } else {
        const link = linkToken(ctx.cancellationToken, { planId: ctx.planId });
        opening = this.#open(state, `plan '${ctx.planId}'`, link.signal).finally(link.release);
      }
      const created: PlanSession = { opening, session: undefined, references: 0 };
      opening.then(
        (session) => (created.session = session),
        () => {
          if (state.plans.get(ctx.planId) === created) state.plans.delete(ctx.planId);
        },
      );
      state.plans.set(ctx.planId, created);
      entry = created;
    }
    entry.references++;
    try {
      await entry.opening;
    } catch (error) {
      entry.references--;
      throw error;
    }
  }

  /** @internal Releases what {@link McpToolSource.acquire} took; closes a plan's session with its last tool. */
  async release(server: string, ctx: ToolExecutionContext): Promise<void> {
    const state = this.#stateOf(server);
    if (state.config.scope === 'shared') {
      if (state.shared !== undefined && state.shared.leases > 0) state.shared.leases--;
      return;
    }
    const entry = state.plans.get(ctx.planId);
    if (entry === undefined) return;
    entry.references--;
    if (entry.references > 0) return;
    state.plans.delete(ctx.planId);
    const session = await entry.opening.catch(() => undefined);
    await session?.close();
  }

  /** @internal The open session a plan uses for `server`, if activated. */
  sessionFor(server: string, planId: string): McpSession | undefined {
    const state = this.#servers?.get(server);
    if (state === undefined) return undefined;
    if (state.config.scope === 'shared') return state.shared?.session;
    return state.plans.get(planId)?.session;
  }

  /**
   * How many plans currently lease the shared session of `server` (0 for a
   * plan-scoped server or before first use). For monitoring and tests.
   */
  sharedLeases(server: string): number {
    return this.#servers?.get(server)?.shared?.leases ?? 0;
  }

  /** How many plans currently hold a session with `server` (plan scope). For monitoring and tests. */
  openPlanSessions(server: string): number {
    return this.#servers?.get(server)?.plans.size ?? 0;
  }

  // ---------------------------------------------------------------------------

  async #states(): Promise<Map<string, ServerState>> {
    if (this.#servers !== undefined) return this.#servers;
    if (this.#config === undefined) {
      this.#loading ??= loadMcpConfig(this.#loadPath as string).finally(() => {
        this.#loading = undefined;
      });
      this.#config = await this.#loading;
    }
    this.#servers ??= new Map(
      this.#config.servers.map((config) => [
        config.name,
        {
          config,
          parked: undefined,
          catalog: undefined,
          discovering: undefined,
          failure: undefined,
          shared: undefined,
          plans: new Map(),
          refreshing: undefined,
          refreshAgain: false,
        },
      ]),
    );
    return this.#servers;
  }

  #stateOf(server: string): ServerState {
    const state = this.#servers?.get(server);
    if (state === undefined) throw new Error(`MCP source '${this.id}' has no server '${server}' (internal error).`);
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
    if (state.config.scope === 'shared') {
      const session = await this.#sharedOf(state).opening;
      return this.#catalogOf(state, await session.listAllTools(this.#maxToolPages, signal), session.serverVersion);
    }
    const session = await this.#open(state, 'discovery', signal);
    this.#discoverySessions.add(session);
    let keep = false;
    try {
      const catalog = this.#catalogOf(state, await session.listAllTools(this.#maxToolPages, signal), session.serverVersion);
      keep = this.#discoverySessionReuseMs > 0 && !this.#disposed && session.isOpen;
      return catalog;
    } finally {
      this.#discoverySessions.delete(session);
      if (keep) this.#park(state, session);
      else await session.close();
    }
  }

  /** Keeps a discovery session for the first plan of its server, for at most `discoverySessionReuseMs`. */
  #park(state: ServerState, session: McpSession): void {
    void this.#takeParked(state)?.close();
    const timer = setTimeout(() => {
      if (state.parked?.session !== session) return;
      state.parked = undefined;
      void session.close();
    }, this.#discoverySessionReuseMs);
    // The server's pipes keep the process alive while the session is open; the timer need not.
    timer.unref?.();
    state.parked = { session, timer };
  }

  /** Removes the parked session of `state` and returns it when it is still open (closing it otherwise). */
  #takeParked(state: ServerState): McpSession | undefined {
    const parked = state.parked;
    if (parked === undefined) return undefined;
    state.parked = undefined;
    clearTimeout(parked.timer);
    if (parked.session.isOpen) return parked.session;
    void parked.session.close();
    return undefined;
  }

  /** The shared session of `state`, opening (or reopening, when it died) it as needed. */
  #sharedOf(state: ServerState): SharedSession {
    const current = state.shared;
    if (current !== undefined && (current.session === undefined || current.session.isOpen)) return current;
    if (current?.session !== undefined) {
      this.#logger.warn(`The shared session with MCP server '${state.config.name}' had ended; opening a new one.`, { server: state.config.name });
      void current.session.close();
    }
    return this.#openShared(state, current?.leases ?? 0);
  }

  #openShared(state: ServerState, leases: number): SharedSession {
    const opening = this.#open(state, 'shared');
    const shared: SharedSession = { opening, session: undefined, leases };
    state.shared = shared;
    opening.then(
      (session) => {
        shared.session = session;
        if (this.#disposed || state.shared !== shared) void session.close();
      },
      () => {
        if (state.shared === shared) state.shared = undefined;
      },
    );
    return shared;
  }

  #open(state: ServerState, purpose: string, signal?: AbortSignal): Promise<McpSession> {
    return McpSession.open({
      server: state.config,
      logger: this.#logger,
      purpose,
      promptShutdown: this.#promptShutdown,
      ...(this.#spawn === undefined ? {} : { spawn: this.#spawn }),
      ...(this.#fetch === undefined ? {} : { fetch: this.#fetch }),
      ...(signal === undefined ? {} : { signal }),
      onToolsChanged: (session) => this.#onListChanged(state, session),
    });
  }

  #onListChanged(state: ServerState, session: McpSession): void {
    if (this.#disposed) return;
    if (state.refreshing !== undefined) {
      state.refreshAgain = true;
      return;
    }
    state.refreshing = (async () => {
      do {
        state.refreshAgain = false;
        let changed: boolean;
        try {
          const next = this.#catalogOf(state, await session.listAllTools(this.#maxToolPages), session.serverVersion);
          changed = state.catalog === undefined || state.catalog.signature !== next.signature;
          if (changed) state.catalog = next;
        } catch (error) {
          this.#logger.warn(`MCP server '${state.config.name}' changed its tools, but they could not be listed again: ${messageOf(error)}`, {
            server: state.config.name,
          });
          state.catalog = undefined;
          changed = true;
        }
        if (changed && !this.#disposed) {
          this.#logger.info(`MCP server '${state.config.name}' changed its tools.`, { server: state.config.name });
          for (const listener of [...this.#listeners]) {
            try {
              listener();
            } catch (error) {
              this.#logger.warn(`A tools-changed listener of MCP source '${this.id}' threw: ${messageOf(error)}`, {});
            }
          }
        }
      } while (state.refreshAgain && session.isOpen);
    })().finally(() => {
      state.refreshing = undefined;
    });
  }

  #catalogOf(state: ServerState, listed: readonly McpToolDefinition[], serverVersion: string | undefined): ServerCatalog {
    const config = state.config;
    const offered = listed.filter(
      (tool) => typeof tool.name === 'string' && matchesAnyGlob(tool.name, config.include) && !matchesAnyGlob(tool.name, config.exclude),
    );
    const names = mapToolNames(
      config.name,
      offered.map((tool) => tool.name),
    );
    const tools = new Map<string, McpTool>();
    const descriptors: ToolDescriptor[] = [];
    const unavailable: UnavailableTool[] = [];
    const seen = new Set<string>();
    for (const definition of offered) {
      const name = names.get(definition.name) as string;
      const refuse = (reason: string, error?: Error): void => {
        this.#logger.warn(`Tool '${name}' of MCP server '${config.name}' is unavailable: ${reason}`, { server: config.name, toolName: name });
        unavailable.push({ name, source: 'mcp', reason, ...(error === undefined ? {} : { error }) });
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
      if (definition.execution?.taskSupport === 'required') {
        refuse(`MCP tool '${definition.name}' can only run as a task (execution.taskSupport: "required"), which this adapter does not support.`);
        continue;
      }
      try {
        this.#validator.compile(definition.inputSchema as never, { toolName: name, direction: 'input', trust: this.schemaTrust });
        if (definition.outputSchema !== undefined) {
          this.#validator.compile(definition.outputSchema as never, { toolName: name, direction: 'output', trust: this.schemaTrust });
        }
      } catch (error) {
        const reason = SchemaCompileError.isInstance(error) ? error.message : `its schema cannot be compiled: ${messageOf(error)}`;
        refuse(reason, error instanceof Error ? error : undefined);
        continue;
      }
      const descriptor = this.#describe(config, name, definition, serverVersion);
      descriptors.push(descriptor);
      tools.set(name, new McpTool({ descriptor, mcpName: definition.name, server: config, provider: this, logger: this.#logger }));
    }
    return { tools, descriptors, unavailable, signature: JSON.stringify(listed) };
  }

  #describe(config: ParsedMcpServer, name: string, definition: McpToolDefinition, serverVersion: string | undefined): ToolDescriptor {
    const hints = definition.annotations ?? {};
    const derived: ToolCapabilityInput = {
      writes: hints.readOnlyHint !== true,
      checkpointable: false,
      ...(hints.destructiveHint === undefined ? {} : { destructive: hints.destructiveHint }),
      ...(hints.idempotentHint === undefined ? {} : { idempotent: hints.idempotentHint }),
      ...(hints.openWorldHint === undefined ? {} : { openWorld: hints.openWorldHint }),
    };
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
        ...(definition.annotations === undefined ? {} : { mcpAnnotations: definition.annotations }),
      }),
    });
  }
}
