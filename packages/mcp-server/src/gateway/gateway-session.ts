import { randomUUID } from 'node:crypto';
import { messageOf, safeMessage } from '@ca/domain';
import { modelErrorText, type McpCallToolResult, type ModelTools } from '@ca/model-tools';
import { resourcePath, type PlanContext, type ToolExecutionTrace } from '@ca/tool-context';
import type {
  InteractionContext,
  InteractionRequest,
  InteractionResponse,
  PlanEndReport,
  RuntimeLogger,
  SamplingContext,
  SamplingRequest,
  SamplingResult,
  ToolDescriptor,
  ToolProgress,
  ToolRuntime,
} from '@ca/tool-lifecycle';
import { closestNames } from '@ca/tool-lifecycle';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type CreateMessageRequest,
  type RequestId,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { ClientChannel, GatewayClients } from '../clients/gateway-clients';
import { McpGatewayError, type McpGatewayProblem } from '../errors/mcp-gateway-error';
import type { OutputChecks } from '../listing/output-schemas';
import { CALL_TOOL_NAME, SEARCH_TOOL_NAME, SessionTools, type CallableTool, type ToolListing } from '../listing/session-tools';
import { UpstreamOffers } from '../upstream/upstream-offers';
import type { McpSessionInfo, ResolvedProfile, StatelessQuestions } from './session-profile';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What every session of one gateway shares. @internal */
export interface SessionSettings {
  readonly runtime: ToolRuntime;
  readonly modelTools: ModelTools;
  readonly clients: GatewayClients;
  readonly outputChecks: OutputChecks;
  readonly logger: RuntimeLogger;
  readonly serverInfo: { readonly name: string; readonly version: string };
  readonly maxConcurrentCalls: number;
  readonly maxCallsPerSession: number;
  /** The most characters of text, and of `structuredContent` as JSON, one result gives the client. */
  readonly maxResultCharacters: number;
  readonly interactionTimeoutMs: number;
  readonly onTrace: ((trace: ToolExecutionTrace) => void) | undefined;
  readonly onEnd: (session: GatewaySession, report: PlanEndReport | undefined) => void;
}

/** A tool call of the client in flight: what a question of the plan is tied to. */
interface CallInFlight {
  readonly requestId: RequestId;
  readonly toolName: string;
  readonly signal: AbortSignal;
}

/** The most characters of a client's name kept for traces and labels. */
const MAX_CLIENT_NAME = 200;

/**
 * One MCP client session of the gateway: an SDK `Server` on the session's
 * transport and one plan of the runtime, created when the client has
 * initialized (or at its first request) and ended — every tool it activated
 * deactivated, once — when the session closes, whatever closes it: the
 * client leaving, the transport failing, the plan being cancelled (`agents
 * plan cancel`, its deadline), the gateway stopping.
 * @internal
 */
export class GatewaySession implements ClientChannel {
  readonly server: Server;
  /** What the server tells its client it offers (for `server/discover`). */
  readonly offer: {
    readonly capabilities: ServerCapabilities;
    readonly instructions: string;
    readonly serverInfo: { readonly name: string; readonly version: string };
  };
  private plan: PlanContext | undefined;
  private starting: Promise<PlanContext> | undefined;
  private closing: Promise<void> | undefined;
  private endReason: string | undefined;
  private readonly tools: SessionTools;
  private readonly offers: UpstreamOffers;
  private readonly inFlight = new Map<RequestId, CallInFlight>();
  private readonly subscriptions = new Set<string>();
  private detach: (() => void) | undefined;
  private listedKey: string | undefined;
  private calls = 0;
  private running = 0;

  constructor(
    readonly info: McpSessionInfo,
    private readonly profile: ResolvedProfile,
    private readonly settings: SessionSettings,
    catalog: readonly ToolDescriptor[],
  ) {
    this.tools = new SessionTools(settings.runtime, settings.modelTools, profile);
    this.offers = new UpstreamOffers(catalog, (toolName, input) => this.runOperation(toolName, input));
    const capabilities: ServerCapabilities = {
      tools: { listChanged: true },
      logging: {},
      ...(this.offers.hasResources ? { resources: { listChanged: true, ...(this.offers.hasSubscriptions ? { subscribe: true } : {}) } } : {}),
      ...(this.offers.hasPrompts ? { prompts: { listChanged: true } } : {}),
      ...(this.offers.hasCompletions ? { completions: {} } : {}),
    };
    this.offer = { capabilities, instructions: this.instructions(), serverInfo: settings.serverInfo };
    this.server = new Server(settings.serverInfo, { capabilities, instructions: this.offer.instructions });
    this.registerHandlers();
    this.server.oninitialized = () => {
      this.ensurePlan().catch((error: unknown) => this.settings.logger.warn(`An MCP session could not start its plan: ${messageOf(error)}`, {}));
    };
    if (info.resumed !== undefined) {
      // The client initialized with another replica: what it said then is what this server knows of it (the SDK keeps it in these fields).
      const known = this.server as unknown as { _clientCapabilities?: unknown; _clientVersion?: unknown };
      known._clientCapabilities = info.resumed.capabilities ?? {};
      if (info.resumed.clientInfo !== undefined) known._clientVersion = info.resumed.clientInfo;
    }
    this.server.onclose = () => void this.close('the client disconnected');
    this.server.onerror = (error) => this.settings.logger.debug(`MCP session ${this.describe()}: ${messageOf(error)}`, {});
  }

  /** The client's name and version, as it introduced itself (control characters removed, capped). */
  get clientName(): string {
    const version = this.server.getClientVersion();
    const text = version === undefined ? 'an MCP client' : `${version.name}${version.version === undefined ? '' : ` ${version.version}`}`;
    // eslint-disable-next-line no-control-regex
    return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').slice(0, MAX_CLIENT_NAME);
  }

  /** The session's own id (HTTP sessions): the same on every replica that serves it. */
  get sessionId(): string | undefined {
    return this.info.sessionId;
  }

  /** A 2026-07-28 request's answers and questions (input_required), when its client takes form elicitation. */
  get inputs(): StatelessQuestions | undefined {
    return this.info.inputs;
  }

  /** The plan's id once it exists. */
  get planId(): string | undefined {
    return this.plan?.planId;
  }

  /** True once the session is closing or closed. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Serves the session on `transport`. */
  async connect(transport: Transport): Promise<void> {
    await this.server.connect(transport);
  }

  /** Tells the client that the catalog changed: its tool list when that changed, resources and prompts whenever they may have. */
  async catalogChanged(): Promise<void> {
    if (this.closed || this.plan === undefined) return;
    try {
      const listing = await this.tools.current(this.plan);
      if (listing.key !== this.listedKey) {
        this.listedKey = listing.key;
        await this.server.sendToolListChanged();
      }
      if (this.offers.hasResources) await this.server.sendResourceListChanged();
      if (this.offers.hasPrompts) await this.server.sendPromptListChanged();
    } catch (error) {
      this.settings.logger.debug(`MCP session ${this.describe()}: could not tell the client of a change: ${messageOf(error)}`, {});
    }
  }

  /** Passes an upstream resource update on, when the client subscribed to it. */
  resourceUpdated(uri: string): void {
    if (this.closed || !this.subscriptions.has(uri)) return;
    this.server.sendResourceUpdated({ uri }).catch(() => undefined);
  }

  /**
   * Ends the session: the transport closed, the plan cancelled (its
   * executions stop) and ended — each tool it activated deactivated once.
   * Idempotent.
   */
  close(reason: string): Promise<void> {
    this.closing ??= this.shutDown(reason);
    return this.closing;
  }

  // --- ClientChannel: questions of the plan, asked of this client -------------------------------

  canAsk(kind: InteractionRequest['kind']): boolean {
    const elicitation = this.server.getClientCapabilities()?.elicitation;
    return kind === 'form' ? elicitation?.form !== undefined : elicitation?.url !== undefined;
  }

  canSample(): boolean {
    return this.server.getClientCapabilities()?.sampling !== undefined;
  }

  async ask(request: InteractionRequest, context: InteractionContext): Promise<InteractionResponse> {
    const call = this.callOf(context.toolName);
    const options = {
      signal: call === undefined ? context.signal : AbortSignal.any([context.signal, call.signal]),
      timeout: this.settings.interactionTimeoutMs,
      ...(call === undefined ? {} : { relatedRequestId: call.requestId }),
    };
    try {
      const result =
        request.kind === 'form'
          ? await this.server.elicitInput({ mode: 'form', message: request.message, requestedSchema: request.schema as never }, options)
          : await this.server.elicitInput({ mode: 'url', message: request.message, url: request.url, elicitationId: request.id ?? randomUUID() }, options);
      if (result.action === 'accept') return result.content === undefined ? { action: 'accept' } : { action: 'accept', content: result.content };
      return { action: result.action };
    } catch (error) {
      this.settings.logger.warn(`MCP session ${this.describe()}: the client did not answer a question (${request.kind}): ${messageOf(error)}`, {
        planId: context.planId,
      });
      return { action: 'cancel' };
    }
  }

  async sample(request: SamplingRequest, context: SamplingContext): Promise<SamplingResult> {
    const call = this.callOf(context.toolName);
    const result = await this.server.createMessage(request as unknown as CreateMessageRequest['params'], {
      signal: call === undefined ? context.signal : AbortSignal.any([context.signal, call.signal]),
      timeout: this.settings.interactionTimeoutMs,
      ...(call === undefined ? {} : { relatedRequestId: call.requestId }),
    });
    return {
      role: 'assistant',
      content: result.content as SamplingResult['content'],
      model: result.model,
      ...(result.stopReason === undefined ? {} : { stopReason: result.stopReason }),
    };
  }

  // --- requests of the client -------------------------------------------------------------------

  private registerHandlers(): void {
    const server = this.server;
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      const listing = await this.tools.current(await this.ensurePlan());
      this.listedKey = listing.key;
      return { tools: listing.tools as never };
    });
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => this.callTool(request.params.name, request.params.arguments, extra));
    server.setRequestHandler(SetLevelRequestSchema, () => ({}));
    // A resource or prompt request that fails is a JSON-RPC error for the client, with the upstream server's code when it sent one.
    const guarded =
      <T>(work: (plan: PlanContext) => Promise<T>, method = 'the request') =>
      async (): Promise<T> => {
        const plan = await this.ensurePlan();
        try {
          return await work(plan);
        } catch (error) {
          throw error instanceof McpError ? error : protocolError(error, method, plan);
        }
      };
    if (this.offers.hasResources) {
      server.setRequestHandler(ListResourcesRequestSchema, () =>
        guarded(async () => ({ resources: (await this.offers.listResources()).resources }), 'resources/list')(),
      );
      server.setRequestHandler(ListResourceTemplatesRequestSchema, () =>
        guarded(async () => ({ resourceTemplates: (await this.offers.listResources()).resourceTemplates }), 'resources/templates/list')(),
      );
      server.setRequestHandler(ReadResourceRequestSchema, (request) =>
        guarded((plan) => this.offers.readResource(request.params.uri, plan.planId), 'resources/read')(),
      );
      if (this.offers.hasSubscriptions) {
        server.setRequestHandler(SubscribeRequestSchema, (request) =>
          guarded(async (plan) => {
            await this.offers.subscribe(request.params.uri, plan.planId, true);
            this.subscriptions.add(request.params.uri);
            return {};
          }, 'resources/subscribe')(),
        );
        server.setRequestHandler(UnsubscribeRequestSchema, (request) =>
          guarded(async (plan) => {
            this.subscriptions.delete(request.params.uri);
            await this.offers.subscribe(request.params.uri, plan.planId, false);
            return {};
          }, 'resources/unsubscribe')(),
        );
      }
    }
    if (this.offers.hasPrompts) {
      server.setRequestHandler(ListPromptsRequestSchema, () => guarded(async () => ({ prompts: await this.offers.listPrompts() }), 'prompts/list')());
      server.setRequestHandler(GetPromptRequestSchema, (request) =>
        guarded((plan) => this.offers.getPrompt(request.params.name, request.params.arguments, plan.planId), 'prompts/get')(),
      );
    }
    if (this.offers.hasCompletions) {
      server.setRequestHandler(CompleteRequestSchema, (request) =>
        guarded((plan) => this.offers.complete(request.params, plan.planId), 'completion/complete')(),
      );
    }
  }

  /** `tools/call`: the meta tools of search mode, or one of the session's tools through the runtime. */
  private async callTool(name: string, args: Record<string, unknown> | undefined, extra: Extra): Promise<CallToolResult> {
    const plan = await this.ensurePlan();
    if (this.running >= this.settings.maxConcurrentCalls)
      return this.refusal(name, plan, { kind: 'call-limit', limit: this.settings.maxConcurrentCalls, scope: 'at-once' });
    if (this.calls >= this.settings.maxCallsPerSession)
      return this.refusal(name, plan, { kind: 'call-limit', limit: this.settings.maxCallsPerSession, scope: 'per-session' });
    this.calls++;
    this.running++;
    try {
      const listing = await this.tools.current(plan);
      if (this.profile.mode === 'search' && name === SEARCH_TOOL_NAME) return await this.search(args, listing, plan);
      if (this.profile.mode === 'search' && name === CALL_TOOL_NAME) {
        const inner = typeof args?.['name'] === 'string' ? args['name'] : undefined;
        const innerArgs = args?.['arguments'];
        if (inner === undefined || (innerArgs !== undefined && (typeof innerArgs !== 'object' || innerArgs === null || Array.isArray(innerArgs)))) {
          return errorResult(
            `Error GATEWAY_INVALID_ARGUMENT: ${CALL_TOOL_NAME} takes { "name": "<a tool ${SEARCH_TOOL_NAME} found>", "arguments": { … } }. Call it again with those.`,
          );
        }
        return await this.callListed(inner, innerArgs as Record<string, unknown> | undefined, listing, plan, extra, 'model');
      }
      return await this.callListed(name, args, listing, plan, extra, 'client');
    } finally {
      this.running--;
    }
  }

  private async callListed(
    name: string,
    args: Record<string, unknown> | undefined,
    listing: ToolListing,
    plan: PlanContext,
    extra: Extra,
    caller: 'client' | 'model',
  ): Promise<CallToolResult> {
    const tool = listing.callable.get(name);
    if (tool === undefined) {
      // Offered by the profile, refused by the plan: the runtime says why (read-only, no network, checkpoints), and traces it.
      const refused = listing.refused.get(name);
      if (refused !== undefined) return this.run(name, refused, args, undefined, plan, extra);
      const quarantined = listing.quarantined.get(name);
      if (quarantined !== undefined) return this.runQuarantined(name, quarantined, args, plan);
      // A name the client's own tools/call gives is a protocol error (MCP: -32602); one a model gave tools.call is the model's to fix.
      if (caller === 'client') throw unknownToolError(name, listing);
      return this.unknownTool(name, listing, plan);
    }
    return this.run(name, tool.toolName, args, tool, plan, extra);
  }

  private async run(
    name: string,
    toolName: string,
    args: Record<string, unknown> | undefined,
    tool: CallableTool | undefined,
    plan: PlanContext,
    extra: Extra,
  ): Promise<CallToolResult> {
    const progressToken = extra._meta?.progressToken;
    // Progress sent is waited for before the result, so the client gets every step before the answer (after it, it drops them).
    const sending = new Set<Promise<void>>();
    const onProgress =
      progressToken === undefined
        ? undefined
        : (progress: ToolProgress) => {
            const sent: Promise<void> = extra
              .sendNotification({
                method: 'notifications/progress',
                params: {
                  progressToken,
                  progress: progress.progress,
                  ...(progress.total === undefined ? {} : { total: progress.total }),
                  ...(progress.message === undefined ? {} : { message: progress.message }),
                },
              })
              .catch(() => undefined)
              .finally(() => sending.delete(sent));
            sending.add(sent);
          };
    const call: CallInFlight = { requestId: extra.requestId, toolName, signal: extra.signal };
    this.inFlight.set(extra.requestId, call);
    try {
      const { message, outcome } = await this.settings.modelTools.call('mcp', { name, arguments: args ?? {} }, plan, {
        signal: extra.signal,
        ...(onProgress === undefined ? {} : { onProgress }),
      });
      if (outcome.trace !== undefined) {
        for (const inner of innerTraces(plan, outcome.trace)) this.settings.onTrace?.(inner);
        this.settings.onTrace?.(outcome.trace);
      }
      if (sending.size > 0) await Promise.all(sending);
      return tool === undefined ? (message as unknown as CallToolResult) : this.fit(message, tool, plan);
    } finally {
      this.inFlight.delete(extra.requestId);
    }
  }

  /**
   * The result as the tool's definition promises it: a tool given an output
   * schema must answer with `structuredContent` that matches it (a client
   * refuses anything else as a protocol error); one that cannot — its output
   * was cut to the budget, or does not match — is answered with an error
   * saying so.
   */
  private fit(message: McpCallToolResult, tool: CallableTool, plan: PlanContext): CallToolResult {
    let result = message as unknown as CallToolResult;
    let structured = message.structuredContent;
    // Structured content counts against the same budget as text: past it, a tool without an output schema keeps its (cut) text only.
    if (structured !== undefined && serializedLength(structured) > this.settings.maxResultCharacters) {
      const { structuredContent: _dropped, ...rest } = result;
      result = rest as CallToolResult;
      structured = undefined;
    }
    if (tool.outputSchema === undefined || message.isError === true) return result;
    if (structured === undefined) {
      return this.refusal(tool.definition.name, plan, {
        kind: 'output-unfit',
        reason: 'its output is larger than the gateway passes on (maxResultCharacters), or not an object; ask for less (a narrower range, a filter)',
      });
    }
    const problems = this.settings.outputChecks.problems(tool.outputSchema, structured, tool.toolName);
    if (problems.length === 0) return result;
    return this.refusal(tool.definition.name, plan, { kind: 'output-unfit', reason: `it does not match the tool's output schema: ${problems.join('; ')}` });
  }

  /** `tools.search`: the runtime's search, kept to what this session may call. */
  private async search(args: Record<string, unknown> | undefined, listing: ToolListing, plan: PlanContext): Promise<CallToolResult> {
    const query = args?.['query'];
    const limit = args?.['limit'] ?? 10;
    const mode = args?.['mode'] ?? 'words';
    if (
      typeof query !== 'string' ||
      query.length === 0 ||
      typeof limit !== 'number' ||
      !Number.isInteger(limit) ||
      limit < 1 ||
      limit > 50 ||
      (mode !== 'words' && mode !== 'regex')
    ) {
      return errorResult(
        `Error GATEWAY_INVALID_ARGUMENT: ${SEARCH_TOOL_NAME} takes { "query": "<a few words>", "limit": 1–50, "mode": "words" | "regex" }. Call it again with those.`,
      );
    }
    let hits;
    try {
      hits = await this.settings.runtime.searchTools(query, { k: Math.min(100, limit * 3), mode: mode === 'regex' ? 'regex' : 'bm25', ctx: plan });
    } catch (error) {
      return errorResult(modelErrorText(error, { providerName: SEARCH_TOOL_NAME, allowedRoots: [] }));
    }
    const tools = hits
      .map((hit) => listing.callable.get(listing.mcpNames.get(hit.name) ?? ''))
      .filter((tool): tool is CallableTool => tool !== undefined)
      .slice(0, limit)
      .map((tool) => ({
        name: tool.definition.name,
        description: tool.definition.description.split('\n')[0]?.slice(0, 300) ?? '',
        readOnly: tool.definition.annotations.readOnlyHint,
        inputSchema: tool.definition.inputSchema,
      }));
    const text =
      tools.length === 0
        ? `No tool of this session matches '${safeMessage(query, 200)}'. Try other words.`
        : `${tools.length} tool(s); call one with ${CALL_TOOL_NAME} { "name", "arguments" }:\n${JSON.stringify(tools)}`;
    return { content: [{ type: 'text', text }], structuredContent: { tools } };
  }

  /** A quarantined tool: the runtime refuses it (and traces the call) with `TOOL_DEFINITION_CHANGED` and the diff. */
  private async runQuarantined(name: string, toolName: string, args: Record<string, unknown> | undefined, plan: PlanContext): Promise<CallToolResult> {
    let result;
    try {
      result = await this.settings.runtime.execute(toolName, args ?? {}, plan);
    } catch (error) {
      if ((error as { trace?: ToolExecutionTrace })?.trace !== undefined) this.settings.onTrace?.((error as { trace: ToolExecutionTrace }).trace);
      return errorResult(modelErrorText(error, { providerName: name, allowedRoots: rootsOf(plan) }));
    }
    // Its pins accepted it in the meantime: the call ran.
    this.settings.onTrace?.(result.trace);
    const rendered = this.settings.modelTools.render(result, plan, name);
    return { content: [{ type: 'text', text: rendered.text }], ...(rendered.isError ? { isError: true } : {}) };
  }

  private unknownTool(name: string, listing: ToolListing, plan: PlanContext): CallToolResult {
    const error = { code: 'MODEL_TOOL_UNKNOWN', suggestions: closestNames(name, listing.callable.keys()) };
    return errorResult(modelErrorText(error, { providerName: name, allowedRoots: rootsOf(plan) }));
  }

  private refusal(name: string, plan: PlanContext, problem: McpGatewayProblem): CallToolResult {
    const error = new McpGatewayError({ problem, planId: plan.planId, toolName: name });
    return errorResult(modelErrorText(error, { providerName: name, allowedRoots: rootsOf(plan) }));
  }

  /** Runs an upstream resource or prompt operation tool in the plan; a failure is the JSON-RPC error the client gets. */
  private async runOperation(toolName: string, input: Record<string, unknown>): Promise<unknown> {
    const plan = await this.ensurePlan();
    let result;
    try {
      result = await this.settings.runtime.execute(toolName, input, plan);
    } catch (error) {
      if ((error as { trace?: ToolExecutionTrace })?.trace !== undefined) this.settings.onTrace?.((error as { trace: ToolExecutionTrace }).trace);
      throw error;
    }
    this.settings.onTrace?.(result.trace);
    // The request's handler turns it into the JSON-RPC error the client gets.
    if (!result.ok) throw result.error;
    return result.output;
  }

  // --- the plan -------------------------------------------------------------------------------

  private ensurePlan(): Promise<PlanContext> {
    this.starting ??= this.startPlan();
    return this.starting;
  }

  private async startPlan(): Promise<PlanContext> {
    if (this.closed) throw sessionEnded(this.endReason ?? 'the session closed', undefined);
    const profile = this.profile;
    // A session served by more than one replica of a fleet has one plan on each: the opening replica's is mcp-<session>, the others' carry their name.
    const resumedOn = this.info.resumed?.replica;
    const planId = profile.planId ?? `mcp-${this.info.sessionId ?? randomUUID()}${resumedOn === undefined ? '' : `.${resumedOn}`}`;
    const plan = this.settings.runtime.createPlan({
      planId,
      ...(profile.policy === undefined ? {} : { policy: profile.policy }),
      resources: [...profile.resources],
      ...(profile.timeoutMs === undefined ? {} : { timeoutMs: profile.timeoutMs }),
      registry: {
        labels: {
          server: 'mcp',
          transport: this.info.transport,
          client: this.clientName,
          ...(this.info.sessionId === undefined ? {} : { session: this.info.sessionId }),
          ...profile.labels,
        },
      },
    });
    this.plan = plan;
    this.detach = this.settings.clients.attach(plan.planId, this);
    plan.cancellationToken.onCancel((reason) => void this.close(`its plan was cancelled: ${reason}`));
    try {
      await this.settings.runtime.whenRegistered(plan);
    } catch (error) {
      void this.close(`its plan could not be registered: ${messageOf(error)}`);
      throw error;
    }
    return plan;
  }

  private async shutDown(reason: string): Promise<void> {
    // Asynchronous from here on: a cancellation below calls close() again, which must find this promise.
    await Promise.resolve();
    this.endReason = reason;
    const plan = this.plan ?? (this.starting === undefined ? undefined : await this.starting.catch(() => undefined));
    this.detach?.();
    if (plan !== undefined && !plan.cancellationToken.isCancelled) plan.cancellationToken.cancel(`the MCP session ended: ${reason}`);
    await this.server.close().catch(() => undefined);
    const report = plan === undefined ? undefined : await this.settings.runtime.endPlan(plan);
    this.settings.logger.info(`MCP session ${this.describe()} ended (${reason}).`, { ...(plan === undefined ? {} : { planId: plan.planId }) });
    this.settings.onEnd(this, report);
  }

  /** The client's tool call in flight that a question about `toolName` belongs to (the latest one of that tool). */
  private callOf(toolName: string | undefined): CallInFlight | undefined {
    let found: CallInFlight | undefined;
    for (const call of this.inFlight.values()) if (call.toolName === toolName) found = call;
    return found;
  }

  private describe(): string {
    return `${this.info.sessionId ?? this.info.transport}${this.plan === undefined ? '' : ` (plan '${this.plan.planId}')`} of ${this.clientName}`;
  }

  private instructions(): string {
    const policy = this.profile.policy;
    const rules = [
      policy?.readOnly === true ? 'read-only: tools that change anything are not offered' : undefined,
      policy?.requireCheckpoint === true ? 'every change must be undoable' : undefined,
      policy?.network === 'deny' ? 'no network' : undefined,
    ].filter((rule): rule is string => rule !== undefined);
    return (
      `Tools of this server run through a tool runtime, in one plan per session${rules.length === 0 ? '' : ` (${rules.join('; ')})`}: ` +
      "each call is checked against the plan, may need a person's approval (asked through this client when it can ask), and is traced." +
      (this.profile.mode === 'search' ? ` Find tools with ${SEARCH_TOOL_NAME} and call them with ${CALL_TOOL_NAME}.` : '')
    );
  }
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** The folders of the plan's file resources: paths inside them may appear in the text a client reads. */
function rootsOf(plan: PlanContext): string[] {
  const roots: string[] = [];
  for (const resource of plan.resources) {
    try {
      roots.push(resourcePath(resource));
    } catch {
      // Not a file resource.
    }
  }
  return roots;
}

/**
 * An MCP error whose message on the wire is the text alone: the SDK's McpError
 * puts "MCP error <code>: " in front of its message, and the client's SDK puts
 * it there again when it reads the answer ("MCP error -32602: MCP error -32602: …").
 */
class ProtocolError extends McpError {
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data);
    this.message = message;
  }
}

function sessionEnded(reason: string, planId: string | undefined): McpError {
  return new ProtocolError(
    ErrorCode.InvalidRequest,
    new McpGatewayError({ problem: { kind: 'session-ended', reason }, ...(planId === undefined ? {} : { planId }) }).message,
  );
}

/** MCP's "Unknown tool" (-32602), with the close names and the stable code in `data`. */
function unknownToolError(name: string, listing: ToolListing): McpError {
  const suggestions = closestNames(name, listing.callable.keys());
  const shown = safeMessage(name, 200);
  return new ProtocolError(
    ErrorCode.InvalidParams,
    `Unknown tool: '${shown}'${suggestions.length === 0 ? '' : ` (close names: ${suggestions.map((s) => `'${s}'`).join(', ')})`}; tools/list names the tools of this session.`,
    { code: 'MODEL_TOOL_UNKNOWN', tool: shown, suggestions },
  );
}

/** The upstream server's own words of a JSON-RPC error it sent, without the SDK's "MCP error <code>: " prefix. */
function upstreamText(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown })?.cause;
  const message = (cause as { message?: unknown })?.message;
  return typeof message === 'string' && message.length > 0 ? message.replace(/^(MCP error -?\d+: )+/, '') : undefined;
}

/**
 * The JSON-RPC error a client gets for a failed resource, prompt or
 * completion request, worded for an MCP client (not for a model): the
 * upstream server's code and words when it sent an error, else what failed,
 * with the stable code in `data`.
 */
function protocolError(error: unknown, method: string, plan: PlanContext): McpError {
  if (McpGatewayError.isInstance(error)) {
    return new ProtocolError(error.code === 'GATEWAY_RESOURCE_UNKNOWN' ? -32002 : ErrorCode.InvalidParams, error.message, {
      code: error.code,
      planId: plan.planId,
    });
  }
  const rpcCode = (error as { rpcCode?: unknown })?.rpcCode;
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : undefined;
  const upstream = typeof rpcCode === 'number' ? upstreamText(error) : undefined;
  const text = scrubRoots(safeMessage(upstream ?? messageOf(error), 2_000), rootsOf(plan));
  return new ProtocolError(
    typeof rpcCode === 'number'
      ? rpcCode
      : code === 'TOOL_ACCESS_DENIED' || code === 'TOOL_APPROVAL_DENIED'
        ? ErrorCode.InvalidRequest
        : ErrorCode.InternalError,
    `${method} failed${upstream === undefined ? '' : ' upstream'}${code === undefined ? '' : ` (${code})`}: ${text}`,
    { ...(code === undefined ? {} : { code }), planId: plan.planId },
  );
}

/** Replaces the plan's folders in a text with their last part (a client need not learn the server's paths). */
function scrubRoots(text: string, roots: readonly string[]): string {
  let scrubbed = text;
  for (const root of roots) if (root.length > 1) scrubbed = scrubbed.split(root).join(`…/${root.split('/').filter(Boolean).pop() ?? ''}`);
  return scrubbed;
}

/** The length of a value as JSON; a value that cannot be written counts as endless. */
function serializedLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * The traces of the calls a call made in the plan itself (a code-mode
 * program's inner calls: `parentExecutionId` names it), oldest first. A
 * trace is added as its call ends, so they are looked for back from the end
 * of the plan's traces, down to the first that ended before the call started.
 */
function innerTraces(plan: PlanContext, outer: ToolExecutionTrace): ToolExecutionTrace[] {
  const found: ToolExecutionTrace[] = [];
  const traces = plan.traces;
  for (let index = traces.length - 1; index >= 0; index--) {
    const trace = traces[index] as ToolExecutionTrace;
    if (trace.endedAt < outer.startedAt) break;
    if (trace.parentExecutionId === outer.executionId) found.push(trace);
  }
  return found.reverse();
}
