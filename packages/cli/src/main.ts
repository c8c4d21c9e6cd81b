import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ToolSchemaValidationError } from '@ca/schema';
import { resourceFromPath, type BoundResource, type PlanApprovalPolicy, type ToolExecutionContext } from '@ca/tool-context';
import type { ToolCapability } from '@ca/domain';
import {
  PlanRegistryError,
  ToolRegistrationError,
  capabilityInPlan,
  createApprovalMessage,
  createCancelMessage,
  type DiscoveryResult,
  type PlanRegistry,
  type RegisteredPlan,
  type RuntimeLogger,
  type ToolDescriptor,
  type ToolProgress,
} from '@ca/tool-lifecycle';
import { Command, CommanderError } from 'commander';
import { loadRules, type LoadedRules } from './approval-config';
import { adviseMessage, type AdviceContext } from './cli-advice';
import { buildRuntime, type BuildRuntimeOptions, type BuiltRuntime } from './build-runtime';
import { CliApprovals } from './cli-approvals';
import { CliError } from './cli-error';
import type { CliIo } from './cli-io';
import { createCliLogger } from './cli-logger';
import { createCliRedactor, redactingIo } from './cli-redaction';
import { openPlanRegistry } from './cli-registry';
import { loadConfig, loadRegistryConfig, type AgentsConfig } from './config';
import { describeConfigFile, describeSources, summarizeSources } from './config-sources';
import { EXIT_CODES, type ExitCode } from './exit-codes';
import { FileApprovalStore, approvalKey } from './file-approval-store';
import { FileResultStore } from './file-result-store';
import { FileTokenStore } from './file-token-store';
import { FileToolListCache } from './file-tool-list-cache';
import { formatTable } from './format-table';
import { addMcpCommands } from './mcp-commands';
import { addMcpServeCommand } from './mcp-serve-command';
import { checkPlanFile, formatProblems } from './plan-check';
import {
  answerDurablePlan,
  cancelDurablePlan,
  formatDurablePlans,
  isRunningDurablePlan,
  listDurablePlans,
  loadDurableConfig,
  runDurablePlanFile,
} from './durable-commands';
import { addWorkerCommand } from './worker-command';
import { loadPlanFile, type PlanFile } from './plan-file';
import { inCommandSpan, resolveOtlpEndpoint, startTraceExport, type TraceExport } from './otel-export';
import { checkPlanId, resolveStateDir } from './plan-registry';
import { classify, describeProgress, runPlanFile } from './plan-runner';
import { parseInput } from './read-input';
import { TerminalPrompter } from './terminal-prompter';
import { describeMissingTool } from './tool-lookup';
import { addToolsExportCommand } from './tools-export-command';
import { addToolsLockCommand } from './tools-lock-command';
import { addToolsSearchCommand } from './tools-search-command';

interface GlobalOptions {
  readonly config?: string;
  readonly json?: boolean;
  readonly stateDir?: string;
  readonly registry?: string;
  readonly otelEndpoint?: string;
  readonly verbose?: boolean;
}

/** A failure the command reports with a code of another layer (`TOOL_NOT_FOUND`, …) and its own exit code. */
class CommandFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'CommandFailure';
  }
}

/** The version of this package, from its package.json (shipped beside dist/). */
function packageVersion(): string {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

const HELP_TAIL = `
Configuration: -c <file>, else agents.config.json, .yaml or .yml in the current
folder. Without one, only the built-in tools are on. A configuration file turns
on exactly the sources it names: "builtin" (true or its settings), "custom",
"mcpServers", "skills", "wrapped". 'agents tools list' says which are on.

Plans are announced in a plan registry: the state folder of this machine
(--state-dir), or a Redis server every host shares (--registry redis://…, or
"registry" in the configuration; user and password from REDIS_USERNAME and
REDIS_PASSWORD). Spans go to an OTLP/HTTP collector with --otel-endpoint or
OTEL_EXPORTER_OTLP_ENDPOINT.

Exit codes:
  0    success (every plan step did what it expected; plan check: no problem)
  1    a tool failed, a step did not do what it expected, (tools list) a
       source or MCP server could not be listed, or the plan registry could
       not be reached
  2    invalid usage, configuration, plan file or input; a plan whose check
       found a problem (nothing was run)
  3    the plan's policy or a rule refused a tool (read-only, checkpoint-required,
       a deny rule), or its call was not approved
  4    a tool, plan, running plan or waiting approval request was not found,
       or the tool is unavailable (its MCP server could not be started, its
       schema does not compile)
  130  cancelled: Ctrl-C, 'agents plan cancel', or the plan's deadline
`;

/** Installs Ctrl-C handling for the duration of `work`: the first cancels, a second exits at once. */
async function withInterrupt<T>(cancel: (reason: string) => void, work: () => Promise<T>): Promise<T> {
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++;
    if (interrupts > 1) process.exit(EXIT_CODES.cancelled);
    cancel(`interrupted (${signal})`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A tool may wait on nothing but its cancellation signal; the command must
  // stay alive (and cancellable) until it settles instead of exiting silently.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    return await work();
  } finally {
    clearInterval(keepAlive);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function parseResource(text: string, cwd: string, previous: BoundResource[] = []): BoundResource[] {
  const match = /^([A-Za-z0-9_.-]+)=(.+?)(?::(read|write))?$/.exec(text);
  if (match === null) {
    throw new CliError({ code: 'CLI_USAGE', message: `--resource ${text}: expected id=path[:read|write], e.g. --resource work=./tmp:write.` });
  }
  const [, id, location, access] = match as unknown as [string, string, string, 'read' | 'write' | undefined];
  return [...previous, resourceFromPath({ id, path: path.resolve(cwd, location), access: access ?? 'read' })];
}

/** `agents plan run --durable [--detach]`. */
interface DurableFlags {
  readonly durable?: boolean;
  readonly detach?: boolean;
}

/** Options of the commands that run tools and may ask for approval. */
interface ApprovalFlags {
  readonly approve: string[];
  readonly rules: string[];
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** Who answers from this process, for traces: the user's name. */
function whoAmI(env: Readonly<Record<string, string | undefined>>): string {
  try {
    return os.userInfo().username;
  } catch {
    return env['USER'] ?? env['USERNAME'] ?? 'someone';
  }
}

/** True when a plan with this policy and these rules may ask for approval at all. */
function mayAsk(policy: PlanApprovalPolicy | undefined, rules: LoadedRules): boolean {
  return (
    rules.definitions.length > 0 ||
    (policy !== undefined && (policy.always === true || (policy.capabilities?.length ?? 0) > 0 || (policy.tools?.length ?? 0) > 0))
  );
}

/** The tools a plan file names, in step order. */
function toolsOf(plan: PlanFile): string[] {
  return [...new Set(plan.steps.flatMap((step) => (step.kind === 'tool' ? [step.tool] : [])))];
}

/** The exit code for an outcome of one execution. */
function exitCodeOf(outcome: string): ExitCode {
  if (outcome === 'cancelled') return EXIT_CODES.cancelled;
  if (outcome === 'refused') return EXIT_CODES.refused;
  if (outcome === 'not-found') return EXIT_CODES.notFound;
  return EXIT_CODES.failed;
}

/** Where a thrown error came from, for `--verbose`: the stack of its cause, else its own. */
function describeCause(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  const subject = cause instanceof Error ? cause : error instanceof Error ? error : undefined;
  return subject?.stack === undefined ? '' : `${cause instanceof Error ? 'cause: ' : ''}${subject.stack}\n`;
}

/**
 * Runs the `agents` command with `argv` (without the node and script
 * arguments) and resolves to its exit code. Never calls `process.exit`
 * except on a second Ctrl-C.
 */
export async function main(argv: readonly string[], given: CliIo): Promise<ExitCode> {
  // The one choke point of what the command prints: every line of stderr, usage errors included, and known secrets on stdout.
  const redactor = createCliRedactor(argv, given.env);
  const io = redactingIo(given, redactor);
  let exitCode: ExitCode = EXIT_CODES.ok;
  let built: BuiltRuntime | undefined;
  let registry: PlanRegistry | undefined;
  let traceExport: TraceExport | undefined;
  const program = new Command('agents')
    .description('Run tools from MCP servers, Agent Skills, built-ins, custom and wrapped tools through one lifecycle, inside plans.')
    .version(packageVersion(), '-V, --version', 'print the version of @ca/cli')
    .option('-c, --config <file>', 'configuration file (default: agents.config.json|yaml|yml in the current folder)')
    .option('--json', 'machine-readable output')
    .option('--state-dir <dir>', 'where running plans are announced (default $AGENTS_STATE_DIR or ~/.local/state/agents)')
    .option(
      '--registry <local|redis://…>',
      "the plan registry: 'local' (the state folder) or a Redis server shared by every host (default: the configuration's \"registry\", else local)",
    )
    .option('--otel-endpoint <url>', 'send OpenTelemetry spans to this OTLP/HTTP collector (default $OTEL_EXPORTER_OTLP_ENDPOINT)')
    .option('-v, --verbose', 'log debug details to stderr, and say which sources the configuration turns on')
    .addHelpText('after', HELP_TAIL)
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(run agents --help for usage)');

  const globals = (): GlobalOptions => program.opts<GlobalOptions>();
  /** A loaded configuration, its secrets now known to the redactor. */
  const learned = <T>(config: T): T => {
    redactor.learnConfiguration(config);
    return config;
  };
  const verbose = (): boolean => globals().verbose === true;
  // --json may be given before the command or after it.
  const wantsJson = (local: { readonly json?: boolean }): boolean => local.json === true || globals().json === true;
  /** The plan registry (opened once per command, closed when it ends); the configuration is read only when --registry is not given. */
  const planRegistry = async (config?: AgentsConfig): Promise<PlanRegistry> => {
    registry ??= await openPlanRegistry({
      option: globals().registry,
      config:
        config ??
        (globals().registry === undefined
          ? learned(loadRegistryConfig({ ...(globals().config === undefined ? {} : { file: globals().config as string }), cwd: io.cwd, env: io.env }))
          : undefined),
      stateDir: resolveStateDir(globals().stateDir, io.env),
      env: io.env,
      logger: createCliLogger(io.stderr, verbose()),
    });
    return registry;
  };
  /** Starts sending spans to a collector, when one is configured (before any span of the command). */
  const startTracing = (): void => {
    const endpoint = resolveOtlpEndpoint(globals().otelEndpoint, io.env);
    if (endpoint !== undefined && traceExport === undefined)
      traceExport = startTraceExport(endpoint, { env: io.env, serviceVersion: packageVersion(), stderr: io.stderr });
  };
  const loadConfiguration = (): AgentsConfig => {
    const options = globals();
    const config = learned(loadConfig({ ...(options.config === undefined ? {} : { file: options.config }), cwd: io.cwd, env: io.env }));
    if (options.verbose === true) io.stderr(`${summarizeSources(config, io.cwd)}\n`);
    return config;
  };
  const adviceFor = (command: AdviceContext['command'], config: AgentsConfig, inputSchema?: unknown): AdviceContext => ({
    command,
    ...(config.file === undefined ? {} : { configFile: describeConfigFile(config, io.cwd) }),
    ...(inputSchema === undefined ? {} : { inputSchema }),
  });

  /**
   * Builds the runtime a command needs and discovers its tools. Given the
   * tools the command will use, only their sources are built (a built-in or
   * custom tool starts no MCP server); when one of them is not found there,
   * every configured source is built after all, to find it elsewhere or to
   * suggest the closest names.
   */
  // One person at one terminal: every question of the command (approvals, MCP forms and pages, sign-ins) goes through one prompter, in turn.
  let prompter: TerminalPrompter | undefined;
  /** True when the command's plan takes answers through the plan registry: the terminal says so under each request. */
  let answersThroughRegistry = false;
  const terminal = (logger: RuntimeLogger): TerminalPrompter =>
    (prompter ??= new TerminalPrompter({
      input: io.terminalInput,
      write: io.stderr,
      logger,
      approvalHint: (request) => (answersThroughRegistry ? `(or from another terminal: agents plan approve ${request.planId} ${request.id})` : undefined),
    }));
  /** True for a command that lists every MCP server anew (`tools list`, `tools search --refresh`) instead of reading their cached lists. */
  let refreshToolLists = false;
  // MCP servers ask their questions on the terminal, keep their sign-ins under the state folder, and their tool lists too.
  const mcpSupport = (logger: RuntimeLogger) => ({
    interactionHandler: terminal(logger),
    tokenStore: new FileTokenStore(path.join(resolveStateDir(globals().stateDir, io.env), 'mcp-auth')),
    toolListCache: new FileToolListCache(path.join(resolveStateDir(globals().stateDir, io.env), 'mcp-tools'), { refresh: refreshToolLists }),
  });
  /** Where outputs over the configuration's runtime.outputBudget are kept: results/ of the state folder. */
  const resultStore = (config: AgentsConfig) =>
    config.runtime?.outputBudget === undefined ? {} : { resultStore: new FileResultStore(path.join(resolveStateDir(globals().stateDir, io.env), 'results')) };
  const open = async (
    config: AgentsConfig,
    tools?: readonly string[],
    settings: { readonly planRegistry?: PlanRegistry; readonly approval?: BuildRuntimeOptions['approval'] } = {},
  ): Promise<{ runtime: BuiltRuntime['runtime']; validator: BuiltRuntime['validator']; discovery: DiscoveryResult }> => {
    const logger = createCliLogger(io.stderr, verbose());
    const mcp = mcpSupport(logger);
    const everySource = { mcp, ...resultStore(config), ...settings };
    built = await buildRuntime(config, logger, tools === undefined ? everySource : { ...everySource, tools });
    let discovery = await built.runtime.discover();
    const notFound = (name: string) =>
      !discovery.tools.some((tool) => tool.name === name) && describeMissingTool(name, discovery, config, io.cwd).code === 'TOOL_NOT_FOUND';
    if (tools !== undefined && built.partial && tools.some(notFound)) {
      await built.dispose();
      built = undefined; // not disposed twice if the next build throws
      built = await buildRuntime(config, logger, everySource);
      discovery = await built.runtime.discover();
    }
    // A wrapped entry that names no tool is a mistake in the configuration, not a failing source.
    const misconfigured = discovery.sourceErrors.find((item) => CliError.isInstance(item.error));
    if (misconfigured !== undefined) throw misconfigured.error;
    return { runtime: built.runtime, validator: built.validator, discovery };
  };
  /**
   * Who answers the approval requests of a command: `--approve` patterns, the
   * person at the terminal (through the command's one prompter) and, for
   * `plan run`, `agents plan approve|deny` through the plan registry — beside
   * the terminal, or instead of it with `--await-approval`. Undefined when
   * nobody can answer, so that the runtime refuses such calls (no handler)
   * and the error says what to do.
   */
  const approvalHandler = (flags: ApprovalFlags & { readonly awaitApproval?: boolean }, planRun: boolean): CliApprovals | undefined => {
    const onTerminal = io.terminalInput !== undefined;
    answersThroughRegistry = planRun;
    const awaitRegistry = planRun && !onTerminal && flags.awaitApproval === true;
    if (!onTerminal && !awaitRegistry && flags.approve.length === 0) return undefined;
    return new CliApprovals({
      approve: flags.approve,
      ...(onTerminal ? { terminal: { prompter: terminal(createCliLogger(io.stderr, verbose())), who: `${whoAmI(io.env)} (terminal)` } } : {}),
      awaitRegistry,
      notify: io.stderr,
    });
  };
  /** Where approvals are kept: the state directory, signed with this user's key. */
  const approvalStore = (): { store: FileApprovalStore; key: string } => {
    const stateDir = resolveStateDir(globals().stateDir, io.env);
    return { store: new FileApprovalStore(stateDir), key: approvalKey(stateDir, io.env) };
  };

  const requireTool = (name: string, discovery: DiscoveryResult, config: AgentsConfig) => {
    const descriptor = discovery.tools.find((tool) => tool.name === name);
    if (descriptor !== undefined) return descriptor;
    const missing = describeMissingTool(name, discovery, config, io.cwd);
    throw new CommandFailure(missing.code, missing.message, EXIT_CODES.notFound);
  };

  const tools = program.command('tools').description('list, describe and run tools');
  tools
    .command('list')
    .description('discover the tools of every configured source, and say which sources are on')
    .option('--json', 'machine-readable output')
    .action(async (local: { json?: boolean }) => {
      const config = loadConfiguration();
      // The list is the place to see every server as it is now: each is listed anew (and its list cached).
      refreshToolLists = true;
      const { discovery } = await open(config);
      const failedServers = discovery.unavailable.filter((item) => item.source === 'mcp' && /^mcp\.[^.]+$/.test(item.name));
      if (discovery.sourceErrors.length > 0 || failedServers.length > 0) exitCode = EXIT_CODES.failed;
      if (wantsJson(local)) {
        const configuration = { file: config.file ?? null, sources: describeSources(config) };
        io.stdout(
          `${JSON.stringify({ ...discovery, configuration }, (key, value: unknown) => (key === 'error' && value instanceof Error ? { name: value.name, code: (value as { code?: unknown }).code, message: value.message } : value), 2)}\n`,
        );
        return;
      }
      // A sandboxed tool's capability follows the plan: 'by plan' in the table, each plan's in `tools describe`.
      const yesNo = (tool: ToolDescriptor, value: boolean): string => (tool.sandboxed === undefined ? (value ? 'yes' : 'no') : 'by plan');
      io.stdout(
        formatTable(
          ['name', 'source', 'writes', 'checkpointable', 'description'],
          discovery.tools.map((tool) => [
            tool.name,
            tool.source,
            yesNo(tool, tool.capability.writes),
            yesNo(tool, tool.capability.checkpointable),
            tool.description,
          ]),
        ),
      );
      if (discovery.tools.some((tool) => tool.sandboxed !== undefined)) {
        io.stdout(
          "\nby plan: the tool's programs run in the kernel sandbox, so what it can do follows the plan (it writes in a plain plan, nothing in a read-only one); see 'agents tools describe <name>'.\n",
        );
      }
      const advice = adviceFor('tools run', config);
      const serverOf = (error: unknown) =>
        typeof (error as { server?: unknown })?.server === 'string' ? { server: (error as { server: string }).server } : {};
      for (const item of discovery.unavailable) {
        io.stderr(`unavailable: ${item.name} — ${adviseMessage(item.error?.code ?? 'TOOL_UNAVAILABLE', item.reason, advice, serverOf(item.error))}\n`);
      }
      for (const item of discovery.sourceErrors) {
        io.stderr(`source ${item.sourceId} failed: ${adviseMessage(item.error.code ?? 'UNKNOWN', item.error.message, advice, serverOf(item.error))}\n`);
      }
      io.stdout(
        `\n${discovery.tools.length} tool(s)${discovery.unavailable.length > 0 ? `, ${discovery.unavailable.length} unavailable` : ''}. ${summarizeSources(config, io.cwd)}\n`,
      );
    });

  tools
    .command('describe <name>')
    .description("show a tool's schemas and capabilities")
    .option('--json', 'machine-readable output')
    .action(async (name: string, local: { json?: boolean }) => {
      const config = loadConfiguration();
      const { discovery } = await open(config, [name]);
      const descriptor = requireTool(name, discovery, config);
      if (wantsJson(local)) {
        io.stdout(`${JSON.stringify(descriptor, null, 2)}\n`);
        return;
      }
      const describeCapability = (capability: ToolCapability) =>
        `writes=${capability.writes} checkpointable=${capability.checkpointable} idempotent=${capability.idempotent} destructive=${capability.destructive} openWorld=${capability.openWorld}`;
      const plain = { readOnly: false, requireCheckpoint: false };
      const capabilities =
        descriptor.sandboxed === undefined
          ? `capability: ${describeCapability(descriptor.capability)}\n`
          : 'capability (the kernel sandbox: it follows the plan):\n' +
            `  plain plan:       ${describeCapability(capabilityInPlan(descriptor, plain))}\n` +
            `  read-only plan:   ${describeCapability(capabilityInPlan(descriptor, { ...plain, readOnly: true }))}\n` +
            `  checkpoint plan:  ${describeCapability(capabilityInPlan(descriptor, { ...plain, requireCheckpoint: true }))}\n` +
            `  network denied:   openWorld=${capabilityInPlan(descriptor, { ...plain, network: 'deny' }).openWorld}\n`;
      io.stdout(
        `${descriptor.name}  (${descriptor.source}${descriptor.version ? ` ${descriptor.version}` : ''})\n\n${descriptor.description}\n\n` +
          capabilities +
          `${descriptor.timeoutMs === undefined ? '' : `timeout: ${descriptor.timeoutMs} ms\n`}` +
          `\ninput schema:\n${JSON.stringify(descriptor.inputSchema ?? true, null, 2)}\n\noutput schema:\n${JSON.stringify(descriptor.outputSchema ?? true, null, 2)}\n`,
      );
    });

  tools
    .command('run <name>')
    .description('run one tool in a one-step plan; progress the tool reports goes to stderr')
    .option('-i, --input <json|@file>', `the input, as JSON or @file.json (at most 4 MiB)`, '{}')
    .option('--read-only', 'run in a read-only plan')
    .option('--require-checkpoint', 'run in a plan that requires checkpointable tools')
    .option('--no-network', 'run in a plan that denies the network: open-world tools are refused')
    .option('--timeout <ms>', 'deadline of the execution in ms')
    .option(
      '--resource <id=path[:read|write]>',
      'bind a folder or file (repeatable)',
      (value: string, previous: BoundResource[]) => parseResource(value, io.cwd, previous),
      [] as BoundResource[],
    )
    .option('--plan-id <id>', 'id of the plan')
    .option('--approve <pattern>', 'approve calls of tools matching this glob without asking (repeatable)', collect, [] as string[])
    .option('--rules <file>', 'add the rules of this file, JSON or YAML (repeatable)', collect, [] as string[])
    .option('--json', 'machine-readable output')
    .action(
      async (
        name: string,
        local: ApprovalFlags & {
          input: string;
          readOnly?: boolean;
          requireCheckpoint?: boolean;
          network: boolean;
          timeout?: string;
          resource: BoundResource[];
          planId?: string;
          json?: boolean;
        },
      ) => {
        const input = parseInput(local.input, io.cwd);
        const timeoutMs = local.timeout === undefined ? undefined : Number(local.timeout);
        if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0 && timeoutMs <= 2_147_483_647)) {
          throw new CliError({ code: 'CLI_USAGE', message: `--timeout ${local.timeout}: expected a positive whole number of milliseconds.` });
        }
        if (local.planId !== undefined) checkPlanId(local.planId);
        const config = loadConfiguration();
        const rules = loadRules(config, local.rules, io);
        const approvalPolicy = config.approval?.policy;
        const asks = mayAsk(approvalPolicy, rules);
        // A one-step plan keeps its approvals only when it has an id to be run again with.
        const kept = asks && local.planId !== undefined ? approvalStore() : undefined;
        const handler = asks ? approvalHandler(local, false) : undefined;
        startTracing();
        const { runtime: rt, discovery } = await open(config, [name], {
          approval: { rules: rules.definitions, ...(handler === undefined ? {} : { handler }), ...(kept === undefined ? {} : kept) },
        });
        const descriptor = requireTool(name, discovery, config);
        const advice = adviceFor('tools run', config, descriptor.inputSchema);
        const resources = new Map(config.resources.map((resource) => [resource.id, resource]));
        for (const resource of local.resource) resources.set(resource.id, resource);
        const started = performance.now();
        const onProgress = (progress: ToolProgress) => io.stderr(`${name}: progress ${describeProgress(progress, performance.now() - started)}\n`);
        let planCtx: ToolExecutionContext | undefined;
        const runTool = () =>
          withInterrupt(
            (reason) => planCtx?.cancellationToken.cancel(reason),
            () =>
              rt.runPlan(
                {
                  ...(local.planId === undefined ? {} : { planId: local.planId }),
                  policy: {
                    readOnly: local.readOnly === true,
                    requireCheckpoint: local.requireCheckpoint === true,
                    network: local.network === false ? 'deny' : 'allow',
                    ...(approvalPolicy === undefined ? {} : { approval: approvalPolicy }),
                  },
                  resources: [...resources.values()],
                },
                async (ctx) => {
                  planCtx = ctx;
                  const json = wantsJson(local);
                  try {
                    const result = await rt.execute(name, input, ctx, timeoutMs === undefined ? { onProgress } : { timeoutMs, onProgress });
                    if (result.ok) {
                      exitCode = EXIT_CODES.ok;
                      io.stdout(
                        json
                          ? `${JSON.stringify(result, null, 2)}\n`
                          : `${typeof result.output === 'string' ? result.output : JSON.stringify(result.output, null, 2)}\n`,
                      );
                      await kept?.store.forget(ctx.planId);
                      return;
                    }
                    const { outcome, code, message } = classify(result.error, advice, ctx.cancellationToken.isCancelled);
                    const invalidInput = ToolSchemaValidationError.isInstance(result.error) && result.error.direction === 'input';
                    exitCode = invalidInput ? EXIT_CODES.usage : exitCodeOf(outcome);
                    if (json) io.stdout(`${JSON.stringify({ ...result, error: { name: result.error.name, code, message } }, null, 2)}\n`);
                    else io.stderr(`${code}: ${message}\n`);
                  } catch (error) {
                    const { outcome, code, message } = classify(error, advice, ctx.cancellationToken.isCancelled);
                    io.stderr(`${code}: ${message}\n${verbose() ? describeCause(error) : ''}`);
                    exitCode = exitCodeOf(outcome);
                  }
                },
              ),
          );
        await inCommandSpan('agents tools run', { 'gen_ai.tool.name': name }, async (span) => {
          await runTool();
          if (planCtx !== undefined) span.setAttribute('ca.plan.id', planCtx.planId);
          span.setAttribute('ca.exit_code', exitCode);
        });
      },
    );

  addToolsLockCommand(tools, {
    io,
    loadConfiguration,
    createLogger: () => createCliLogger(io.stderr, verbose()),
    setExitCode: (code) => {
      exitCode = code;
    },
  });

  const plan = program.command('plan').description('check, run, list and cancel plans, and answer their approval requests');
  plan
    .command('check <file>')
    .description(
      'check a plan file against the configuration without running anything: every tool exists, the policy lets it run, no deny rule refuses it, its input matches its schema',
    )
    .option('--rules <file>', 'add the rules of this file, JSON or YAML (repeatable)', collect, [] as string[])
    .option('--json', 'machine-readable output')
    .action(async (file: string, local: { json?: boolean; rules: string[] }) => {
      const planFile = loadPlanFile(file, { cwd: io.cwd, env: io.env });
      const config = loadConfiguration();
      const rules = loadRules(config, local.rules, io);
      const { discovery, validator } = await open(config, toolsOf(planFile));
      const problems = checkPlanFile(planFile, discovery, { baseResources: config.resources, config, cwd: io.cwd, validator, rules: rules.rules });
      const blocking = problems.filter((problem) => problem.blocking);
      exitCode = blocking.length > 0 ? EXIT_CODES.usage : EXIT_CODES.ok;
      if (wantsJson(local)) {
        io.stdout(`${JSON.stringify({ file: planFile.file, ok: blocking.length === 0, problems }, null, 2)}\n`);
        return;
      }
      const steps = planFile.steps.length;
      if (problems.length === 0) {
        io.stdout(`Plan ${file}: ${steps} step(s), no problem found.\n`);
        return;
      }
      io.stdout(
        `Plan ${file}: ${steps} step(s), ${blocking.length} problem(s)${problems.length > blocking.length ? `, ${problems.length - blocking.length} warning(s)` : ''}:\n${formatProblems(problems)}`,
      );
    });

  plan
    .command('run <file>')
    .description(
      'check a plan file (JSON or YAML), then run it: policy, bound resources, steps of tool + input; a line per step (also in a pipe), a summary table',
    )
    .option('--plan-id <id>', "id of the plan (default: the file's id, else a random UUID)")
    .option('--traces <file.jsonl>', 'write the traces as JSON Lines')
    .option('--approve <pattern>', 'approve calls of tools matching this glob without asking (repeatable)', collect, [] as string[])
    .option('--rules <file>', 'add the rules of this file, JSON or YAML (repeatable)', collect, [] as string[])
    .option('--await-approval', "off a terminal, wait for 'agents plan approve|deny' from another terminal instead of refusing calls that need approval")
    .option('--durable', 'run it through Restate on the workers of the configuration\'s "durable" section (agents worker): it survives the death of its host')
    .option('--detach', '(--durable) start the plan and return; agents plan list shows where it runs')
    .option('--json', 'machine-readable output')
    .action(async (file: string, local: ApprovalFlags & { planId?: string; traces?: string; json?: boolean; awaitApproval?: boolean } & DurableFlags) => {
      if (local.planId !== undefined) checkPlanId(local.planId);
      const loaded = loadPlanFile(file, { cwd: io.cwd, env: io.env });
      const config = loadConfiguration();
      if (local.durable === true || loaded.durable === true || config.durable?.always === true) {
        const approvalPolicy = loaded.policy.approval ?? config.approval?.policy;
        const durablePlan: PlanFile = approvalPolicy === undefined ? loaded : { ...loaded, policy: { ...loaded.policy, approval: approvalPolicy } };
        exitCode = await runDurablePlanFile(
          durablePlan,
          config,
          { ...(local.planId === undefined ? {} : { planId: local.planId }), ...(local.detach === true ? { detach: true } : {}) },
          { io, json: wantsJson(local), withInterrupt },
        );
        return;
      }
      if (local.detach === true) throw new CliError({ code: 'CLI_USAGE', message: '--detach starts a durable plan; add --durable.' });
      const rules = loadRules(config, local.rules, io);
      const approvalPolicy = loaded.policy.approval ?? config.approval?.policy;
      const planFile: PlanFile = approvalPolicy === undefined ? loaded : { ...loaded, policy: { ...loaded.policy, approval: approvalPolicy } };
      const asks = mayAsk(approvalPolicy, rules);
      const kept = asks ? approvalStore() : undefined;
      // Answers through the plan registry (agents plan approve|deny): on a terminal beside the question there, and off one with --await-approval.
      const fromRegistry = asks && config.approval?.answersFromRegistry !== false;
      if (local.awaitApproval === true && !fromRegistry && asks) {
        throw new CliError({
          code: 'CLI_USAGE',
          message: '--await-approval waits for answers through the plan registry, but the configuration turns them off (approval.answersFromRegistry: false).',
        });
      }
      const handler = asks ? approvalHandler(local, fromRegistry) : undefined;
      startTracing();
      const plans = await planRegistry(config);
      const {
        runtime: rt,
        discovery,
        validator,
      } = await open(config, toolsOf(planFile), {
        planRegistry: plans,
        approval: {
          rules: rules.definitions,
          registryApprovals: fromRegistry,
          ...(handler === undefined ? {} : { handler }),
          ...(kept === undefined ? {} : kept),
        },
      });
      const problems = checkPlanFile(planFile, discovery, { baseResources: config.resources, config, cwd: io.cwd, validator, rules: rules.rules });
      const blocking = problems.filter((problem) => problem.blocking);
      if (blocking.length > 0) {
        throw new CliError({
          code: 'CLI_PLAN_CHECK_FAILED',
          message: `Plan ${file} cannot run as written; no step was run:\n${formatProblems(problems).trimEnd()}\nFix the plan file or the configuration ('agents plan check ${file}' checks again).`,
        });
      }
      for (const problem of problems) io.stderr(`warning: step ${problem.step} (${problem.id}) ${problem.tool}: ${problem.code}: ${problem.message}\n`);
      let planCtx: ToolExecutionContext | undefined;
      const configFile = config.file === undefined ? undefined : describeConfigFile(config, io.cwd);
      // The runtime registers the plan in the registry before its first step
      // and withdraws it when it ends; a cancel from the registry cancels its token.
      const report = await inCommandSpan('agents plan run', { 'ca.plan.file': planFile.file }, async (span) => {
        const ran = await withInterrupt(
          (reason) => planCtx?.cancellationToken.cancel(reason),
          () =>
            runPlanFile(rt, planFile, config.resources, io, {
              ...(local.planId === undefined ? {} : { planId: local.planId }),
              ...(local.traces === undefined ? {} : { tracesFile: local.traces }),
              ...(configFile === undefined ? {} : { configFile }),
              json: wantsJson(local),
              verbose: verbose(),
              labels: { file: planFile.file },
              onStart: (ctx) => {
                planCtx = ctx;
                span.setAttribute('ca.plan.id', ctx.planId);
              },
            }),
        );
        span.setAttribute('ca.exit_code', ran.exitCode);
        return ran;
      });
      exitCode = report.exitCode;
      // A plan that did all it was to do is done: its approvals are not kept for another run.
      if (exitCode === EXIT_CODES.ok) await kept?.store.forget(report.planId);
    });
  /** The configuration's durable section, for commands that look for a plan in Restate as well as in the registry. */
  const durableSection = () =>
    learned(loadDurableConfig({ ...(globals().config === undefined ? {} : { file: globals().config as string }), cwd: io.cwd, env: io.env }));

  plan
    .command('cancel <plan-id>')
    .description('cancel a running plan (from another terminal)')
    .action(async (planId: string) => {
      checkPlanId(planId);
      const durable = durableSection();
      if (durable !== undefined && (await isRunningDurablePlan(durable, planId, io))) {
        await cancelDurablePlan(durable, planId, io);
        return;
      }
      const plans = await planRegistry();
      const sentBy = `agents plan cancel on ${os.hostname()}, pid ${process.pid}`;
      try {
        const result = await plans.send(createCancelMessage(planId, `cancelled by 'agents plan cancel ${planId}'`, sentBy));
        io.stdout(
          result.delivery === 'delivered'
            ? `Cancellation of plan ${planId} requested.\n`
            : `Cancellation of plan ${planId} requested; its host is not connected to the registry right now and gets it when it reconnects.\n`,
        );
      } catch (error) {
        if (!PlanRegistryError.isInstance(error) || error.code !== 'PLAN_REGISTRY_PLAN_NOT_FOUND') throw error;
        throw new CliError({
          code: 'CLI_PLAN_NOT_FOUND',
          exitCode: EXIT_CODES.notFound,
          message: `No running plan has id '${planId}'${error.reason === undefined ? '' : ` (${error.reason})`} in ${plans.description}. 'agents plan list' shows the running plans.`,
          cause: error,
        });
      }
    });

  /**
   * Answers an approval request of a running plan through the plan registry:
   * the request is found in the plan's registration (the only one it waits
   * for when no id is given), so a wrong id is reported here, not lost.
   */
  const answerRequest = async (
    planId: string,
    requestId: string | undefined,
    answer: { readonly decision: 'approve'; readonly scope: 'once' | 'tool' | 'call' } | { readonly decision: 'deny'; readonly reason?: string },
  ): Promise<void> => {
    checkPlanId(planId);
    const durable = durableSection();
    if (durable !== undefined && (await isRunningDurablePlan(durable, planId, io))) {
      await answerDurablePlan(durable, planId, requestId, answer, `${whoAmI(io.env)} (agents plan ${answer.decision} on ${os.hostname()})`.slice(0, 200), io);
      return;
    }
    const plans = await planRegistry();
    const notFound = (cause?: unknown): CliError =>
      new CliError({
        code: 'CLI_PLAN_NOT_FOUND',
        exitCode: EXIT_CODES.notFound,
        message: `No running plan has id '${planId}' in ${plans.description}. 'agents plan list' shows the running plans.`,
        ...(cause === undefined ? {} : { cause }),
      });
    const running = (await plans.list()).find((entry) => entry.planId === planId);
    if (running === undefined) throw notFound();
    const request = pendingRequest(running, requestId);
    const command = `agents plan ${answer.decision}`;
    const sentBy = `${whoAmI(io.env)} (${command} on ${os.hostname()})`.slice(0, 200);
    let delivery: 'delivered' | 'queued';
    try {
      ({ delivery } = await plans.send(createApprovalMessage({ planId, requestId: request.requestId, sentBy, ...answer })));
    } catch (error) {
      if (PlanRegistryError.isInstance(error) && error.code === 'PLAN_REGISTRY_PLAN_NOT_FOUND') throw notFound(error);
      throw error;
    }
    const subject = `request ${request.requestId} (${request.toolName}) of plan ${planId}`;
    io.stdout(
      answer.decision === 'approve'
        ? `Approved ${subject}${answer.scope === 'once' ? '' : ` for the rest of the plan (${answer.scope})`}.`
        : `Denied ${subject}.`,
    );
    io.stdout(delivery === 'delivered' ? '\n' : ` Its host is not connected to the registry right now and gets the answer when it reconnects.\n`);
  };

  plan
    .command('approve <plan-id> [request-id]')
    .description(
      'approve an approval request of a running plan (the only one it waits for, when no id is given): in another terminal, or on any host with a shared registry',
    )
    .option('--for <scope>', 'once (default), tool (this tool for the rest of the plan) or call (these arguments for the rest of the plan)', 'once')
    .action(async (planId: string, requestId: string | undefined, local: { for: string }) => {
      const scope = local.for;
      if (scope !== 'once' && scope !== 'tool' && scope !== 'call') {
        throw new CliError({ code: 'CLI_USAGE', message: `--for ${scope}: expected once, tool or call.` });
      }
      await answerRequest(planId, requestId, { decision: 'approve', scope });
    });

  plan
    .command('deny <plan-id> [request-id]')
    .description('deny an approval request of a running plan (the only one it waits for, when no id is given)')
    .option('--reason <text>', 'why, for the trace and the error the plan reports (at most 1,000 characters)')
    .action(async (planId: string, requestId: string | undefined, local: { reason?: string }) => {
      // One line of text: control characters would not pass the registry's checks.
      const reason = local.reason
        // eslint-disable-next-line no-control-regex
        ?.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ')
        .trim()
        .slice(0, 1_000);
      await answerRequest(planId, requestId, { decision: 'deny', ...(reason === undefined || reason === '' ? {} : { reason }) });
    });

  plan
    .command('list')
    .description('show running plans, and the durable plans Restate runs (their host, state, and how many times they were resumed)')
    .option('--json', 'machine-readable output')
    .action(async (local: { json?: boolean }) => {
      const plans = await (await planRegistry()).list();
      const durable = durableSection();
      const durablePlans = durable === undefined ? undefined : await listDurablePlans(durable, io);
      if (wantsJson(local)) io.stdout(`${JSON.stringify(durablePlans === undefined ? plans : { plans, durable: durablePlans }, null, 2)}\n`);
      else if (durablePlans !== undefined && durablePlans.length > 0 && plans.length === 0) io.stdout(formatDurablePlans(durablePlans));
      else if (plans.length === 0) io.stdout('No plan is running.\n');
      else {
        io.stdout(
          formatTable(
            ['plan', 'pid', 'host', 'started', 'steps', 'policy', 'tools', 'waits for', 'file'],
            plans.map((entry) => [
              entry.planId,
              String(entry.pid),
              entry.host,
              entry.startedAt,
              String(entry.stepsDone),
              describePolicy(entry.policy),
              entry.tools.join(', '),
              (entry.pendingApprovals ?? []).map((request) => `approval ${request.requestId} (${request.toolName})`).join(', '),
              entry.labels['file'] ?? '',
            ]),
            100,
          ),
        );
        if (durablePlans !== undefined && durablePlans.length > 0) io.stdout(`\n${formatDurablePlans(durablePlans)}`);
      }
    });

  addWorkerCommand(program, {
    io,
    loadConfiguration,
    startTracing,
    createLogger: () => createCliLogger(io.stderr, verbose()),
    stateDir: () => resolveStateDir(globals().stateDir, io.env),
    setExitCode: (code) => {
      exitCode = code;
    },
    withInterrupt,
  });

  addToolsExportCommand(tools, { io, loadConfiguration, open: (config) => open(config) });
  addToolsSearchCommand(tools, {
    io,
    loadConfiguration,
    open: (config) => open(config),
    wantsJson,
    refreshToolLists: () => {
      refreshToolLists = true;
    },
    setExitCode: (code) => {
      exitCode = code;
    },
  });

  addMcpCommands(program, {
    io,
    loadConfiguration,
    open: (config, tools) => open(config, tools),
    wantsJson,
    createLogger: () => createCliLogger(io.stderr, verbose()),
    mcpSupport,
    setExitCode: (code) => {
      exitCode = code;
    },
    withInterrupt,
  });

  addMcpServeCommand(program.commands.find((command) => command.name() === 'mcp') as Command, {
    io,
    loadConfiguration,
    planRegistry,
    startTracing,
    createLogger: () => createCliLogger(io.stderr, verbose()),
    stateDir: () => resolveStateDir(globals().stateDir, io.env),
    parseResource: (text, previous) => parseResource(text, io.cwd, previous),
    setExitCode: (code) => {
      exitCode = code;
    },
    withInterrupt,
    version: packageVersion(),
  });

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    exitCode = report(error, io, verbose());
  } finally {
    prompter?.close();
    await built?.dispose();
    await registry?.close();
    await traceExport?.shutdown();
  }
  return exitCode;
}

/**
 * The waiting request an answer is for: the one named, or the only one.
 * @throws CliError `CLI_APPROVAL_NOT_FOUND` (exit 4) naming the requests that wait, if any.
 */
function pendingRequest(plan: RegisteredPlan, requestId: string | undefined): { readonly requestId: string; readonly toolName: string } {
  const pending = plan.pendingApprovals ?? [];
  const named = pending.map((request) => `${request.requestId} (${request.toolName})`).join(', ');
  const fail = (message: string): never => {
    throw new CliError({ code: 'CLI_APPROVAL_NOT_FOUND', exitCode: EXIT_CODES.notFound, message });
  };
  if (pending.length === 0) {
    return fail(
      `Plan '${plan.planId}' waits for no approval request: none is pending, or it takes no answers through the plan registry (it runs off a terminal without --await-approval, or its configuration says approval.answersFromRegistry: false).`,
    );
  }
  if (requestId === undefined) {
    if (pending.length > 1) return fail(`Plan '${plan.planId}' waits for ${pending.length} approval requests; name one: ${named}.`);
    return pending[0] as { requestId: string; toolName: string };
  }
  return (
    pending.find((request) => request.requestId === requestId) ??
    fail(`Plan '${plan.planId}' waits for no approval request '${requestId}'; it waits for ${named}.`)
  );
}

/**
 * `read-only, checkpoints, network: deny`: what restricts the plan, for the
 * list. Other fields a policy gains are shown as `name: value`, unless they
 * only allow (`allow`, `false`).
 */
function describePolicy(policy: Readonly<Record<string, string | number | boolean>>): string {
  const words: string[] = [];
  if (policy['readOnly'] === true) words.push('read-only');
  if (policy['requireCheckpoint'] === true) words.push('checkpoints');
  for (const [key, value] of Object.entries(policy)) {
    if (key === 'readOnly' || key === 'requireCheckpoint' || value === false || value === 'allow') continue;
    words.push(value === true ? key : `${key}: ${String(value)}`);
  }
  return words.length === 0 ? 'read-write' : words.join(', ');
}

function report(error: unknown, io: CliIo, verbose: boolean): ExitCode {
  if (error instanceof CommanderError) {
    // Commander printed its message already; help and version are not errors.
    return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
  }
  if (error instanceof CommandFailure || CliError.isInstance(error)) {
    io.stderr(`${error.code}: ${error.message}\n`);
    return error.exitCode;
  }
  if (PlanRegistryError.isInstance(error)) {
    io.stderr(`${error.code}: ${error.message}\n`);
    if (error.code === 'PLAN_REGISTRY_PLAN_NOT_FOUND') return EXIT_CODES.notFound;
    return error.code === 'PLAN_REGISTRY_INVALID_ARGUMENT' || error.code === 'PLAN_REGISTRY_DUPLICATE_PLAN' ? EXIT_CODES.usage : EXIT_CODES.failed;
  }
  const { outcome, code, message } = classify(error, { command: 'tools run' });
  io.stderr(`${code}: ${message}\n${verbose ? describeCause(error) : ''}`);
  // Two sources offering one name is a mistake in the configuration.
  if (ToolRegistrationError.isInstance(error)) return EXIT_CODES.usage;
  return exitCodeOf(outcome);
}
