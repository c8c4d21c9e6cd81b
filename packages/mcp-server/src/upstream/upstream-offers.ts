import type { ToolDescriptor } from '@ca/tool-lifecycle';
import type {
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import { McpGatewayError } from '../errors/mcp-gateway-error';

/** The MCP methods of an upstream server that the runtime offers as tools (`mcp.<server>.resources.read`, …), by method. */
type Operations = Partial<Record<string, string>>;

/** Runs one of the runtime's operation tools in the session's plan and resolves to its output; throws the error the client gets. @internal */
export type RunOperation = (toolName: string, input: Record<string, unknown>) => Promise<unknown>;

/** Separates a server's name from its prompt's in the names the gateway gives prompts. */
const PROMPT_SEPARATOR = '.';

/**
 * The resources and prompts of the upstream MCP servers, passed through to
 * the client: every request is one of the runtime's operation tools
 * (`mcp.<server>.resources.list`, `…resources.read`, `…prompts.get`, …) run
 * in the session's plan, so it is checked, traced and sent on the plan's
 * own session with the server. Resource URIs are the servers' own; a read is
 * sent to the server that listed the URI, else to the one whose template's
 * fixed start matches it (a plain prefix test: templates come from servers),
 * else to the only server that has resources. Prompt names are
 * `<server>.<prompt>`, so two servers' prompts never meet.
 * @internal
 */
export class UpstreamOffers {
  private readonly servers = new Map<string, Operations>();
  private readonly owners = new Map<string, string>();
  private templates: { readonly server: string; readonly prefix: string }[] = [];

  constructor(
    catalog: readonly ToolDescriptor[],
    private readonly run: RunOperation,
  ) {
    for (const descriptor of catalog) {
      const server = descriptor.annotations?.['mcpServer'];
      const method = descriptor.annotations?.['mcpOperation'];
      if (typeof server !== 'string' || typeof method !== 'string') continue;
      const operations = this.servers.get(server) ?? {};
      operations[method] = descriptor.name;
      this.servers.set(server, operations);
    }
  }

  /** True when an upstream server lists resources. */
  get hasResources(): boolean {
    return this.withMethod('resources/list').length > 0;
  }

  /** True when an upstream server takes subscriptions. */
  get hasSubscriptions(): boolean {
    return this.withMethod('resources/subscribe').length > 0;
  }

  /** True when an upstream server lists prompts. */
  get hasPrompts(): boolean {
    return this.withMethod('prompts/list').length > 0;
  }

  /** Every server's resources (and templates), their owners remembered for reads and subscriptions. */
  async listResources(): Promise<{ resources: Resource[]; resourceTemplates: ResourceTemplate[] }> {
    const resources: Resource[] = [];
    const resourceTemplates: ResourceTemplate[] = [];
    const templates: { server: string; prefix: string }[] = [];
    const listed = await Promise.all(
      this.withMethod('resources/list').map(async ([server, tool]) => ({
        server,
        output: (await this.run(tool, {})) as { resources?: Resource[]; resourceTemplates?: ResourceTemplate[] },
      })),
    );
    for (const { server, output } of listed) {
      for (const resource of output?.resources ?? []) {
        resources.push(resource);
        this.owners.set(resource.uri, server);
      }
      for (const template of output?.resourceTemplates ?? []) {
        resourceTemplates.push(template);
        const prefix = String(template.uriTemplate).split('{')[0] ?? '';
        if (prefix.length > 0) templates.push({ server, prefix });
      }
    }
    this.templates = templates.sort((a, b) => b.prefix.length - a.prefix.length);
    return { resources, resourceTemplates };
  }

  /** One resource, from the server that offers it. */
  async readResource(uri: string, planId: string): Promise<ReadResourceResult> {
    const tool = await this.toolFor(uri, 'resources/read', planId);
    const output = (await this.run(tool, { uri })) as { contents?: ReadResourceResult['contents'] };
    return { contents: output?.contents ?? [] };
  }

  /** Subscribes the session (its plan's session with the server) to a resource's updates. */
  async subscribe(uri: string, planId: string, subscribe: boolean): Promise<void> {
    await this.run(await this.toolFor(uri, subscribe ? 'resources/subscribe' : 'resources/unsubscribe', planId), { uri });
  }

  /** Every server's prompts, named `<server>.<prompt>`. */
  async listPrompts(): Promise<Prompt[]> {
    const listed = await Promise.all(
      this.withMethod('prompts/list').map(async ([server, tool]) => ({ server, output: (await this.run(tool, {})) as { prompts?: Prompt[] } })),
    );
    return listed.flatMap(({ server, output }) =>
      (output?.prompts ?? []).map((prompt) => ({ ...prompt, name: `${server}${PROMPT_SEPARATOR}${prompt.name}`, title: prompt.title ?? prompt.name })),
    );
  }

  /** One prompt, by the name the gateway gave it, filled in with its arguments. */
  async getPrompt(name: string, args: Record<string, string> | undefined, planId: string): Promise<GetPromptResult> {
    const found = this.withMethod('prompts/get').find(([server]) => name.startsWith(`${server}${PROMPT_SEPARATOR}`));
    if (found === undefined) {
      const known = (await this.listPrompts().catch(() => [])).map((prompt) => prompt.name);
      throw new McpGatewayError({ problem: { kind: 'prompt-unknown', name, known }, planId });
    }
    const [server, tool] = found;
    const output = (await this.run(tool, { name: name.slice(server.length + 1), ...(args === undefined ? {} : { arguments: args }) })) as GetPromptResult;
    return { ...(output?.description === undefined ? {} : { description: output.description }), messages: output?.messages ?? [] };
  }

  /** True when the client may ask for completions: an upstream server has prompts or resource templates to complete arguments of. */
  get hasCompletions(): boolean {
    return this.hasPrompts || this.hasResources;
  }

  /**
   * `completion/complete` for a prompt's argument (`ref/prompt`, by the name
   * the gateway gave it) or a resource template's variable (`ref/resource`),
   * forwarded to the server that offers it (its `completion/complete`
   * operation); a server that offers no completions has no suggestions.
   */
  async complete(params: CompleteRequest['params'], planId: string): Promise<CompleteResult> {
    const none: CompleteResult = { completion: { values: [], hasMore: false } };
    const offering = this.withMethod('completion/complete');
    const forward = async (tool: string, ref: CompleteRequest['params']['ref']): Promise<CompleteResult> => {
      const output = (await this.run(tool, {
        ref,
        argument: params.argument,
        ...(params.context === undefined ? {} : { context: params.context }),
      })) as Partial<CompleteResult> | undefined;
      const completion = output?.completion;
      if (completion === undefined || !Array.isArray(completion.values)) return none;
      return {
        completion: {
          values: completion.values.filter((value): value is string => typeof value === 'string').slice(0, 100),
          ...(typeof completion.total === 'number' ? { total: completion.total } : {}),
          ...(typeof completion.hasMore === 'boolean' ? { hasMore: completion.hasMore } : {}),
        },
      };
    };
    const ref = params.ref;
    if (ref.type === 'ref/prompt') {
      const found = this.withMethod('prompts/list').find(([server]) => ref.name.startsWith(`${server}${PROMPT_SEPARATOR}`));
      if (found === undefined) {
        const known = (await this.listPrompts().catch(() => [])).map((prompt) => prompt.name);
        throw new McpGatewayError({ problem: { kind: 'prompt-unknown', name: ref.name, known }, planId });
      }
      const tool = offering.find(([server]) => server === found[0])?.[1];
      return tool === undefined ? none : forward(tool, { type: 'ref/prompt', name: ref.name.slice(found[0].length + 1) });
    }
    const uri = ref.uri;
    if (offering.length === 0) return none;
    const owner = this.templates.find((template) => uri.startsWith(template.prefix))?.server ?? this.owners.get(uri);
    const tool = owner === undefined ? (offering.length === 1 ? offering[0]?.[1] : undefined) : offering.find(([server]) => server === owner)?.[1];
    return tool === undefined ? none : forward(tool, { type: 'ref/resource', uri });
  }

  /** The server that offers `method`, by name, with the tool that sends it. */
  private withMethod(method: string): [string, string][] {
    const found: [string, string][] = [];
    for (const [server, operations] of this.servers) {
      const tool = operations[method];
      if (tool !== undefined) found.push([server, tool]);
    }
    return found;
  }

  private async toolFor(uri: string, method: string, planId: string): Promise<string> {
    const offering = this.withMethod(method);
    const pick = (): string | undefined => {
      const owner = this.owners.get(uri) ?? this.templates.find((template) => uri.startsWith(template.prefix))?.server;
      if (owner !== undefined) return offering.find(([server]) => server === owner)?.[1];
      return offering.length === 1 ? offering[0]?.[1] : undefined;
    };
    let tool = pick();
    // Not listed yet in this session: list once, then decide.
    if (tool === undefined && offering.length > 1) {
      await this.listResources();
      tool = pick();
    }
    if (tool === undefined) throw new McpGatewayError({ problem: { kind: 'resource-unknown', uri }, planId });
    return tool;
  }
}
