import { ToolSet, type ToolDescriptor, type ToolInstance, type ToolSource } from '@ca/tool-lifecycle';
import { invalidOption, isPlainObject } from './support';
import { WrappedToolError } from './wrapped-tool-error';

/**
 * Builds wrapped tools when the source first discovers its tools, for inner
 * tools that only exist then (an MCP tool after its server was listed):
 * `async (signal) => wrapTool(await mcpSource.get('mcp.fs.read'), { … })`.
 * It returns one tool, or a list of them — empty when there is nothing to
 * wrap after all.
 */
export type WrappedToolFactory = (signal?: AbortSignal) => ToolInstance | readonly ToolInstance[] | Promise<ToolInstance | readonly ToolInstance[]>;

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
 * discovery (a failed run is retried by the next one). The tools are served
 * through a `ToolSet`, so `get` of an unknown name throws `ToolNotFoundError`
 * with suggestions, as every source does.
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
  /** What `discover` and `get` serve: the tools above, rebuilt whenever they change. */
  private served: ToolSet;
  private readonly listeners = new Set<() => void>();
  private factories: WrappedToolFactory[];
  private resolving: Promise<void> | undefined;

  /**
   * @throws WrappedToolError (`WRAP_INVALID_OPTIONS`, `WRAP_DUPLICATE_TOOL`) for
   *   invalid settings, a tool that is not of kind `'wrapped'`, or a repeated name.
   */
  constructor(settings: WrappedAdapterSettings) {
    if (!isPlainObject(settings))
      invalidOption({ call: 'createWrappedAdapter' }, 'settings', '{ tools: [...] } (wrapped tools or factories of them)', settings);
    if (!Array.isArray(settings.tools))
      invalidOption({ call: 'createWrappedAdapter' }, 'tools', 'an array of wrapped tools or factories of them', settings.tools);
    const id = settings.id ?? 'wrapped';
    if (typeof id !== 'string' || id.length === 0) invalidOption({ call: 'createWrappedAdapter' }, 'id', 'a non-empty string', settings.id);
    this.id = id;
    this.factories = [];
    for (const entry of settings.tools) {
      if (typeof entry === 'function') this.factories.push(entry);
      else this.register(entry, this.tools);
    }
    this.served = this.serve();
  }

  /**
   * Adds a wrapped tool and tells the runtime (through `onToolsChanged`) to list the source again.
   * @throws WrappedToolError (`WRAP_INVALID_OPTIONS`, `WRAP_DUPLICATE_TOOL`).
   */
  add(tool: ToolInstance): void {
    this.register(tool, this.tools);
    this.served = this.serve();
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
    return this.served.discover(signal);
  }

  /**
   * The instance of one of the source's tools.
   * @throws ToolNotFoundError (`TOOL_NOT_FOUND`, with the closest names) for an unknown name;
   *   WrappedToolError when the factories, run first, fail.
   */
  get(name: string): ToolInstance | Promise<ToolInstance> {
    if (this.factories.length > 0) return this.runFactories().then(() => this.served.get(name));
    return this.served.get(name);
  }

  /** Calls `listener` whenever {@link WrappedToolSource.add} adds a tool; returns the unsubscribe function. */
  onToolsChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
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
            throw new WrappedToolError({ problem: 'factory-failed', sourceId: this.id, index, cause: error });
          }
        }),
      );
      // All or nothing, so that a failed discovery leaves the source as it was.
      const staged = new Map(this.tools);
      for (const result of built) {
        for (const tool of Array.isArray(result) ? (result as readonly unknown[]) : [result]) this.register(tool, staged);
      }
      for (const [name, tool] of staged) this.tools.set(name, tool);
      this.served = this.serve();
      this.factories = [];
    })().finally(() => {
      this.resolving = undefined;
    });
    return this.resolving;
  }

  private register(tool: unknown, into: Map<string, ToolInstance>): void {
    if (
      typeof tool !== 'object' ||
      tool === null ||
      typeof (tool as ToolInstance).execute !== 'function' ||
      !isPlainObject((tool as ToolInstance).descriptor)
    ) {
      throw new WrappedToolError({ problem: 'not-a-tool', subject: { sourceId: this.id }, received: tool });
    }
    const { name, source } = (tool as ToolInstance).descriptor;
    if (source !== 'wrapped') throw new WrappedToolError({ problem: 'wrong-source-kind', sourceId: this.id, toolName: name, kind: source });
    if (into.has(name)) throw new WrappedToolError({ problem: 'duplicate-tool', sourceId: this.id, toolName: name });
    into.set(name, tool as ToolInstance);
  }

  private serve(): ToolSet {
    return new ToolSet({ id: this.id, kind: this.kind, schemaTrust: this.schemaTrust, tools: this.tools.values() });
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
