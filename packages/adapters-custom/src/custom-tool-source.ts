import type { SchemaValidator } from '@ca/schema';
import type { ToolDescriptor, ToolInstance, ToolSource } from '@ca/tool-lifecycle';
import type { DependencyContainer } from 'tsyringe';
import {
  buildCustomTool,
  checkCustomTool,
  defaultValidator,
  describe,
  isBuiltCustomTool,
  type CustomToolFields,
} from './build-custom-tool';
import { CUSTOM_TOOL, type CustomTool } from './custom-tool';
import { CustomToolRegistrationError } from './custom-tool-registration-error';

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
 * schemas compiled); names are unique within the source.
 */
export class CustomToolSource implements ToolSource {
  /** Always `'custom'`. */
  readonly kind = 'custom' as const;
  /** Custom tools are the service's own code, schemas included: their patterns run on `RegExp`. */
  readonly schemaTrust = 'trusted' as const;
  /** Identifies the source in messages. */
  readonly id: string;
  private readonly tools = new Map<string, ToolInstance>();
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
      throw new CustomToolRegistrationError({
        code: 'CUSTOM_TOOL_INVALID',
        message: `createCustomAdapter expects a settings object like { tools: [...] }; got ${describe(settings)}.`,
      });
    }
    this.id = settings.id ?? 'custom';
    if (typeof this.id !== 'string' || this.id.length === 0) {
      throw new CustomToolRegistrationError({
        code: 'CUSTOM_TOOL_INVALID',
        message: `The id of a custom tool source must be a non-empty string; got ${describe(settings.id)}.`,
      });
    }
    this.container = settings.container;
    this.validator = settings.schemaValidator ?? defaultValidator();
    if (settings.tools !== undefined && !Array.isArray(settings.tools)) {
      throw new CustomToolRegistrationError({
        code: 'CUSTOM_TOOL_INVALID',
        sourceId: this.id,
        message: `Custom tool source '${this.id}' expects tools to be an array of defineTool() results or CustomTool instances; got ${describe(settings.tools)}.`,
      });
    }
    for (const tool of settings.tools ?? []) this.register(tool);
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
    return [...this.tools.values()].map((tool) => tool.descriptor);
  }

  /**
   * The instance of one of the source's tools.
   * @throws CustomToolRegistrationError (`CUSTOM_TOOL_NOT_FOUND`) for an unknown name.
   */
  get(name: string): ToolInstance | Promise<ToolInstance> {
    if (!this.injectedDone && this.container !== undefined) return this.resolveInjected().then(() => this.lookup(name));
    return this.lookup(name);
  }

  /** Calls `listener` whenever {@link CustomToolSource.add} adds a tool; returns the unsubscribe function. */
  onToolsChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private lookup(name: string): ToolInstance {
    const tool = this.tools.get(name);
    if (tool !== undefined) return tool;
    throw new CustomToolRegistrationError({
      code: 'CUSTOM_TOOL_NOT_FOUND',
      toolName: String(name),
      sourceId: this.id,
      message: `Custom tool source '${this.id}' has no tool '${String(name)}'. Its tools are: ${
        [...this.tools.keys()].map((known) => `'${known}'`).join(', ') || 'none'
      }. Add it with defineTool() and source.add(), or register a class under CUSTOM_TOOL.`,
    });
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
          throw new CustomToolRegistrationError({
            code: 'CUSTOM_TOOL_INVALID',
            sourceId: this.id,
            cause: error,
            message: `Custom tool source '${this.id}' could not resolve the class-based tools registered under CUSTOM_TOOL: ${
              error instanceof Error ? error.message : String(error)
            }. Register every dependency they @inject in the container before the runtime discovers its tools.`,
          });
        }
        // All or nothing: check every class first, so a failed discovery leaves the source as it was.
        const seen = new Set<string>();
        const instances = resolved.map((tool) => {
          const instance = this.toInstance(tool);
          const name = instance.descriptor.name;
          if (seen.has(name)) throw this.duplicate(name, 'two classes registered under CUSTOM_TOOL have');
          seen.add(name);
          if (this.tools.has(name)) throw this.duplicate(name, 'a class registered under CUSTOM_TOOL has');
          return instance;
        });
        for (const instance of instances) this.tools.set(instance.descriptor.name, instance);
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
    if (this.tools.has(name)) throw this.duplicate(name, 'another tool has');
    this.tools.set(name, instance);
    return instance;
  }

  private toInstance(tool: unknown): ToolInstance {
    if (isBuiltCustomTool(tool)) return tool;
    if (typeof tool === 'object' && tool !== null && 'descriptor' in tool) {
      const instance = tool as ToolInstance;
      const descriptor = instance.descriptor as Partial<ToolDescriptor> | undefined;
      if (descriptor?.source !== 'custom') {
        throw new CustomToolRegistrationError({
          code: 'CUSTOM_TOOL_INVALID',
          sourceId: this.id,
          ...(typeof descriptor?.name === 'string' ? { toolName: descriptor.name } : {}),
          message: `Tool ${describe(descriptor?.name)} has source kind ${describe(descriptor?.source)}, not 'custom'; a custom tool source serves only custom tools. Serve it from its own source, or wrap it with wrapTool() from @ca/adapters-wrapped.`,
        });
      }
      checkCustomTool({ ...descriptor, execute: instance.execute, activate: instance.activate, deactivate: instance.deactivate }, 'instance', this.validator, this.id);
      return instance;
    }
    return buildCustomTool(tool as CustomToolFields, 'class', this.validator, this.id);
  }

  private duplicate(name: string, what: string): CustomToolRegistrationError {
    return new CustomToolRegistrationError({
      code: 'CUSTOM_TOOL_DUPLICATE',
      toolName: name,
      sourceId: this.id,
      message: `Custom tool source '${this.id}' cannot register tool '${name}': ${what} that name. Tool names must be unique; rename one of them (e.g. 'custom.<team>.${name}').`,
    });
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
