import type { ToolSourceKind } from '@ca/domain';
import type { SchemaTrust } from '@ca/schema';
import { closestNames } from './closest-names';
import { ToolNotFoundError, ToolRegistrationError } from '../errors';
import type { ToolDescriptor } from './tool-descriptor';
import type { ToolInstance } from './tool-instance';
import type { ToolSource } from './tool-source';

/** Settings of a {@link ToolSet}. */
export interface ToolSetSettings {
  /** Identifies the source in messages (`builtin`, `custom:billing`, `jira`). */
  readonly id: string;
  /** The kind of source: a known one or a team's own. */
  readonly kind: ToolSourceKind;
  /** The tools, each with a unique `descriptor.name`. */
  readonly tools: Iterable<ToolInstance>;
  /**
   * Whether the tools' schemas are the service's own (see `ToolSource.schemaTrust`).
   * Default `'untrusted'`: patterns run on the linear-time engine.
   */
  readonly schemaTrust?: SchemaTrust;
}

/**
 * A {@link ToolSource} for a fixed set of tools known up front (built-ins,
 * custom tools, wrapped tools, a team's adapter): `discover` lists their
 * descriptors, `get` returns the instance, and an unknown name is a
 * `ToolNotFoundError` with suggestions — the same failure every source gives.
 * Sources extend it or hold one.
 */
export class ToolSet implements ToolSource {
  readonly id: string;
  readonly kind: ToolSourceKind;
  readonly schemaTrust: SchemaTrust | undefined;
  private readonly tools = new Map<string, ToolInstance>();

  /** @throws ToolRegistrationError when two tools share a name. */
  constructor(settings: ToolSetSettings) {
    this.id = settings.id;
    this.kind = settings.kind;
    this.schemaTrust = settings.schemaTrust;
    for (const tool of settings.tools) {
      const name = tool.descriptor.name;
      if (this.tools.has(name)) {
        throw new ToolRegistrationError({ problem: 'duplicate', duplicates: [{ toolName: name, sourceIds: [this.id, this.id] }] });
      }
      this.tools.set(name, tool);
    }
  }

  /** Names of the tools, in the order they were given. */
  get names(): readonly string[] {
    return [...this.tools.keys()];
  }

  /** True when the set holds a tool of this name. */
  has(name: string): boolean {
    return this.tools.has(name);
  }

  async discover(signal?: AbortSignal): Promise<readonly ToolDescriptor[]> {
    signal?.throwIfAborted();
    return [...this.tools.values()].map((tool) => tool.descriptor);
  }

  /** @throws ToolNotFoundError when the set has no tool of this name. */
  get(name: string): ToolInstance {
    const tool = this.tools.get(name);
    if (tool === undefined) {
      throw new ToolNotFoundError({ toolName: String(name), sourceId: this.id, suggestions: closestNames(String(name), this.tools.keys()) });
    }
    return tool;
  }
}
