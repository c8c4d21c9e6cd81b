import type { ToolSourceKind } from '@ca/domain';
import type { SchemaTrust } from '@ca/schema';
import { ToolNotFoundError } from '../errors';
import type { ToolDescriptor, ToolInstance, ToolSource, UnavailableTool } from '../tool';

/**
 * A {@link ToolSource} holding tool instances in memory, for tests. Tools can
 * be added and removed; listeners of `onToolsChanged` are told.
 */
export class InMemoryToolSource implements ToolSource {
  readonly kind: ToolSourceKind;
  readonly id: string;
  readonly schemaTrust: SchemaTrust | undefined;
  /** How many times `discover` ran. */
  discoverCount = 0;
  private readonly tools = new Map<string, ToolInstance>();
  private readonly listeners = new Set<() => void>();
  private readonly unavailableTools: UnavailableTool[] = [];

  constructor(tools: readonly ToolInstance[] = [], options: { readonly id?: string; readonly kind?: ToolSourceKind; readonly schemaTrust?: SchemaTrust } = {}) {
    this.kind = options.kind ?? 'custom';
    this.id = options.id ?? `memory:${this.kind}`;
    this.schemaTrust = options.schemaTrust;
    for (const tool of tools) this.tools.set(tool.descriptor.name, tool);
  }

  async discover(signal?: AbortSignal): Promise<readonly ToolDescriptor[]> {
    signal?.throwIfAborted();
    this.discoverCount++;
    return [...this.tools.values()].map((tool) => tool.descriptor);
  }

  get(name: string): ToolInstance {
    const tool = this.tools.get(name);
    if (tool === undefined) throw new ToolNotFoundError({ toolName: String(name), sourceId: this.id });
    return tool;
  }

  unavailable(): readonly UnavailableTool[] {
    return this.unavailableTools;
  }

  /** Adds (or replaces) a tool and notifies listeners. */
  add(tool: ToolInstance): void {
    this.tools.set(tool.descriptor.name, tool);
    for (const listener of this.listeners) listener();
  }

  /** Removes a tool and notifies listeners. */
  remove(name: string): void {
    this.tools.delete(name);
    for (const listener of this.listeners) listener();
  }

  onToolsChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
