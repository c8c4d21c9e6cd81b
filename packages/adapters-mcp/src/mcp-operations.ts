import { normalizeCapability, type JsonSchema } from '@ca/domain';
import { ToolCancelledError, type ToolExecutionContext } from '@ca/tool-context';
import { toolFailure, type RuntimeLogger, type ToolContent, type ToolDescriptor, type ToolInstance, type ToolResult } from '@ca/tool-lifecycle';
import type { CompleteRequest, Prompt, Resource } from '@modelcontextprotocol/sdk/types.js';
import { linkToken } from './cancellation-link';
import type { McpCapabilityOverride, ParsedMcpServer } from './mcp-config';
import type { InFlightCall, McpSession } from './mcp-session';
import { authFailure } from './mcp-session';
import { callFailure, forget, notActivated, toolError, type CallSubject, type McpSessionProvider } from './mcp-tool';
import { sanitizeText } from './sanitize-text';

/**
 * The resource, prompt and completion requests of MCP, offered as tools of
 * each server that supports them: `mcp.<server>.<operation>`. They only read,
 * so a read-only or checkpoint-required plan runs them.
 */
export const MCP_OPERATIONS = {
  'resources.list': { method: 'resources/list', needs: 'resources' },
  'resources.read': { method: 'resources/read', needs: 'resources' },
  'resources.subscribe': { method: 'resources/subscribe', needs: 'subscribe' },
  'resources.unsubscribe': { method: 'resources/unsubscribe', needs: 'subscribe' },
  'prompts.list': { method: 'prompts/list', needs: 'prompts' },
  'prompts.get': { method: 'prompts/get', needs: 'prompts' },
  'completion.complete': { method: 'completion/complete', needs: 'completions' },
} as const;

/** One of {@link MCP_OPERATIONS}. */
export type McpOperation = keyof typeof MCP_OPERATIONS;

/** The operation names, which no server tool may take (see `mapToolNames`). @internal */
export const OPERATION_NAMES: ReadonlySet<string> = new Set(Object.keys(MCP_OPERATIONS));

/** What the server offers besides tools, as its capabilities and first pages of lists say. @internal */
export interface ServerOffer {
  readonly resources: boolean;
  readonly subscribe: boolean;
  readonly prompts: boolean;
  /** It declares `completions`: it suggests values for prompt arguments and resource template variables. */
  readonly completions: boolean;
  /** The first resources it lists, for the descriptions. */
  readonly knownResources?: readonly Resource[];
  readonly knownPrompts?: readonly Prompt[];
}

/** Names shown in a description at most. */
const NAMES_IN_DESCRIPTION = 20;

const NO_INPUT = Object.freeze({ type: 'object', properties: {}, additionalProperties: false });
const URI_INPUT = Object.freeze({
  type: 'object',
  properties: { uri: { type: 'string', minLength: 1, description: 'The URI of the resource, as the server lists it.' } },
  required: ['uri'],
  additionalProperties: false,
});
const PROMPT_INPUT = Object.freeze({
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, description: 'The name of the prompt, as the server lists it.' },
    arguments: { type: 'object', additionalProperties: { type: 'string' }, description: "The prompt's arguments, by name." },
  },
  required: ['name'],
  additionalProperties: false,
});
/** Longest name, URI or typed value a completion request carries (a person types it; a server's names are shorter). */
const MAX_COMPLETION_TEXT = 4_096;
/** Most arguments already chosen that a completion request carries. */
const MAX_COMPLETION_CONTEXT = 64;
const COMPLETE_INPUT = Object.freeze({
  type: 'object',
  properties: {
    ref: {
      description:
        "What is being filled in: a prompt's argument ({ type: 'ref/prompt', name }) or a resource template's variable ({ type: 'ref/resource', uri: <the template> }).",
      oneOf: [
        {
          type: 'object',
          properties: { type: { const: 'ref/prompt' }, name: { type: 'string', minLength: 1, maxLength: MAX_COMPLETION_TEXT } },
          required: ['type', 'name'],
          additionalProperties: false,
        },
        {
          type: 'object',
          properties: { type: { const: 'ref/resource' }, uri: { type: 'string', minLength: 1, maxLength: MAX_COMPLETION_TEXT } },
          required: ['type', 'uri'],
          additionalProperties: false,
        },
      ],
    },
    argument: {
      type: 'object',
      description: 'The argument (or template variable) and what is typed so far.',
      properties: { name: { type: 'string', minLength: 1, maxLength: MAX_COMPLETION_TEXT }, value: { type: 'string', maxLength: MAX_COMPLETION_TEXT } },
      required: ['name', 'value'],
      additionalProperties: false,
    },
    context: {
      type: 'object',
      properties: {
        arguments: {
          type: 'object',
          description: 'The arguments already chosen, by name (a server may narrow its suggestions by them).',
          maxProperties: MAX_COMPLETION_CONTEXT,
          additionalProperties: { type: 'string', maxLength: MAX_COMPLETION_TEXT },
        },
      },
      additionalProperties: false,
    },
  },
  required: ['ref', 'argument'],
  additionalProperties: false,
});

/**
 * The descriptors of the operations `offer` allows, with the configured
 * capability overrides (keyed by operation name, like a tool's).
 *
 * @internal
 */
export function operationDescriptors(
  config: ParsedMcpServer,
  offer: ServerOffer,
  serverVersion: string | undefined,
): { readonly operation: McpOperation; readonly descriptor: ToolDescriptor }[] {
  const result: { operation: McpOperation; descriptor: ToolDescriptor }[] = [];
  for (const [operation, { method, needs }] of Object.entries(MCP_OPERATIONS) as [McpOperation, (typeof MCP_OPERATIONS)[McpOperation]][]) {
    if (!offer[needs]) continue;
    const override: McpCapabilityOverride = config.capabilities[operation] ?? {};
    result.push({
      operation,
      descriptor: Object.freeze({
        name: `mcp.${config.name}.${operation}`,
        description: describeOperation(config.name, operation, offer),
        source: 'mcp' as const,
        // Reading changes nothing, so there is nothing to undo; whether the server reaches the world is its secret.
        capability: normalizeCapability({ writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: true, ...override }),
        inputSchema: inputSchemaOf(operation),
        ...(serverVersion === undefined ? {} : { version: serverVersion }),
        annotations: Object.freeze({ mcpServer: config.name, mcpOperation: method }),
      }),
    });
  }
  return result;
}

function inputSchemaOf(operation: McpOperation): JsonSchema {
  if (operation === 'prompts.get') return PROMPT_INPUT;
  if (operation === 'completion.complete') return COMPLETE_INPUT;
  return operation.endsWith('.list') ? NO_INPUT : URI_INPUT;
}

function describeOperation(server: string, operation: McpOperation, offer: ServerOffer): string {
  const list = `mcp.${server}.${operation.startsWith('resources') ? 'resources' : 'prompts'}.list`;
  switch (operation) {
    case 'resources.list':
      return `Lists the resources (and resource templates) of MCP server '${server}': URI, name, description, MIME type.`;
    case 'resources.read':
      return `Reads one resource of MCP server '${server}' by its URI; the output is { contents: [{ uri, mimeType?, text | blob }] }.${known(
        offer.knownResources?.map((resource) => `${resource.uri}${resource.name === undefined || resource.name === resource.uri ? '' : ` (${resource.name})`}`),
        list,
      )}`;
    case 'resources.subscribe':
      return `Subscribes the plan's session with MCP server '${server}' to changes of one resource, until the plan ends; each change is reported to McpToolSource.onResourceUpdated listeners.`;
    case 'resources.unsubscribe':
      return `Ends a subscription made with mcp.${server}.resources.subscribe.`;
    case 'prompts.list':
      return `Lists the prompts of MCP server '${server}' with their arguments.`;
    case 'prompts.get':
      return `Gets one prompt of MCP server '${server}', filled in with its arguments; the output is { description?, messages: [{ role, content }] }.${known(
        offer.knownPrompts?.map(
          (prompt) =>
            `${prompt.name}${prompt.arguments === undefined || prompt.arguments.length === 0 ? '' : `(${prompt.arguments.map((argument) => `${argument.name}${argument.required === true ? '' : '?'}`).join(', ')})`}`,
        ),
        list,
      )}`;
    case 'completion.complete':
      return `Suggests values for one argument of a prompt (ref { type: 'ref/prompt', name }) or one variable of a resource template (ref { type: 'ref/resource', uri: <the template> }) of MCP server '${server}', from what is typed so far (argument { name, value }) and the arguments already chosen (context.arguments); the output is { completion: { values (at most 100), total?, hasMore? } }.`;
  }
}

function known(names: readonly string[] | undefined, list: string): string {
  if (names === undefined || names.length === 0) return '';
  const shown = names.slice(0, NAMES_IN_DESCRIPTION).map((name) => sanitizeText(name, 120));
  const more = names.length > shown.length ? `, … (${names.length - shown.length} more: see ${list})` : '';
  return ` It offers: ${shown.join(', ')}${more}.`;
}

/**
 * One resource or prompt operation of one server, as a `ToolInstance`: it
 * uses the plan's session with the server like the server's tools do.
 *
 * @internal Obtained from `McpToolSource.get`.
 */
export class McpOperationTool implements ToolInstance<Record<string, unknown>, unknown> {
  readonly descriptor: ToolDescriptor;
  readonly operation: McpOperation;
  readonly #server: ParsedMcpServer;
  readonly #provider: McpSessionProvider;
  readonly #maxPages: number;

  constructor(options: {
    readonly descriptor: ToolDescriptor;
    readonly operation: McpOperation;
    readonly server: ParsedMcpServer;
    readonly provider: McpSessionProvider;
    readonly logger: RuntimeLogger;
    readonly maxPages: number;
  }) {
    this.descriptor = options.descriptor;
    this.operation = options.operation;
    this.#server = options.server;
    this.#provider = options.provider;
    this.#maxPages = options.maxPages;
  }

  /** Opens the server's session for the plan (scope `plan`) or leases the shared one. */
  activate(ctx: ToolExecutionContext): Promise<void> {
    return this.#provider.acquire(this.#server.name, ctx);
  }

  /** Releases the session: the last tool of a plan closes a plan-scoped session. */
  deactivate(ctx: ToolExecutionContext): Promise<void> {
    return this.#provider.release(this.#server.name, ctx);
  }

  /** Sends the request on the plan's session; every answer is a result, only cancellation and a missing activation throw. */
  async execute(input: Record<string, unknown>, ctx: ToolExecutionContext): Promise<ToolResult> {
    const toolName = this.descriptor.name;
    const planId = ctx.planId;
    let session = this.#provider.sessionFor(this.#server.name, planId);
    if (session === undefined) throw notActivated(this.#server.name, toolName, planId);
    const subject: CallSubject = { server: this.#server, toolName, mcpToolName: MCP_OPERATIONS[this.operation].method, planId };
    if (!session.isOpen) {
      const next = this.#server.scope === 'shared' ? await this.#provider.replacementFor(this.#server.name, planId) : undefined;
      if (next === undefined) return toolFailure(session.exitedError({ toolName, planId }));
      session = next;
    }
    const args = typeof input === 'object' && input !== null ? input : {};
    const problem = this.#checkInput(args);
    if (problem !== undefined) return toolFailure(toolError(subject, 'MCP_REQUEST_FAILED', `was not sent: ${problem}`));
    const link = linkToken(ctx.cancellationToken, { toolName, planId });
    const call: InFlightCall = { planId, toolName, signal: ctx.signal };
    session.inFlight.push(call);
    try {
      return await this.#run(session, args, link.signal, planId);
    } catch (error) {
      if (link.signal.aborted) {
        const reason = link.signal.reason;
        throw ToolCancelledError.isInstance(reason) ? reason : new ToolCancelledError({ toolName, planId, cause: error });
      }
      if (await session.lostAfterNetworkFailure(error)) return toolFailure(session.exitedError({ toolName, planId }));
      return toolFailure(authFailure(this.#server, error, undefined, { toolName, planId }) ?? callFailure(error, subject));
    } finally {
      forget(session.inFlight, call);
      link.release();
    }
  }

  #checkInput(args: Record<string, unknown>): string | undefined {
    if (this.operation === 'completion.complete') return completeRequestOf(args) === undefined ? COMPLETE_EXPECTED : undefined;
    if (this.operation === 'prompts.get') {
      if (typeof args['name'] !== 'string' || args['name'].length === 0) return 'expected { "name": "<prompt>" }.';
      const values = args['arguments'];
      if (values !== undefined && (typeof values !== 'object' || values === null || Object.values(values).some((value) => typeof value !== 'string'))) {
        return 'expected "arguments" to map argument names to strings.';
      }
      return undefined;
    }
    if (this.operation.endsWith('.list')) return undefined;
    return typeof args['uri'] === 'string' && args['uri'].length > 0 ? undefined : 'expected { "uri": "<resource URI>" }.';
  }

  async #run(session: McpSession, args: Record<string, unknown>, signal: AbortSignal, planId: string): Promise<ToolResult> {
    const options = { signal, timeout: this.#server.callTimeoutMs };
    const client = session.client;
    switch (this.operation) {
      case 'resources.list': {
        const resources = await session.listResources(this.#maxPages, signal);
        const templates = await session.listResourceTemplates(this.#maxPages, signal).catch(() => ({ items: [], complete: true }));
        return { ok: true, output: { resources: resources.items, resourceTemplates: templates.items, complete: resources.complete && templates.complete } };
      }
      case 'resources.read': {
        const result = await client.readResource({ uri: args['uri'] as string }, options);
        const contents = Array.isArray(result.contents) ? result.contents : [];
        return { ok: true, output: { contents }, content: contents.map((item) => ({ type: 'resource', resource: item }) as ToolContent) };
      }
      case 'resources.subscribe': {
        const uri = args['uri'] as string;
        // A shared session serves several plans: the server is asked once per URI, and each plan's subscription is counted here.
        const plans = this.#server.scope === 'shared' ? session.subscribers.get(uri) : undefined;
        if (plans === undefined || plans.size === 0) await client.subscribeResource({ uri }, options);
        if (this.#server.scope === 'shared') session.subscribers.set(uri, (session.subscribers.get(uri) ?? new Set<string>()).add(planId));
        return { ok: true, output: { uri, subscribed: true } };
      }
      case 'resources.unsubscribe': {
        const uri = args['uri'] as string;
        const plans = this.#server.scope === 'shared' ? session.subscribers.get(uri) : undefined;
        if (plans !== undefined) {
          plans.delete(planId);
          // Another plan still holds it: the server keeps sending its updates (to that plan only).
          if (plans.size > 0) return { ok: true, output: { uri, subscribed: false } };
          session.subscribers.delete(uri);
        }
        await client.unsubscribeResource({ uri }, options);
        return { ok: true, output: { uri, subscribed: false } };
      }
      case 'prompts.list': {
        const prompts = await session.listPrompts(this.#maxPages, signal);
        return { ok: true, output: { prompts: prompts.items, complete: prompts.complete } };
      }
      case 'prompts.get': {
        const result = await client.getPrompt(
          { name: args['name'] as string, ...(args['arguments'] === undefined ? {} : { arguments: args['arguments'] as Record<string, string> }) },
          options,
        );
        return { ok: true, output: { ...(result.description === undefined ? {} : { description: result.description }), messages: result.messages } };
      }
      case 'completion.complete': {
        // Checked by #checkInput; only the fields MCP defines are sent.
        const result = await client.complete(completeRequestOf(args) as CompleteRequest['params'], options);
        const { values, total, hasMore } = result.completion;
        return {
          ok: true,
          output: { completion: { values, ...(typeof total === 'number' ? { total } : {}), ...(typeof hasMore === 'boolean' ? { hasMore } : {}) } },
        };
      }
    }
  }
}

const COMPLETE_EXPECTED =
  'expected { "ref": { "type": "ref/prompt", "name" } | { "type": "ref/resource", "uri" }, "argument": { "name", "value" }, "context"?: { "arguments"?: { <name>: <string> } } }.';

/** The `completion/complete` parameters of an operation's input, rebuilt from its fields MCP defines; `undefined` when they do not have that form. */
function completeRequestOf(args: Record<string, unknown>): CompleteRequest['params'] | undefined {
  const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
  const text = (value: unknown, minLength = 1): value is string =>
    typeof value === 'string' && value.length >= minLength && value.length <= MAX_COMPLETION_TEXT;
  const { ref, argument, context } = args;
  if (!isRecord(ref) || !isRecord(argument) || !text(argument['name']) || !text(argument['value'], 0)) return undefined;
  let target: CompleteRequest['params']['ref'];
  if (ref['type'] === 'ref/prompt' && text(ref['name'])) target = { type: 'ref/prompt', name: ref['name'] };
  else if (ref['type'] === 'ref/resource' && text(ref['uri'])) target = { type: 'ref/resource', uri: ref['uri'] };
  else return undefined;
  const params: CompleteRequest['params'] = { ref: target, argument: { name: argument['name'], value: argument['value'] } };
  if (context === undefined) return params;
  if (!isRecord(context)) return undefined;
  const chosen = context['arguments'];
  if (chosen === undefined) return { ...params, context: {} };
  if (!isRecord(chosen) || Object.keys(chosen).length > MAX_COMPLETION_CONTEXT || !Object.values(chosen).every((value) => text(value, 0))) return undefined;
  return { ...params, context: { arguments: { ...(chosen as Record<string, string>) } } };
}
