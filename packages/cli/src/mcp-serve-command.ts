import fs from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { McpHttpServer, McpSessionProfile, ResourceUpdateSource } from '@ca/mcp-server';
import type { BoundResource, PlanPolicy, ToolExecutionTrace } from '@ca/tool-context';
import { compileToolPattern, type ApprovalHandler, type PlanRegistry, type RuntimeLogger } from '@ca/tool-lifecycle';
import type { Command } from 'commander';
import { loadRules } from './approval-config';
import { buildRuntime, type BuiltRuntime } from './build-runtime';
import { CliError } from './cli-error';
import type { CliIo } from './cli-io';
import { bindResources, type AgentsConfig, type ServeProfileEntry } from './config';
import { EXIT_CODES, type ExitCode } from './exit-codes';
import { FileTokenStore } from './file-token-store';
import { checkPlanId } from './plan-registry';

/** What `agents mcp serve` needs from `main`. */
export interface McpServeContext {
  readonly io: CliIo;
  readonly loadConfiguration: () => AgentsConfig;
  readonly planRegistry: (config: AgentsConfig) => Promise<PlanRegistry>;
  readonly startTracing: () => void;
  readonly createLogger: () => RuntimeLogger;
  readonly stateDir: () => string;
  readonly parseResource: (text: string, previous: BoundResource[]) => BoundResource[];
  readonly setExitCode: (code: ExitCode) => void;
  /** Calls `stop` on Ctrl-C (SIGINT) and SIGTERM while `work` runs; a second signal exits at once. */
  readonly withInterrupt: <T>(stop: (reason: string) => void, work: () => Promise<T>) => Promise<T>;
  readonly version: string;
}

interface ServeFlags {
  readonly profile?: string;
  readonly http?: string;
  readonly allowHost: string[];
  readonly allowOrigin: string[];
  readonly allowUnauthenticated?: boolean;
  readonly readOnly?: boolean;
  readonly requireCheckpoint?: boolean;
  readonly network: boolean;
  readonly resource: BoundResource[];
  readonly tools: string[];
  readonly search?: boolean;
  readonly codeMode?: boolean;
  readonly pin: string[];
  readonly approve: string[];
  readonly rules: string[];
  readonly planId?: string;
  readonly traces?: string;
  readonly fleet?: boolean;
  readonly replicaId?: string;
}

/** The profiles every configuration has; one of the same name under `serve.profiles` replaces it. */
export const BUILT_IN_PROFILES: Readonly<Record<string, ServeProfileEntry>> = Object.freeze({
  'read-write': { description: 'Every tool the configuration offers; a plan that may write.' },
  'read-only': { description: 'A read-only plan: tools that write are not offered, and commands run on a read-only file system.', policy: { readOnly: true } },
  checkpoint: { description: 'A plan whose every change is undoable: tools that cannot be undone are not offered.', policy: { requireCheckpoint: true } },
});

const loadServer = () => require('@ca/mcp-server') as typeof import('@ca/mcp-server');
const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** `--http 8931`, `--http 127.0.0.1:8931`, `--http [::1]:8931`. */
function parseAddress(text: string): { host?: string; port: number } {
  const match = /^(?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(text);
  const port = match === null ? Number.NaN : Number(match[2]);
  if (match === null || port > 65_535) {
    throw new CliError({ code: 'CLI_USAGE', message: `--http ${text}: expected [HOST:]PORT, e.g. --http 127.0.0.1:8931 (0 for a free port).` });
  }
  const host = match[1]?.replace(/^\[|\]$/g, '');
  return host === undefined ? { port } : { host, port };
}

/**
 * The profile a session gets: the named one (configuration, else built in),
 * with the command's flags on top — they only add restrictions and resources,
 * or narrow the tools.
 * @throws CliError (CLI_USAGE) for a profile that does not exist.
 */
export function resolveServeProfile(
  config: AgentsConfig,
  flags: Pick<ServeFlags, 'profile' | 'readOnly' | 'requireCheckpoint' | 'network' | 'resource' | 'tools' | 'search' | 'pin' | 'approve' | 'planId'>,
): { readonly name: string; readonly profile: McpSessionProfile; readonly approve: readonly string[] } {
  const name = flags.profile ?? config.serve?.profile ?? 'read-write';
  const entry = config.serve?.profiles?.[name] ?? BUILT_IN_PROFILES[name];
  if (entry === undefined) {
    const known = [...new Set([...Object.keys(config.serve?.profiles ?? {}), ...Object.keys(BUILT_IN_PROFILES)])].sort();
    throw new CliError({
      code: 'CLI_USAGE',
      message: `There is no profile '${name}'. The profiles are: ${known.join(', ')} (configure others under "serve.profiles" of ${config.file ?? 'a configuration file'}).`,
    });
  }
  const written = entry.policy ?? {};
  const approval = written.approval ?? config.approval?.policy;
  const policy: PlanPolicy = {
    readOnly: written.readOnly === true || flags.readOnly === true,
    requireCheckpoint: written.requireCheckpoint === true || flags.requireCheckpoint === true,
    ...(flags.network === false || written.network === 'deny' ? { network: 'deny' as const } : {}),
    ...(approval === undefined ? {} : { approval }),
  };
  const resources = new Map<string, BoundResource>(config.resources.map((resource) => [resource.id, resource]));
  for (const resource of bindResources(entry.resources ?? [], config.baseDir, config.file ?? '(none)')) resources.set(resource.id, resource);
  for (const resource of flags.resource) resources.set(resource.id, resource);
  const tools = flags.tools.length > 0 ? flags.tools : entry.tools;
  const pin = [...(entry.pin ?? []), ...flags.pin];
  const profile: McpSessionProfile = {
    policy,
    resources: [...resources.values()],
    labels: { profile: name },
    mode: flags.search === true ? 'search' : (entry.mode ?? 'all'),
    ...(tools === undefined ? {} : { tools }),
    ...(pin.length === 0 ? {} : { pin }),
    ...(entry.timeoutMs === undefined ? {} : { timeoutMs: entry.timeoutMs }),
    ...(flags.planId === undefined ? {} : { planId: flags.planId }),
  };
  return { name, profile, approve: [...(entry.approve ?? []), ...flags.approve] };
}

/**
 * The fleet settings of `--fleet` (or `serve.http.fleet`): the key every
 * replica shares (AGENTS_FLEET_KEY, else `serve.http.fleet.key`) and this
 * replica's name.
 * @throws CliError (CLI_USAGE) for a fleet without a key, or without --http.
 */
function fleetSettings(
  config: AgentsConfig,
  flags: Pick<ServeFlags, 'fleet' | 'replicaId'>,
  http: boolean,
): { readonly key: string; readonly replicaId?: string } | undefined {
  const configured = config.serve?.http?.fleet;
  if (flags.fleet !== true && configured === undefined) {
    if (flags.replicaId !== undefined) throw new CliError({ code: 'CLI_USAGE', message: '--replica-id names a replica of a fleet: add --fleet.' });
    return undefined;
  }
  if (!http) throw new CliError({ code: 'CLI_USAGE', message: '--fleet serves Streamable HTTP replicas: add --http [HOST:]PORT.' });
  const key = process.env['AGENTS_FLEET_KEY'] ?? configured?.key;
  if (key === undefined || key.length === 0) {
    throw new CliError({
      code: 'CLI_USAGE',
      message:
        'A fleet needs the key its replicas share: set AGENTS_FLEET_KEY (or serve.http.fleet.key) to 32 random bytes as 64 hex digits (openssl rand -hex 32), the same on every replica.',
    });
  }
  const replicaId = flags.replicaId ?? configured?.replicaId;
  return replicaId === undefined ? { key } : { key, replicaId };
}

/** The client a request names in a header a trusted proxy sets (its first value: the original client of `X-Forwarded-For`). */
function clientFromHeader(header: string): (request: { readonly headers: Record<string, string | string[] | undefined> }) => string | undefined {
  const name = header.toLowerCase();
  return (request) => {
    const value = request.headers[name];
    const first = (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim();
    return first === undefined || first.length === 0 ? undefined : first;
  };
}

/**
 * For clients that declare no elicitation: calls of tools matching an
 * `--approve` glob are approved once, any other is denied saying what would
 * let it run. The runtime's rules decide before it in every case.
 */
function approvePatterns(patterns: readonly string[]): ApprovalHandler | undefined {
  if (patterns.length === 0) return undefined;
  const compiled = patterns.map((text) => ({ text, matches: compileToolPattern(text) }));
  return {
    requestApproval: (request) => {
      const found = compiled.find((pattern) => pattern.matches(request.toolName));
      if (found !== undefined) return { decision: 'approve', scope: 'once', decidedBy: `--approve ${found.text}` };
      return {
        decision: 'deny',
        reason: `the MCP client cannot be asked (it declares no elicitation) and no --approve pattern matches '${request.toolName}'; add --approve '${request.toolName}' (or a pattern), or an allow rule`,
        decidedBy: 'agents mcp serve',
      };
    },
  };
}

/**
 * `agents mcp serve`: the runtime as an MCP server, over stdio (the default:
 * for a client's `mcpServers` entry) or Streamable HTTP (`--http`). One plan
 * per client session, with the profile's policy and resources; approvals and
 * upstream servers' questions asked of the client (elicitation) when it can
 * be asked, else `--approve` and the rules decide; the plans are announced in
 * the plan registry (`agents plan list`, `agents plan cancel`) and traced.
 */
export function addMcpServeCommand(mcp: Command, context: McpServeContext): void {
  const { io } = context;
  mcp
    .command('serve')
    .description(
      'serve the configured tools to MCP clients (Claude Desktop, Claude Code, Cursor, …), over stdio or --http: one plan per client session, approvals asked of the client',
    )
    .option('--profile <name>', "what sessions get: a profile of the configuration's serve.profiles, or read-only, checkpoint, read-write (the default)")
    .option('--http <[host:]port>', 'serve Streamable HTTP on this address (default host 127.0.0.1) instead of stdio')
    .option('--allow-host <name>', '(--http) a host name clients use besides localhost, 127.0.0.1, [::1] (repeatable)', collect, [] as string[])
    .option('--allow-origin <origin>', '(--http) a web origin whose pages may call the server (repeatable)', collect, [] as string[])
    .option('--allow-unauthenticated', '(--http) serve on an address beyond loopback without OAuth: anyone who reaches it may run the tools')
    .option('--read-only', 'sessions get read-only plans (on top of the profile)')
    .option('--require-checkpoint', 'sessions get plans whose every change is undoable')
    .option('--no-network', 'sessions get plans that deny the network: open-world tools are not offered')
    .option(
      '--resource <id=path[:read|write]>',
      'bind a folder or file to every session (repeatable)',
      (value: string, previous: BoundResource[]) => context.parseResource(value, previous),
      [] as BoundResource[],
    )
    .option('--tools <glob>', "offer only tools matching these globs (repeatable; replaces the profile's)", collect, [] as string[])
    .option('--search', 'offer tools.search and tools.call instead of every tool (large catalogs)')
    .option('--code-mode', 'offer code.run (a program whose every tool call goes through the session plan) and tools.search instead of the tools')
    .option('--pin <glob>', 'with --search, also list tools matching this glob as themselves (repeatable)', collect, [] as string[])
    .option('--approve <pattern>', 'approve calls of tools matching this glob when the client cannot be asked (repeatable)', collect, [] as string[])
    .option('--rules <file>', 'add the rules of this file, JSON or YAML (repeatable)', collect, [] as string[])
    .option('--plan-id <id>', "(stdio) the session's plan id (default mcp-<random>)")
    .option('--traces <file.jsonl>', 'append the trace of every execution to this file as JSON Lines')
    .option(
      '--fleet',
      '(--http) one replica of several behind a load balancer without affinity: session ids sealed with the key of AGENTS_FLEET_KEY or serve.http.fleet.key',
    )
    .option('--replica-id <name>', '(--fleet) the name of this replica in logs and the X-Agents-Replica header')
    .action(async (local: ServeFlags) => {
      if (local.planId !== undefined) checkPlanId(local.planId);
      if (local.planId !== undefined && local.http !== undefined) {
        throw new CliError({ code: 'CLI_USAGE', message: '--plan-id names the one session of stdio; over --http each session gets mcp-<session id>.' });
      }
      if (local.codeMode === true && (local.search === true || local.tools.length > 0)) {
        throw new CliError({
          code: 'CLI_USAGE',
          message: `--code-mode offers code.run and tools.search in place of the tools; it does not combine with ${local.search === true ? '--search' : '--tools'} (a program reaches what the plan lets run: narrow it with --read-only, a profile or --rules).`,
        });
      }
      const address = local.http === undefined ? undefined : parseAddress(local.http);
      const config = context.loadConfiguration();
      const fleet = fleetSettings(config, local, address !== undefined);
      const rules = loadRules(config, local.rules, io);
      const { name, profile, approve } = resolveServeProfile(config, local);
      const server = loadServer();
      const logger = context.createLogger();
      const fallbackApprovals = approvePatterns(approve);
      const clients = new server.GatewayClients({ logger, ...(fallbackApprovals === undefined ? {} : { fallbackApprovals }) });
      context.startTracing();
      const planRegistry = await context.planRegistry(config);
      let built: BuiltRuntime | undefined;
      let http: McpHttpServer | undefined;
      try {
        built = await buildRuntime(config, logger, {
          planRegistry,
          approval: { handler: clients.approvalHandler, rules: rules.definitions },
          // The profile's tools are what a program may call; the session lists code.run and tools.search.
          ...(local.codeMode === true ? { codeMode: profile.tools === undefined ? {} : { tools: profile.tools } } : {}),
          mcp: {
            interactionHandler: clients.interactionHandler,
            samplingHandler: clients.samplingHandler,
            tokenStore: new FileTokenStore(path.join(context.stateDir(), 'mcp-auth')),
            // Every client session is a plan: upstream servers are shared by them (a pool per server) unless an entry says "scope": "plan".
            defaultScope: 'shared',
          },
        });
        const discovery = await built.runtime.discover();
        for (const item of discovery.unavailable) io.stderr(`agents mcp serve: unavailable: ${item.name} — ${item.reason}\n`);
        for (const item of discovery.sourceErrors) io.stderr(`agents mcp serve: source ${item.sourceId} failed: ${item.error.message}\n`);
        const resourceUpdates = built.sources.find((source) => typeof (source as Partial<ResourceUpdateSource>).onResourceUpdated === 'function') as
          ResourceUpdateSource | undefined;
        const traces = local.traces === undefined ? undefined : path.resolve(io.cwd, local.traces);
        if (traces !== undefined) fs.mkdirSync(path.dirname(traces), { recursive: true });
        const gateway = new server.McpGateway(built.runtime, {
          clients,
          profile: built.codeMode === undefined ? profile : { ...profile, tools: [built.codeMode.toolName ?? 'code.run', 'tools.search'] },
          logger,
          serverInfo: { name: 'agents', version: context.version },
          ...(config.serve?.maxConcurrentCalls === undefined ? {} : { maxConcurrentCalls: config.serve.maxConcurrentCalls }),
          ...(config.serve?.maxCallsPerSession === undefined ? {} : { maxCallsPerSession: config.serve.maxCallsPerSession }),
          ...(config.serve?.maxResultCharacters === undefined ? {} : { maxResultCharacters: config.serve.maxResultCharacters }),
          ...(config.approval?.timeoutMs === undefined ? {} : { interactionTimeoutMs: config.approval.timeoutMs }),
          ...(resourceUpdates === undefined ? {} : { resourceUpdates }),
          ...(built.codeMode === undefined ? {} : { codeMode: built.codeMode }),
          ...(traces === undefined ? {} : { onTrace: (trace: ToolExecutionTrace) => fs.appendFileSync(traces, `${JSON.stringify(trace)}\n`) }),
          onSessionEnd: ({ planId }) => logger.info(`agents mcp serve: the session of plan ${planId ?? '(none)'} ended.`, {}),
        });
        const offered =
          built.codeMode !== undefined
            ? `code.run and tools.search over ${discovery.tools.length} tool(s)`
            : profile.mode === 'search'
              ? 'tools.search and tools.call'
              : `${discovery.tools.length} tool(s)`;
        if (address === undefined) {
          const streams = io.protocolStreams;
          if (streams === undefined)
            throw new CliError({ code: 'CLI_USAGE', message: "agents mcp serve over stdio needs the process's own standard streams; use --http in-process." });
          io.stderr(`agents mcp serve: ${offered} over stdio, profile ${name}; every session is a plan.\n`);
          let stoppedBy: string | undefined;
          await context.withInterrupt(
            (reason) => {
              stoppedBy = reason;
              void gateway.close(reason);
            },
            async () => {
              const session = await server.serveStdio(gateway, { input: streams.input as Readable, output: streams.output as Writable });
              await session.ended;
            },
          );
          await gateway.close();
          if (stoppedBy !== undefined) context.setExitCode(EXIT_CODES.cancelled);
          return;
        }
        const settings = config.serve?.http ?? {};
        const oauth = settings.oauth;
        const auth =
          oauth === undefined
            ? undefined
            : await server.createResourceServerAuth({
                issuer: oauth.issuer,
                audience: oauth.audience,
                ...(oauth.requiredScopes === undefined ? {} : { requiredScopes: oauth.requiredScopes }),
                ...(oauth.introspection === undefined ? {} : { introspection: oauth.introspection }),
              });
        http = await server.serveHttp(gateway, {
          host: address.host ?? settings.host ?? '127.0.0.1',
          port: address.port,
          ...(settings.path === undefined ? {} : { path: settings.path }),
          ...(settings.publicUrl === undefined ? {} : { publicUrl: settings.publicUrl }),
          allowedHosts: [...(settings.allowedHosts ?? []), ...local.allowHost],
          allowedOrigins: [...(settings.allowedOrigins ?? []), ...local.allowOrigin],
          ...(auth === undefined ? {} : { auth: oauth?.resourceName === undefined ? auth : { ...auth, resourceName: oauth.resourceName } }),
          ...(local.allowUnauthenticated === true ? { allowUnauthenticated: true } : {}),
          ...(settings.maxSessions === undefined ? {} : { maxSessions: settings.maxSessions }),
          ...(settings.maxSessionsPerClient === undefined ? {} : { maxSessionsPerClient: settings.maxSessionsPerClient }),
          ...(settings.requestsPerMinute === undefined ? {} : { requestsPerMinute: settings.requestsPerMinute }),
          ...(settings.clientHeader === undefined ? {} : { clientOf: clientFromHeader(settings.clientHeader) }),
          ...(settings.sessionIdleTimeoutMs === undefined ? {} : { sessionIdleTimeoutMs: settings.sessionIdleTimeoutMs }),
          ...(settings.maxRequestBytes === undefined ? {} : { maxRequestBytes: settings.maxRequestBytes }),
          ...(fleet === undefined ? {} : { fleet: { ...fleet, registry: planRegistry } }),
          logger,
        });
        const running = http;
        io.stdout(
          `Serving MCP at ${running.url.href} (${offered}, profile ${name}${auth === undefined ? '' : ', OAuth'}${fleet === undefined ? '' : `, fleet replica ${fleet.replicaId ?? ''}`.trimEnd()}); every session is a plan. Ctrl-C stops.\n`,
        );
        let stop!: () => void;
        const stopped = new Promise<void>((resolve) => (stop = resolve));
        await context.withInterrupt(
          () => stop(),
          () => stopped,
        );
        await gateway.close();
      } finally {
        await http?.close();
        await built?.dispose();
      }
    });
}
