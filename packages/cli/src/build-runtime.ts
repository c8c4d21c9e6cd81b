import path from 'node:path';
import { registerBuiltinAdapter, type BuiltinAdapterSettings } from '@ca/adapters-builtin';
import { registerCustomAdapter } from '@ca/adapters-custom';
import { registerMcpAdapter, type McpServersConfig } from '@ca/adapters-mcp';
import { registerSkillsAdapter, type SkillsAdapterSettings } from '@ca/adapters-skills';
import { wrapTool } from '@ca/adapters-wrapped';
import {
  RUNTIME_LOGGER,
  TOOL_RUNTIME,
  TOOL_SOURCE,
  registerToolRuntime,
  type RuntimeLogger,
  type ToolDescriptor,
  type ToolInstance,
  type ToolRuntime,
  type ToolSource,
} from '@ca/tool-lifecycle';
import { container as rootContainer } from 'tsyringe';
import { CliError } from './cli-error';
import type { AgentsConfig, WrappedEntry } from './config';

/** The runtime built from a configuration, with what the CLI needs besides. */
export interface BuiltRuntime {
  readonly runtime: ToolRuntime;
  /** Releases shared sessions and watchers; call once the command is done. */
  dispose(): Promise<void>;
}

/**
 * Wires a runtime from a configuration: the core and one adapter per
 * configured source, each through its `register…Adapter` function, in a child
 * container (the global one is never touched).
 * @throws CliError when a custom tool module cannot be loaded.
 */
export async function buildRuntime(config: AgentsConfig, logger: RuntimeLogger): Promise<BuiltRuntime> {
  const container = rootContainer.createChildContainer();
  container.register(RUNTIME_LOGGER, { useValue: logger });
  registerToolRuntime(container, config.runtime ?? {});
  if (config.builtin !== false && config.builtin !== undefined) {
    registerBuiltinAdapter(container, (config.builtin === true ? {} : config.builtin) as BuiltinAdapterSettings);
  }
  if (config.custom !== undefined) {
    const tools: ToolInstance[] = [];
    for (const module of config.custom.modules) tools.push(...(await loadToolModule(module)));
    registerCustomAdapter(container, { tools });
  }
  if (config.mcpServers !== undefined && Object.keys(config.mcpServers).length > 0) {
    registerMcpAdapter(container, { servers: { mcpServers: config.mcpServers } as unknown as McpServersConfig, logger });
  }
  if (config.skills !== undefined) {
    registerSkillsAdapter(container, { ...(config.skills as SkillsAdapterSettings), cwd: config.baseDir });
  }
  if (config.wrapped !== undefined && config.wrapped.length > 0) {
    const others = container.isRegistered(TOOL_SOURCE, true) ? container.resolveAll(TOOL_SOURCE) : [];
    container.register(TOOL_SOURCE, { useValue: new ConfiguredWrappedSource(config.wrapped, others) });
  }
  const runtime = container.resolve(TOOL_RUNTIME);
  return {
    runtime,
    dispose: async () => {
      await runtime.dispose();
      container.clearInstances();
    },
  };
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
 * Serves the `wrapped` entries of a configuration: each wraps a tool of one
 * of the other sources, found by name when the runtime discovers.
 */
class ConfiguredWrappedSource implements ToolSource {
  readonly kind = 'wrapped' as const;
  readonly id = 'config:wrapped';
  private instances: Map<string, ToolInstance> | undefined;

  constructor(
    private readonly entries: readonly WrappedEntry[],
    private readonly others: readonly ToolSource[],
  ) {}

  async discover(signal?: AbortSignal): Promise<readonly ToolDescriptor[]> {
    this.instances ??= await this.build(signal);
    return [...this.instances.values()].map((instance) => instance.descriptor);
  }

  async get(name: string): Promise<ToolInstance> {
    this.instances ??= await this.build();
    const instance = this.instances.get(name);
    if (instance === undefined) throw new Error(`No wrapped tool named '${name}' is configured.`);
    return instance;
  }

  private async build(signal?: AbortSignal): Promise<Map<string, ToolInstance>> {
    const owners = new Map<string, ToolSource>();
    for (const source of this.others) {
      try {
        for (const descriptor of await source.discover(signal)) owners.set(descriptor.name, source);
      } catch {
        // The runtime reports a source that cannot be listed; its tools are simply not wrappable.
      }
    }
    const built = new Map<string, ToolInstance>();
    for (const entry of this.entries) {
      const owner = owners.get(entry.tool);
      if (owner === undefined) {
        throw new CliError({
          code: 'CLI_CONFIG_INVALID',
          message: `wrapped tool '${entry.name}' wraps '${entry.tool}', which no configured source offers. Run 'agents tools list' to see the names.`,
        });
      }
      const inner = await owner.get(entry.tool);
      built.set(
        entry.name,
        wrapTool(inner, {
          name: entry.name,
          ...(entry.description === undefined ? {} : { description: entry.description }),
          ...(entry.fixedArguments === undefined ? {} : { fixedArguments: entry.fixedArguments }),
          ...(entry.defaultArguments === undefined ? {} : { defaultArguments: entry.defaultArguments }),
          ...(entry.timeoutMs === undefined ? {} : { timeoutMs: entry.timeoutMs }),
          ...(entry.retry === undefined ? {} : { retry: entry.retry }),
          ...(entry.capability === undefined ? {} : { capability: entry.capability }),
        }),
      );
    }
    return built;
  }
}
