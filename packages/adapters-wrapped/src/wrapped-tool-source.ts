import type { ToolDescriptor, ToolInstance, ToolSource } from '@ca/tool-lifecycle';
import { describe, fail, isPlainObject, messageOf } from './support';
import { WrappedToolError } from './wrapped-tool-error';

/**
 * Builds a wrapped tool when the source first discovers its tools, for inner
 * tools that only exist then (an MCP tool after its server was listed):
 * `async (signal) => wrapTool(await mcpSource.get('mcp.fs.read'), { … })`.
 */
export type WrappedToolFactory = (signal?: AbortSignal) => ToolInstance | Promise<ToolInstance>;

/** Settings of {@link createWrappedAdapter}. */
export interface WrappedAdapterSettings {
  /** Identifies the source in messages and in the runtime's source errors. Default `'wrapped'`. */
  readonly id?: string;
  /**
   * Tools of source kind `'wrapped'` (from `wrapTool`, `fromFunction`,
   * `fromAiSdkTool`, `fromLangChainTool`), or factories of them, resolved once
   * on the first `discover`.
   */
  readonly tools: readonly (ToolInstance | WrappedToolFactory)[];
}

/**
 * A {@link ToolSource} of kind `'wrapped'` serving wrapped and foreign tools.
 * Names are unique within the source; factories run once, on the first
 * discovery (a failed run is retried by the next one).
 */
export class WrappedToolSource implements ToolSource {
  /** Always `'wrapped'`. */
  readonly kind = 'wrapped' as const;
  /**
   * Wrapped and foreign tools bring schemas from elsewhere (an MCP tool, a
   * LangChain tool, a schema a library derived): compiled as untrusted,
   * whatever the inner tool.
   */
  readonly schemaTrust = 'untrusted' as const;
  /** Identifies the source in messages. */
  readonly id: string;
  private readonly tools = new Map<string, ToolInstance>();
  private readonly listeners = new Set<() => void>();
  private factories: WrappedToolFactory[];
  private resolving: Promise<void> | undefined;

  /**
   * @throws WrappedToolError (`WRAP_INVALID_OPTIONS`, `WRAP_DUPLICATE_TOOL`) for
   *   invalid settings, a tool that is not of kind `'wrapped'`, or a repeated name.
   */
  constructor(settings: WrappedAdapterSettings) {
    if (!isPlainObject(settings) || !Array.isArray(settings.tools)) {
      fail('WRAP_INVALID_OPTIONS', `createWrappedAdapter expects { tools: [...] } (wrapped tools or factories of them); got ${describe(isPlainObject(settings) ? settings.tools : settings)} as ${isPlainObject(settings) ? 'tools' : 'settings'}.`);
    }
    const id = settings.id ?? 'wrapped';
    if (typeof id !== 'string' || id.length === 0) fail('WRAP_INVALID_OPTIONS', `The id of a wrapped tool source must be a non-empty string; got ${describe(settings.id)}.`);
    this.id = id;
    this.factories = [];
    for (const entry of settings.tools) {
      if (typeof entry === 'function') this.factories.push(entry);
      else this.register(entry, this.tools);
    }
  }

  /**
   * Adds a wrapped tool and tells the runtime (through `onToolsChanged`) to list the source again.
   * @throws WrappedToolError (`WRAP_INVALID_OPTIONS`, `WRAP_DUPLICATE_TOOL`).
   */
  add(tool: ToolInstance): void {
    this.register(tool, this.tools);
    for (const listener of [...this.listeners]) listener();
  }

  /**
   * Lists the tools, running the factories on the first call.
   * @throws WrappedToolError when a factory fails or yields an invalid or
   *   duplicate tool (the runtime reports it among `sourceErrors`).
   */
  async discover(signal?: AbortSignal): Promise<readonly ToolDescriptor[]> {
    signal?.throwIfAborted();
    await this.runFactories(signal);
    return [...this.tools.values()].map((tool) => tool.descriptor);
  }

  /**
   * The instance of one of the source's tools.
   * @throws WrappedToolError (`WRAP_TOOL_NOT_FOUND`) for an unknown name.
   */
  get(name: string): ToolInstance | Promise<ToolInstance> {
    if (this.factories.length > 0) return this.runFactories().then(() => this.lookup(name));
    return this.lookup(name);
  }

  /** Calls `listener` whenever {@link WrappedToolSource.add} adds a tool; returns the unsubscribe function. */
  onToolsChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private lookup(name: string): ToolInstance {
    const tool = this.tools.get(name);
    if (tool !== undefined) return tool;
    throw new WrappedToolError({
      code: 'WRAP_TOOL_NOT_FOUND',
      toolName: String(name),
      message: `Wrapped tool source '${this.id}' has no tool '${String(name)}'. Its tools are: ${[...this.tools.keys()].map((known) => `'${known}'`).join(', ') || 'none'}.`,
    });
  }

  private runFactories(signal?: AbortSignal): Promise<void> {
    if (this.factories.length === 0) return Promise.resolve();
    this.resolving ??= (async () => {
      const factories = this.factories;
      const built = await Promise.all(
        factories.map(async (factory, index) => {
          try {
            return await factory(signal);
          } catch (error) {
            if (WrappedToolError.isInstance(error)) throw error;
            throw new WrappedToolError({
              code: 'WRAP_FACTORY_FAILED',
              cause: error,
              message: `Wrapped tool source '${this.id}': the factory at tools[${index}] failed: ${messageOf(error)}. Fix it (or the source it reads from); the next discovery runs it again.`,
            });
          }
        }),
      );
      // All or nothing, so that a failed discovery leaves the source as it was.
      const staged = new Map(this.tools);
      for (const tool of built) this.register(tool, staged);
      for (const [name, tool] of staged) this.tools.set(name, tool);
      this.factories = [];
    })().finally(() => {
      this.resolving = undefined;
    });
    return this.resolving;
  }

  private register(tool: unknown, into: Map<string, ToolInstance>): void {
    if (typeof tool !== 'object' || tool === null || typeof (tool as ToolInstance).execute !== 'function' || !isPlainObject((tool as ToolInstance).descriptor)) {
      fail('WRAP_INVALID_OPTIONS', `Wrapped tool source '${this.id}' got ${describe(tool)} instead of a ToolInstance; build one with wrapTool(), fromFunction(), fromAiSdkTool() or fromLangChainTool().`);
    }
    const { name, source } = (tool as ToolInstance).descriptor;
    if (source !== 'wrapped') {
      fail(
        'WRAP_INVALID_OPTIONS',
        `Wrapped tool source '${this.id}' got tool ${describe(name)} of source kind ${describe(source)}; it serves only wrapped tools. Wrap it first: wrapTool(tool, { namespace: '…' }).`,
        typeof name === 'string' ? name : undefined,
      );
    }
    if (into.has(name)) {
      fail('WRAP_DUPLICATE_TOOL', `Wrapped tool source '${this.id}' already has a tool '${name}'; give one of them another name (wrapTool's name or namespace option).`, name);
    }
    into.set(name, tool as ToolInstance);
  }
}

/**
 * Creates a {@link WrappedToolSource}.
 *
 * @example
 * const source = createWrappedAdapter({ tools: [wrapTool(inner, { namespace: 'team' }), fromFunction(add, { … })] });
 *
 * @throws WrappedToolError for invalid settings or tools.
 */
export function createWrappedAdapter(settings: WrappedAdapterSettings): WrappedToolSource {
  return new WrappedToolSource(settings);
}
