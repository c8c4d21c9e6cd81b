import type { McpTokenStore } from '@ca/adapters-mcp';
import type { ToolExecutionContext } from '@ca/tool-context';
import type { DiscoveryResult, InteractionHandler, RuntimeLogger, ToolRuntime } from '@ca/tool-lifecycle';
import type { Command } from 'commander';
import { mcpConfigProblem } from './build-runtime';
import { CliError } from './cli-error';
import type { CliIo } from './cli-io';
import type { AgentsConfig } from './config';
import { EXIT_CODES, type ExitCode } from './exit-codes';
import { formatTable } from './format-table';
import { classify } from './plan-runner';
import { describeMissingTool } from './tool-lookup';

/** What the `mcp` commands need from `main`. */
export interface McpCommandContext {
  readonly io: CliIo;
  readonly loadConfiguration: () => AgentsConfig;
  readonly open: (config: AgentsConfig, tools: readonly string[]) => Promise<{ runtime: ToolRuntime; discovery: DiscoveryResult }>;
  readonly wantsJson: (local: { readonly json?: boolean }) => boolean;
  readonly createLogger: () => RuntimeLogger;
  readonly mcpSupport: (logger: RuntimeLogger) => {
    readonly interactionHandler: InteractionHandler;
    readonly tokenStore: McpTokenStore & { readonly folder?: string };
  };
  readonly setExitCode: (code: ExitCode) => void;
  /** Cancels the command's plan on Ctrl-C while `work` runs. */
  readonly withInterrupt: <T>(cancel: (reason: string) => void, work: () => Promise<T>) => Promise<T>;
}

const loadMcp = () => require('@ca/adapters-mcp') as typeof import('@ca/adapters-mcp');

/**
 * `agents mcp resources|prompts|login|logout <server>`: an MCP server's
 * resources and prompts, read in a read-only plan (traced, cancellable like
 * any step), and its OAuth sign-in.
 */
export function addMcpCommands(program: Command, context: McpCommandContext): void {
  const { io } = context;
  const mcp = program.command('mcp').description("an MCP server's resources and prompts, and its OAuth sign-in; serving the tools to MCP clients (mcp serve)");

  mcp
    .command('resources <server>')
    .description("list the server's resources (and resource templates), or read one with --read")
    .option('--read <uri>', 'read the resource with this URI and print its text')
    .option('--json', 'machine-readable output')
    .action(async (server: string, local: { read?: string; json?: boolean }) => {
      const tool = `mcp.${server}.${local.read === undefined ? 'resources.list' : 'resources.read'}`;
      const result = await runOperation(context, server, tool, local.read === undefined ? {} : { uri: local.read }, 'resources');
      if (result === undefined) return;
      if (context.wantsJson(local)) {
        io.stdout(`${JSON.stringify(result, null, 2)}\n`);
        return;
      }
      if (local.read !== undefined) {
        for (const item of (result as { contents: { uri: string; mimeType?: string; text?: string; blob?: string }[] }).contents) {
          io.stdout(
            item.text !== undefined
              ? `${item.text}${item.text.endsWith('\n') ? '' : '\n'}`
              : `(${item.mimeType ?? 'binary'} content of ${Buffer.byteLength(item.blob ?? '', 'base64')} bytes at ${item.uri}; use --json for its base64)\n`,
          );
        }
        return;
      }
      const { resources, resourceTemplates } = result as {
        resources: { uri: string; name?: string; mimeType?: string; description?: string }[];
        resourceTemplates: { uriTemplate: string; name?: string; description?: string }[];
      };
      io.stdout(
        formatTable(
          ['uri', 'name', 'type', 'description'],
          resources.map((item) => [item.uri, item.name ?? '', item.mimeType ?? '', item.description ?? '']),
        ),
      );
      if (resourceTemplates.length > 0) {
        io.stdout(
          `\n${formatTable(
            ['template', 'name', 'description'],
            resourceTemplates.map((item) => [item.uriTemplate, item.name ?? '', item.description ?? '']),
          )}`,
        );
      }
      io.stdout(`\n${resources.length} resource(s), ${resourceTemplates.length} template(s). Read one with 'agents mcp resources ${server} --read <uri>'.\n`);
    });

  mcp
    .command('prompts <server>')
    .description("list the server's prompts, or get one with --get")
    .option('--get <name>', 'get the prompt of this name, filled in with --arg values')
    .option(
      '--arg <name=value>',
      'an argument of the prompt (repeatable)',
      (value: string, previous: Record<string, string>) => parseArgument(value, previous),
      {} as Record<string, string>,
    )
    .option('--json', 'machine-readable output')
    .action(async (server: string, local: { get?: string; arg: Record<string, string>; json?: boolean }) => {
      const input = local.get === undefined ? {} : { name: local.get, ...(Object.keys(local.arg).length === 0 ? {} : { arguments: local.arg }) };
      const result = await runOperation(context, server, `mcp.${server}.${local.get === undefined ? 'prompts.list' : 'prompts.get'}`, input, 'prompts');
      if (result === undefined) return;
      if (context.wantsJson(local)) {
        io.stdout(`${JSON.stringify(result, null, 2)}\n`);
        return;
      }
      if (local.get !== undefined) {
        const { description, messages } = result as { description?: string; messages: { role: string; content: { type: string; text?: string } }[] };
        if (description !== undefined) io.stdout(`${description}\n\n`);
        for (const message of messages)
          io.stdout(`${message.role}: ${message.content.type === 'text' ? message.content.text : `(${message.content.type} content; use --json)`}\n`);
        return;
      }
      const { prompts } = result as { prompts: { name: string; description?: string; arguments?: { name: string; required?: boolean }[] }[] };
      io.stdout(
        formatTable(
          ['name', 'arguments', 'description'],
          prompts.map((prompt) => [
            prompt.name,
            (prompt.arguments ?? []).map((argument) => `${argument.name}${argument.required === true ? '' : '?'}`).join(', '),
            prompt.description ?? '',
          ]),
        ),
      );
      io.stdout(`\n${prompts.length} prompt(s). Get one with 'agents mcp prompts ${server} --get <name> --arg <name=value>'.\n`);
    });

  mcp
    .command('login <server>')
    .description('sign in to an MCP server that uses OAuth (opens nothing: prints the page to open, and waits for the sign-in)')
    .action(async (server: string) => {
      const config = context.loadConfiguration();
      const logger = context.createLogger();
      const support = context.mcpSupport(logger);
      const source = oauthSource(config, server, logger, support, 'login');
      try {
        await source.authorize(server);
        io.stdout(
          `Signed in to MCP server '${server}'.${support.tokenStore.folder === undefined ? '' : ` The tokens are kept in ${support.tokenStore.folder} (only you can read them).`}\n`,
        );
      } catch (error) {
        reportFailure(context, error, config);
      } finally {
        await source.dispose();
      }
    });

  mcp
    .command('logout <server>')
    .description('forget the OAuth tokens and registered client kept for an MCP server')
    .action(async (server: string) => {
      const config = context.loadConfiguration();
      const logger = context.createLogger();
      const source = oauthSource(config, server, logger, context.mcpSupport(logger), 'logout');
      try {
        await source.forgetAuthorization(server);
        io.stdout(`Forgot the sign-in to MCP server '${server}'.\n`);
      } catch (error) {
        reportFailure(context, error, config);
      } finally {
        await source.dispose();
      }
    });
}

/** Runs one resource or prompt operation in a read-only plan; undefined when it failed (reported, exit code set). */
async function runOperation(
  context: McpCommandContext,
  server: string,
  tool: string,
  input: Record<string, unknown>,
  what: 'resources' | 'prompts',
): Promise<unknown> {
  const { io } = context;
  const config = context.loadConfiguration();
  const { runtime, discovery } = await context.open(config, [tool]);
  if (!discovery.tools.some((item) => item.name === tool)) {
    const offered = discovery.tools.some((item) => item.name.startsWith(`mcp.${server}.`));
    const missing = offered
      ? { code: 'TOOL_NOT_FOUND', message: `MCP server '${server}' offers no ${what} (it does not declare the ${what} capability).` }
      : describeMissingTool(tool, discovery, config, io.cwd);
    io.stderr(`${missing.code}: ${missing.message}\n`);
    context.setExitCode(EXIT_CODES.notFound);
    return undefined;
  }
  let planCtx: ToolExecutionContext | undefined;
  return context.withInterrupt(
    (reason) => planCtx?.cancellationToken.cancel(reason),
    () =>
      runtime.runPlan({ policy: { readOnly: true }, resources: config.resources }, async (ctx) => {
        planCtx = ctx;
        try {
          const result = await runtime.execute(tool, input, ctx);
          if (result.ok) return result.output;
          const { code, message } = classify(result.error, { command: 'tools run' }, ctx.cancellationToken.isCancelled);
          io.stderr(`${code}: ${message}\n`);
        } catch (error) {
          const { outcome, code, message } = classify(error, { command: 'tools run' }, ctx.cancellationToken.isCancelled);
          io.stderr(`${code}: ${message}\n`);
          context.setExitCode(outcome === 'cancelled' ? EXIT_CODES.cancelled : outcome === 'not-found' ? EXIT_CODES.notFound : EXIT_CODES.failed);
          return undefined;
        }
        context.setExitCode(EXIT_CODES.failed);
        return undefined;
      }),
  );
}

function oauthSource(
  config: AgentsConfig,
  server: string,
  logger: RuntimeLogger,
  support: ReturnType<McpCommandContext['mcpSupport']>,
  command: 'login' | 'logout',
) {
  const entry = config.mcpServers?.[server];
  if (entry === undefined) {
    const servers = Object.keys(config.mcpServers ?? {});
    throw new CliError({
      code: 'CLI_USAGE',
      message: `No MCP server '${server}' is configured in ${config.file ?? 'the configuration (there is no configuration file)'}${servers.length > 0 ? `; its servers: ${servers.join(', ')}` : ''}.`,
    });
  }
  // The configuration is fine: it is the command that does not apply to this server.
  const usesOAuth = (item: Record<string, unknown>): boolean => item['url'] !== undefined && item['oauth'] !== undefined && item['oauth'] !== false;
  const oauthServers = Object.entries(config.mcpServers ?? {})
    .filter(([, item]) => usesOAuth(item))
    .map(([name]) => name);
  const those = oauthServers.length > 0 ? ` Servers that use OAuth: ${oauthServers.join(', ')}.` : '';
  if (entry['command'] !== undefined && entry['url'] === undefined) {
    throw new CliError({
      code: 'CLI_USAGE',
      message: `'agents mcp ${command}' does not apply to MCP server '${server}': it is a stdio server, which this command starts itself and which signs in to nothing. The command is for Streamable HTTP servers with "oauth".${those}`,
    });
  }
  if (entry['url'] !== undefined && !usesOAuth(entry)) {
    throw new CliError({
      code: 'CLI_USAGE',
      message: `'agents mcp ${command}' does not apply to MCP server '${server}': it does not use OAuth (its entry has no "oauth"; add "oauth": true if the server wants a sign-in).${those}`,
    });
  }
  const mcp = loadMcp();
  try {
    return mcp.createMcpAdapter({
      servers: { mcpServers: { [server]: entry } } as never,
      logger,
      interactionHandler: support.interactionHandler,
      tokenStore: support.tokenStore,
    });
  } catch (error) {
    if (mcp.McpConfigError.isInstance(error)) throw mcpConfigProblem(error, config);
    throw error;
  }
}

function reportFailure(context: McpCommandContext, error: unknown, config: AgentsConfig): void {
  const mcp = loadMcp();
  if (mcp.McpConfigError.isInstance(error)) throw mcpConfigProblem(error, config);
  if (CliError.isInstance(error)) throw error;
  const { code, message } = classify(error, { command: 'tools run' });
  context.io.stderr(`${code}: ${message}\n`);
  context.setExitCode(EXIT_CODES.failed);
}

function parseArgument(text: string, previous: Record<string, string>): Record<string, string> {
  const at = text.indexOf('=');
  if (at <= 0) throw new CliError({ code: 'CLI_USAGE', message: `--arg ${text}: expected name=value, e.g. --arg city=Lyon.` });
  return { ...previous, [text.slice(0, at)]: text.slice(at + 1) };
}
