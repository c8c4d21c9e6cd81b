import path from 'node:path';
import type { BuiltinAdapterSettings } from '@ca/adapters-builtin';
import type { McpConfigError, McpServersConfig, McpTokenStore, McpToolListCache } from '@ca/adapters-mcp';
import type { SkillsAdapterSettings } from '@ca/adapters-skills';
import type { WrappedToolSource } from '@ca/adapters-wrapped';
import type { SchemaValidator } from '@ca/schema';
import type { CodeModeOffer } from '@ca/model-tools';
import {
  DEFINITION_PINS,
  MemoryDefinitionPins,
  TOOL_HOOK,
  createInstructionCheckHook,
  createSecretRedactionHook,
  type SecretRedactionOptions,
  APPROVAL_HANDLER,
  APPROVAL_KEY,
  APPROVAL_STORE,
  PLAN_REGISTRY,
  RESULT_STORE,
  RUNTIME_LOGGER,
  SCHEMA_VALIDATOR,
  TOOL_RUNTIME,
  TOOL_SOURCE,
  compileToolPattern,
  registerToolRuntime,
  type ApprovalHandler,
  type ApprovalStore,
  type InteractionHandler,
  type PlanRegistry,
  type ResultStore,
  type RuntimeLogger,
  type SamplingHandler,
  type ToolDescriptor,
  type ToolRuleDefinition,
  type ToolInstance,
  type ToolRuntime,
  type ToolSource,
  type UnavailableTool,
} from '@ca/tool-lifecycle';
import { container as rootContainer } from 'tsyringe';
import { CliError } from './cli-error';
import type { AgentsConfig, WrappedEntry } from './config';
import { isPartial, selectSources, type SourceSelection } from './config-sources';
import { createCommandHook } from './command-hook';
import { readLockfile } from './definition-lock-file';
import { didYouMean } from './suggest';

/** The runtime built from a configuration, with what the CLI needs besides. */
export interface BuiltRuntime {
  readonly runtime: ToolRuntime;
  /** The runtime's schema validator (it has compiled the tools' schemas already). */
  readonly validator: SchemaValidator;
  /** The sources it was built from. */
  readonly selection: SourceSelection;
  /** True when configured sources were left out because the command named the tools it needs. */
  readonly partial: boolean;
  /** The tool sources it holds (`agents mcp serve` listens to the MCP source's resource updates). */
  readonly sources: readonly ToolSource[];
  /** With `codeMode`: what a front door offers instead of the tools (`code.run`, described for each plan, and `tools.search`). */
  readonly codeMode?: CodeModeOffer;
  /** Releases shared sessions and watchers; call once the command is done. */
  dispose(): Promise<void>;
}

/** Options of {@link buildRuntime}. */
export interface BuildRuntimeOptions {
  /**
   * The tools the command will use: only the sources that can offer them are
   * built (no MCP server is started for a built-in or custom tool). Default:
   * every configured source.
   */
  readonly tools?: readonly string[];
  /** Who answers approval requests, where approvals are kept, and the rules (see `loadRules`). */
  readonly approval?: {
    readonly handler?: ApprovalHandler;
    readonly store?: ApprovalStore;
    readonly key?: string;
    readonly rules?: readonly ToolRuleDefinition[];
    /** Take answers through the plan registry (`agents plan approve|deny`): `plan run`. */
    readonly registryApprovals?: boolean;
  };
  /** What MCP servers need from the command: who answers their questions, where sign-ins are kept. */
  readonly mcp?: {
    readonly interactionHandler?: InteractionHandler;
    /** Who answers a server's sampling requests (`agents mcp serve`: the client's model); none by default. */
    readonly samplingHandler?: SamplingHandler;
    readonly tokenStore?: McpTokenStore;
    /** Where servers' tool lists are kept between commands: discovery then starts no server whose list is cached. */
    readonly toolListCache?: McpToolListCache;
    /** The scope of a server entry without `scope` (`agents mcp serve`: `shared`, a pool every client session uses). */
    readonly defaultScope?: 'plan' | 'shared';
  };
  /** Where outputs over `runtime.outputBudget` are kept (the runtime's memory store when none is given). */
  readonly resultStore?: ResultStore;
  /** Where the runtime announces its plans (`agents plan run`); none by default. */
  readonly planRegistry?: PlanRegistry;
  /** `false`: do not read the lockfile (`agents tools lock` sees every tool as offered). */
  readonly pins?: boolean;
  /**
   * Add `code.run` of `@ca/code-mode` (programs whose calls go through the
   * plan) and the runtime's `tools.search` (`agents mcp serve --code-mode`);
   * `tools`, globs of the tools a program may see and call (default all).
   */
  readonly codeMode?: { readonly tools?: readonly string[] };
}

/**
 * How long an MCP server's discovery session waits for the plan of the same
 * command (longest timer Node honours): the command disposes everything when
 * it ends, so a session no plan takes lives no longer than the command.
 */
const KEEP_DISCOVERY_SESSION_MS = 2_147_483_647;

// The adapters are loaded only when a command needs them: starting the
// command is most of what a short command costs, and the MCP SDK alone is a
// large share of that.
const loadBuiltin = () => require('@ca/adapters-builtin') as typeof import('@ca/adapters-builtin');
const loadCustom = () => require('@ca/adapters-custom') as typeof import('@ca/adapters-custom');
const loadMcp = () => require('@ca/adapters-mcp') as typeof import('@ca/adapters-mcp');
const loadSkills = () => require('@ca/adapters-skills') as typeof import('@ca/adapters-skills');
const loadWrapped = () => require('@ca/adapters-wrapped') as typeof import('@ca/adapters-wrapped');
const loadCodeMode = () => require('@ca/code-mode') as typeof import('@ca/code-mode');

/**
 * Wires a runtime from a configuration: the core and one adapter per
 * configured source (or per source the named tools need), each through its
 * `register…Adapter` function, in a child container (the global one is never
 * touched).
 * @throws CliError when a custom tool module cannot be loaded
 *   (CLI_MODULE_INVALID) or an MCP server entry is invalid (CLI_CONFIG_INVALID).
 */
export async function buildRuntime(config: AgentsConfig, logger: RuntimeLogger, options: BuildRuntimeOptions = {}): Promise<BuiltRuntime> {
  const selection = selectSources(config, options.tools);
  const container = rootContainer.createChildContainer();
  container.register(RUNTIME_LOGGER, { useValue: logger });
  const approval = options.approval;
  if (approval?.handler !== undefined) container.register(APPROVAL_HANDLER, { useValue: approval.handler });
  if (approval?.store !== undefined) container.register(APPROVAL_STORE, { useValue: approval.store });
  if (approval?.key !== undefined) container.register(APPROVAL_KEY, { useValue: approval.key });
  if (options.planRegistry !== undefined) container.register(PLAN_REGISTRY, { useValue: options.planRegistry });
  registerHooks(container, config);
  const lock = options.pins === false ? undefined : readLockfile(config);
  if (lock !== undefined) container.register(DEFINITION_PINS, { useValue: new MemoryDefinitionPins(lock) });
  if (options.resultStore !== undefined) container.register(RESULT_STORE, { useValue: options.resultStore });
  // Code mode: code.run is a tool of the runtime whose calls go back into the same runtime, made below.
  const built: { runtime?: ToolRuntime } = {};
  const programTools = options.codeMode?.tools?.map(compileToolPattern);
  const codeMode =
    options.codeMode === undefined
      ? undefined
      : loadCodeMode().createCodeMode({
          runtime: () => {
            if (built.runtime === undefined) throw new CliError({ code: 'CLI_USAGE', message: 'code.run was called before its runtime was built.' });
            return built.runtime;
          },
          ...(programTools === undefined ? {} : { include: (descriptor: ToolDescriptor) => programTools.some((matches) => matches(descriptor.name)) }),
        });
  if (codeMode !== undefined) container.register(TOOL_SOURCE, { useValue: codeMode.source });
  registerToolRuntime(container, {
    ...config.runtime,
    ...(codeMode === undefined ? {} : { searchTool: true }),
    ...(approval?.rules === undefined || approval.rules.length === 0 ? {} : { rules: approval.rules }),
    ...(config.approval?.timeoutMs === undefined ? {} : { approvalTimeoutMs: config.approval.timeoutMs }),
    ...(approval?.registryApprovals === true ? { registryApprovals: true } : {}),
  });
  if (selection.builtin) {
    loadBuiltin().registerBuiltinAdapter(container, builtinSettings(config));
  }
  if (selection.custom && config.custom !== undefined) {
    const tools: ToolInstance[] = [];
    for (const module of config.custom.modules) tools.push(...(await loadToolModule(module)));
    loadCustom().registerCustomAdapter(container, { tools });
  }
  if (selection.mcpServers.length > 0) {
    const servers = Object.fromEntries(selection.mcpServers.map((name) => [name, (config.mcpServers ?? {})[name]]));
    const mcp = loadMcp();
    try {
      mcp.registerMcpAdapter(container, {
        servers: { mcpServers: servers } as unknown as McpServersConfig,
        logger,
        discoverySessionReuseMs: KEEP_DISCOVERY_SESSION_MS,
        // The user waits for the command to end and sees nothing of a server's own shutdown.
        shutdown: 'prompt',
        ...(options.mcp?.interactionHandler === undefined ? {} : { interactionHandler: options.mcp.interactionHandler }),
        ...(options.mcp?.samplingHandler === undefined ? {} : { samplingHandler: options.mcp.samplingHandler }),
        ...(options.mcp?.tokenStore === undefined ? {} : { tokenStore: options.mcp.tokenStore }),
        ...(options.mcp?.toolListCache === undefined ? {} : { toolListCache: options.mcp.toolListCache }),
        ...(options.mcp?.defaultScope === undefined ? {} : { defaultScope: options.mcp.defaultScope }),
      });
    } catch (error) {
      if (!mcp.McpConfigError.isInstance(error)) throw error;
      throw mcpConfigProblem(error, config);
    }
  }
  if (selection.skills) {
    loadSkills().registerSkillsAdapter(container, {
      ...(config.skills as SkillsAdapterSettings),
      cwd: config.baseDir,
      ...(config.sandbox === undefined ? {} : { sandbox: config.sandbox }),
    });
  }
  if (selection.wrapped.length > 0) {
    const others = container.isRegistered(TOOL_SOURCE, true) ? container.resolveAll(TOOL_SOURCE) : [];
    container.register(TOOL_SOURCE, { useValue: new ConfiguredWrappedSource(selection.wrapped, others) });
  }
  const runtime = container.resolve(TOOL_RUNTIME);
  built.runtime = runtime;
  return {
    runtime,
    ...(codeMode === undefined ? {} : { codeMode: { toolName: codeMode.toolName, describe: () => codeMode.description() } }),
    validator: container.resolve(SCHEMA_VALIDATOR),
    selection,
    partial: isPartial(selection, config),
    sources: container.isRegistered(TOOL_SOURCE, true) ? container.resolveAll(TOOL_SOURCE) : [],
    dispose: async () => {
      await runtime.dispose();
      await codeMode?.close();
      container.clearInstances();
    },
  };
}

/**
 * The hooks of a configuration, in the order they run: the secret redaction
 * (unless `guardrails.secrets` is false), so that command hooks after a call —
 * other programs — are given the output with its secrets already taken out;
 * the command hooks of `hooks`; the secret redaction again when a command hook
 * runs after calls (what it gives back is scanned too); the instruction check
 * (when `guardrails.instructions` says so).
 * @throws CliError (CLI_CONFIG_INVALID) for a secret rule that does not compile.
 */
function registerHooks(container: ReturnType<typeof rootContainer.createChildContainer>, config: AgentsConfig): void {
  const secrets = config.guardrails?.secrets ?? true;
  const secretHook = (name: string) => {
    try {
      return createSecretRedactionHook({ ...(secrets === true ? {} : (secrets as SecretRedactionOptions)), name });
    } catch (error) {
      throw new CliError({
        code: 'CLI_CONFIG_INVALID',
        message: `Configuration ${config.file ?? '(none)'} is invalid at /guardrails/secrets: ${(error as Error).message}`,
        cause: error,
      });
    }
  };
  if (secrets !== false) container.register(TOOL_HOOK, { useValue: secretHook('secret-redaction') });
  for (const entry of config.hooks ?? []) {
    container.register(TOOL_HOOK, {
      useValue: createCommandHook(entry, { cwd: config.baseDir, ...(config.sandbox === undefined ? {} : { sandbox: config.sandbox }) }),
    });
  }
  if (secrets !== false && (config.hooks ?? []).some((entry) => entry.on === 'after')) {
    container.register(TOOL_HOOK, { useValue: secretHook('secret-redaction:after-hooks') });
  }
  const instructions = config.guardrails?.instructions ?? false;
  if (instructions !== false) container.register(TOOL_HOOK, { useValue: createInstructionCheckHook({ action: instructions }) });
}

/** The built-in adapter's settings: the `builtin` entry, with the configuration's `sandbox` as the command tool's. */
export function builtinSettings(config: AgentsConfig): BuiltinAdapterSettings {
  const settings = (config.builtin === true || config.builtin === undefined || config.builtin === false ? {} : config.builtin) as BuiltinAdapterSettings;
  return config.sandbox === undefined ? settings : { ...settings, command: { ...settings.command, sandbox: config.sandbox } };
}

/** @internal An MCP configuration error, as the command reports it: the key under mcpServers. */
export function mcpConfigProblem(error: McpConfigError, config: AgentsConfig): CliError {
  const where = error.server === undefined ? '/mcpServers' : `/mcpServers/${error.server}${error.key === undefined ? '' : `/${error.key.replace(/\./g, '/')}`}`;
  return new CliError({
    code: 'CLI_CONFIG_INVALID',
    cause: error,
    message: `Configuration ${config.file ?? '(none)'} is invalid at ${where}: ${error.message.replace(/^Invalid MCP configuration \([^)]*\):\s*/, '')}`,
  });
}

/**
 * Loads a module of custom tools: every exported `ToolInstance` (a value with
 * a `descriptor` and an `execute` function), arrays of them, and the same
 * under a default export. `.mjs` modules are imported, others required.
 * @throws CliError (CLI_MODULE_INVALID) when it cannot be loaded or exports no tool.
 */
export async function loadToolModule(module: string): Promise<ToolInstance[]> {
  let exported: unknown;
  try {
    exported = module.endsWith('.mjs') ? await import(module) : require(module);
  } catch (error) {
    throw new CliError({
      code: 'CLI_MODULE_INVALID',
      cause: error,
      message: `Custom tool module ${module} could not be loaded: ${(error as Error).message}. Check custom.modules in the configuration.`,
    });
  }
  const found: ToolInstance[] = [];
  const visit = (value: unknown, depth: number): void => {
    if (isToolInstance(value)) found.push(value);
    else if (Array.isArray(value)) value.forEach((item) => visit(item, depth));
    else if (depth === 0 && typeof value === 'object' && value !== null) Object.values(value).forEach((item) => visit(item, depth + 1));
  };
  visit(exported, 0);
  const unique = [...new Set(found)];
  if (unique.length === 0) {
    throw new CliError({
      code: 'CLI_MODULE_INVALID',
      message: `Custom tool module ${module} exports no tool. Export defineTool(...) results (or an array of them) from ${path.basename(module)}.`,
    });
  }
  return unique;
}

function isToolInstance(value: unknown): value is ToolInstance {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ToolInstance).execute === 'function' &&
    typeof (value as ToolInstance).descriptor?.name === 'string'
  );
}

/**
 * Serves the `wrapped` entries of a configuration through a
 * `WrappedToolSource`: one factory per entry wraps a tool of one of the other
 * sources, found by name when the runtime discovers. An entry whose inner
 * tool is unavailable (its MCP server could not be started, …) is itself
 * unavailable, with that reason; one whose inner tool no source offers at
 * all is a mistake in the configuration.
 */
export class ConfiguredWrappedSource implements ToolSource {
  readonly kind = 'wrapped' as const;
  readonly id = 'config:wrapped';
  readonly schemaTrust = 'untrusted' as const;
  private readonly wrapped: WrappedToolSource;
  private owners: Promise<ReadonlyMap<string, ToolSource>> | undefined;
  private missing: UnavailableTool[] = [];

  constructor(
    private readonly entries: readonly WrappedEntry[],
    private readonly others: readonly ToolSource[],
  ) {
    const { createWrappedAdapter, wrapTool } = loadWrapped();
    this.wrapped = createWrappedAdapter({
      id: this.id,
      tools: entries.map((entry) => async (signal?: AbortSignal) => {
        const owner = (await this.locate(signal)).get(entry.tool);
        // An entry whose inner tool is unavailable is listed by unavailable(), not served.
        if (owner === undefined) return [];
        return wrapTool(await owner.get(entry.tool), {
          name: entry.name,
          ...(entry.description === undefined ? {} : { description: entry.description }),
          ...(entry.fixedArguments === undefined ? {} : { fixedArguments: entry.fixedArguments }),
          ...(entry.defaultArguments === undefined ? {} : { defaultArguments: entry.defaultArguments }),
          ...(entry.timeoutMs === undefined ? {} : { timeoutMs: entry.timeoutMs }),
          ...(entry.retry === undefined ? {} : { retry: entry.retry }),
          ...(entry.capability === undefined ? {} : { capability: entry.capability }),
        });
      }),
    });
  }

  async discover(signal?: AbortSignal): Promise<readonly ToolDescriptor[]> {
    // Located first, so that a configuration mistake surfaces as the CliError itself rather than inside a factory's failure.
    await this.locate(signal);
    return this.wrapped.discover(signal);
  }

  unavailable(): readonly UnavailableTool[] {
    return this.missing;
  }

  get(name: string): ToolInstance | Promise<ToolInstance> {
    return this.wrapped.get(name);
  }

  /** The source of each entry's inner tool, found once (a failed search is tried again by the next call). */
  private locate(signal?: AbortSignal): Promise<ReadonlyMap<string, ToolSource>> {
    this.owners ??= this.findOwners(signal).catch((error: unknown) => {
      this.owners = undefined;
      throw error;
    });
    return this.owners;
  }

  /**
   * Lists the other sources and maps each entry's inner tool to the source
   * that offers it; records the entries whose inner tool is unavailable.
   * @throws CliError (CLI_CONFIG_INVALID) for an entry whose inner tool no configured source offers.
   */
  private async findOwners(signal?: AbortSignal): Promise<ReadonlyMap<string, ToolSource>> {
    const owners = new Map<string, ToolSource>();
    const unavailable = new Map<string, string>();
    const failures: { source: ToolSource; error: unknown }[] = [];
    for (const source of this.others) {
      try {
        for (const descriptor of await source.discover(signal)) owners.set(descriptor.name, source);
      } catch (error) {
        // The runtime reports a source that cannot be listed; its tools are simply not wrappable.
        failures.push({ source, error });
      }
      for (const item of source.unavailable?.() ?? []) unavailable.set(item.name, item.reason);
    }
    const found = new Map<string, ToolSource>();
    const missing: UnavailableTool[] = [];
    for (const entry of this.entries) {
      const owner = owners.get(entry.tool);
      if (owner !== undefined) {
        found.set(entry.tool, owner);
        continue;
      }
      const server = entry.tool.startsWith('mcp.') ? `mcp.${entry.tool.slice(4).split('.')[0]}` : undefined;
      const failure = failures.find(({ error }) => server !== undefined && `mcp.${(error as { server?: unknown }).server}` === server);
      const reason =
        unavailable.get(entry.tool) ??
        (server === undefined ? undefined : unavailable.get(server)) ??
        (failure === undefined ? undefined : (failure.error as Error).message);
      if (reason === undefined) {
        throw new CliError({
          code: 'CLI_CONFIG_INVALID',
          message: `wrapped tool '${entry.name}' wraps '${entry.tool}', which no configured source offers.${didYouMean(entry.tool, owners.keys())} Run 'agents tools list' to see the names.`,
        });
      }
      missing.push({ name: entry.name, source: 'wrapped', reason: `it wraps '${entry.tool}', which is unavailable: ${reason}` });
    }
    this.missing = missing;
    return found;
  }
}
