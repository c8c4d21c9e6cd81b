// What every client program of the suite shares: the runtime with the MCP
// adapter as a service would set it up (the built packages, through their
// public entries), a person who answers what the adapter asks, and the exit
// protocol the harness reads. The suite starts a program as
// `<node> <program> <server URL>`, with MCP_CONFORMANCE_SCENARIO set (and
// MCP_CONFORMANCE_CONTEXT, JSON, for scenarios that hand out credentials).
import { registerToolRuntime, TOOL_RUNTIME, createConsoleLogger, type InteractionHandler, type ToolRuntime } from '@ca/tool-lifecycle';
import { registerMcpAdapter, type McpHttpServerConfig, type McpToolSource } from '@ca/adapters-mcp';
import { container } from 'tsyringe';

/** The client metadata document the suite's authorization server accepts as a client id (SEP-991). */
export const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/** The name the server gets in the configuration: its tools are `mcp.conformance.<tool>`. */
export const SERVER = 'conformance';

/** What a scenario's program does once the runtime is set up. */
export type ClientBody = (client: { readonly runtime: ToolRuntime; readonly source: McpToolSource; readonly serverUrl: string }) => Promise<string>;

/** The server URL the suite appends as the last argument. */
export function serverUrl(): string {
  const url = process.argv[process.argv.length - 1];
  if (url === undefined || !/^https?:\/\//.test(url)) throw new Error(`expected the server URL as the last argument, got ${JSON.stringify(url)}`);
  return url;
}

/** The scenario's context (credentials, keys), from MCP_CONFORMANCE_CONTEXT. */
export function scenarioContext(): Record<string, string> {
  const raw = process.env['MCP_CONFORMANCE_CONTEXT'];
  if (raw === undefined) throw new Error('MCP_CONFORMANCE_CONTEXT is not set: this scenario hands out credentials through it.');
  return JSON.parse(raw) as Record<string, string>;
}

/**
 * Follows a page as a browser would (redirects included) until it lands; a
 * sign-in page of the suite's authorization server redirects at once to
 * the adapter's loopback address with the code.
 */
export async function visit(page: string): Promise<void> {
  let url = new URL(page);
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(url, { redirect: 'manual' });
    await response.arrayBuffer();
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      url = new URL(location, url);
      continue;
    }
    if (!response.ok) throw new Error(`${url.origin}${url.pathname} answered HTTP ${response.status}`);
    return;
  }
  throw new Error(`${page} redirected more than 10 times`);
}

/**
 * A person at a browser: signs in on every sign-in page at once, and submits
 * every form without touching a field (so that the form's defaults are
 * what the server gets). Every question is written to stderr.
 */
export const person: InteractionHandler = {
  async interact(request) {
    if (request.kind === 'url') {
      process.stderr.write(`person: opening ${request.purpose} page ${request.url}\n`);
      await visit(request.url);
      return { action: 'accept' };
    }
    process.stderr.write(`person: submitting the form "${request.message}" without filling in a field\n`);
    return { action: 'accept', content: {} };
  },
};

/**
 * Sets up the runtime with one MCP server (`mcp.conformance.*`), runs
 * `body`, and exits: 0 after printing `ok: <what body returned>` on stdout,
 * 1 after printing the error (its code first) on stderr.
 */
export function runClient(server: Omit<McpHttpServerConfig, 'url'>, body: ClientBody, options: { readonly interaction?: InteractionHandler } = {}): void {
  void (async () => {
    const url = serverUrl();
    const services = container.createChildContainer();
    registerToolRuntime(services);
    const source = registerMcpAdapter(services, {
      servers: { mcpServers: { [SERVER]: { ...server, url } } },
      logger: createConsoleLogger('info'),
      interactionHandler: options.interaction ?? person,
    });
    const runtime = services.resolve(TOOL_RUNTIME);
    try {
      const summary = await body({ runtime, source, serverUrl: url });
      process.stdout.write(`ok: ${summary}\n`);
      process.exitCode = 0;
    } catch (error) {
      const code = (error as { code?: unknown })?.code;
      process.stderr.write(`${typeof code === 'string' ? `${code}: ` : ''}${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    } finally {
      await runtime.dispose();
    }
  })();
}

/**
 * Discovers, and returns the server's tool names; throws the source's error
 * (with its code) when the server could not be listed.
 */
export async function discoverServer(runtime: ToolRuntime): Promise<string[]> {
  const discovery = await runtime.discover();
  const failed = discovery.sourceErrors[0]?.error ?? discovery.unavailable.find((item) => item.name === `mcp.${SERVER}`)?.error;
  if (failed !== undefined) throw failed;
  return discovery.tools.map((tool) => tool.name).filter((name) => name.startsWith(`mcp.${SERVER}.`));
}

/** Runs one tool in a plan of its own and returns its text output; throws its error when it failed. */
export async function callTool(runtime: ToolRuntime, name: string, input: Record<string, unknown>): Promise<unknown> {
  return runtime.runPlan({}, async (ctx) => {
    const result = await runtime.execute(`mcp.${SERVER}.${name}`, input, ctx);
    if (!result.ok) throw result.error;
    return result.output;
  });
}
