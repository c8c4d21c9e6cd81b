import type { SchemaValidator } from '@ca/schema';
import { ToolSet, type ToolDescriptor, type ToolInstance, type ToolSource } from '@ca/tool-lifecycle';
import type { DependencyContainer } from 'tsyringe';
import { buildCustomTool, checkCustomTool, defaultValidator, isBuiltCustomTool, type CustomToolFields } from './build-custom-tool';
import { CUSTOM_TOOL, type CustomTool } from './custom-tool';
import { CustomToolRegistrationError, type CustomToolDuplicateOrigin } from './custom-tool-registration-error';

/** Anything a {@link CustomToolSource} accepts: a `defineTool` result (or any `ToolInstance` of source kind `'custom'`) or a {@link CustomTool}. */
export type CustomToolEntry = ToolInstance | CustomTool;

/** Settings of {@link createCustomAdapter}; all optional. */
export interface CustomAdapterSettings {
  /** Identifies the source in messages and in the runtime's source errors. Default `'custom'`. */
  readonly id?: string;
  /** Tools to serve: `defineTool` results, other `'custom'` tool instances, or `CustomTool` instances. */
  readonly tools?: readonly CustomToolEntry[];
  /**
   * Container whose `CUSTOM_TOOL` registrations are resolved (once, on the
   * first `discover` or `get`) and served too. `registerCustomAdapter` sets it
   * to the container it registers into.
   */
  readonly container?: DependencyContainer;
  /** Compiles schemas at registration (injectable for tests); default a shared `createSchemaValidator()`. */
  readonly schemaValidator?: SchemaValidator;
}

/**
 * A {@link ToolSource} of kind `'custom'` holding many custom tools: those of
 * `settings.tools`, those added with {@link CustomToolSource.add}, and the
 * class-based tools registered under `CUSTOM_TOOL` in `settings.container`.
 * Every tool is checked when it is registered (name, description, capability,
 * schemas compiled); names are unique within the source. The tools are served
 * through a `ToolSet`, so `get` of an unknown name throws `ToolNotFoundError`
 * with suggestions, as every source does.
 */
export class CustomToolSource implements ToolSource {
  /** Always `'custom'`. */
  readonly kind = 'custom' as const;
  /** Custom tools are the service's own code, schemas included: their patterns run on `RegExp`. */
  readonly schemaTrust = 'trusted' as const;
  /** Identifies the source in messages. */
  readonly id: string;
  private readonly tools = new Map<string, ToolInstance>();
  /** What `discover` and `get` serve: the tools above, rebuilt whenever they change. */
  private served: ToolSet;
  private readonly listeners = new Set<() => void>();
  private readonly container: DependencyContainer | undefined;
  private readonly validator: SchemaValidator;
  private injected: Promise<void> | undefined;
  private injectedDone = false;

  /**
   * @throws CustomToolRegistrationError (`CUSTOM_TOOL_INVALID`, `CUSTOM_TOOL_DUPLICATE`)
   *   for an invalid tool in `settings.tools`, or two with one name.
   */
  constructor(settings: CustomAdapterSettings = {}) {
    if (typeof settings !== 'object' || settings === null) {
      throw new CustomToolRegistrationError({ problem: 'invalid-setting', setting: 'settings', received: settings });
    }
    const id = settings.id ?? 'custom';
    if (typeof id !== 'string' || id.length === 0) throw new CustomToolRegistrationError({ problem: 'invalid-setting', setting: 'id', received: settings.id });
    this.id = id;
    this.container = settings.container;
    this.validator = settings.schemaValidator ?? defaultValidator();
    if (settings.tools !== undefined && !Array.isArray(settings.tools)) {
      throw new CustomToolRegistrationError({ problem: 'invalid-setting', setting: 'tools', received: settings.tools, sourceId: id });
    }
    for (const tool of settings.tools ?? []) this.register(tool);
    this.served = this.serve();
  }

  /**
   * Adds a tool and tells the runtime (through `onToolsChanged`) to list the
   * source again.
   * @returns The tool instance the source serves.
   * @throws CustomToolRegistrationError (`CUSTOM_TOOL_INVALID`) for an invalid
   *   tool, (`CUSTOM_TOOL_DUPLICATE`) when the source already has the name.
   */
  add(tool: CustomToolEntry): ToolInstance {
    const instance = this.register(tool);
    this.served = this.serve();
    for (const listener of [...this.listeners]) listener();
    return instance;
  }

  /**
   * Lists the tools: resolves the `CUSTOM_TOOL` registrations of the container
   * on the first call, then returns every descriptor. Activates nothing.
   * @throws CustomToolRegistrationError when a class-based tool cannot be
   *   resolved or is invalid (the runtime reports it among `sourceErrors`);
   *   the next `discover` tries again.
   */
  async discover(signal?: AbortSignal): Promise<readonly ToolDescriptor[]> {
    signal?.throwIfAborted();
    await this.resolveInjected();
    return this.served.discover(signal);
  }

  /**
   * The instance of one of the source's tools.
   * @throws ToolNotFoundError (`TOOL_NOT_FOUND`, with the closest names) for an unknown name;
   *   CustomToolRegistrationError when the class-based tools, resolved first, cannot be.
   */
  get(name: string): ToolInstance | Promise<ToolInstance> {
    if (!this.injectedDone && this.container !== undefined) return this.resolveInjected().then(() => this.served.get(name));
    return this.served.get(name);
  }

  /** Calls `listener` whenever {@link CustomToolSource.add} adds a tool; returns the unsubscribe function. */
  onToolsChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private resolveInjected(): Promise<void> {
    const container = this.container;
    if (this.injectedDone || container === undefined) return Promise.resolve();
    this.injected ??= Promise.resolve()
      .then(() => {
        let resolved: CustomTool[];
        try {
          resolved = container.isRegistered(CUSTOM_TOOL, true) ? container.resolveAll(CUSTOM_TOOL) : [];
        } catch (error) {
          throw new CustomToolRegistrationError({ problem: 'classes-not-resolved', sourceId: this.id, cause: error });
        }
        // All or nothing: check every class first, so a failed discovery leaves the source as it was.
        const seen = new Set<string>();
        const instances = resolved.map((tool) => {
          const instance = this.toInstance(tool);
          const name = instance.descriptor.name;
          if (seen.has(name)) throw this.duplicate(name, 'two-classes');
          seen.add(name);
          if (this.tools.has(name)) throw this.duplicate(name, 'class');
          return instance;
        });
        for (const instance of instances) this.tools.set(instance.descriptor.name, instance);
        this.served = this.serve();
        this.injectedDone = true;
      })
      .finally(() => {
        this.injected = undefined;
      });
    return this.injected;
  }

  private register(tool: CustomToolEntry): ToolInstance {
    const instance = this.toInstance(tool);
    const name = instance.descriptor.name;
    if (this.tools.has(name)) throw this.duplicate(name, 'tool');
    this.tools.set(name, instance);
    return instance;
  }

  private toInstance(tool: unknown): ToolInstance {
    if (isBuiltCustomTool(tool)) return tool;
    if (typeof tool === 'object' && tool !== null && 'descriptor' in tool) {
      const instance = tool as ToolInstance;
      const descriptor = instance.descriptor as Partial<ToolDescriptor> | undefined;
      if (descriptor?.source !== 'custom') {
        throw new CustomToolRegistrationError({ problem: 'wrong-source-kind', toolName: descriptor?.name, kind: descriptor?.source, sourceId: this.id });
      }
      checkCustomTool(
        { ...descriptor, execute: instance.execute, activate: instance.activate, deactivate: instance.deactivate },
        'instance',
        this.validator,
        this.id,
      );
      return instance;
    }
    return buildCustomTool(tool as CustomToolFields, 'class', this.validator, this.id);
  }

  private duplicate(name: string, origin: CustomToolDuplicateOrigin): CustomToolRegistrationError {
    return new CustomToolRegistrationError({ problem: 'duplicate', toolName: name, sourceId: this.id, origin });
  }

  private serve(): ToolSet {
    return new ToolSet({ id: this.id, kind: this.kind, schemaTrust: this.schemaTrust, tools: this.tools.values() });
  }
}

/**
 * Creates a {@link CustomToolSource}.
 *
 * @example
 * const source = createCustomAdapter({ tools: [greet] });
 * const runtime = new ToolRuntime({ sources: [source] });
 *
 * @throws CustomToolRegistrationError for an invalid or duplicated tool in `settings.tools`.
 */
export function createCustomAdapter(settings: CustomAdapterSettings = {}): CustomToolSource {
  return new CustomToolSource(settings);
}
