import type { DependencyContainer } from 'tsyringe';
import { TOOL_SOURCE, ToolSet, containerLogger, type ToolDescriptor, type ToolInstance, type ToolSource } from '@ca/tool-lifecycle';
import { resolveSettings, type BuiltinAdapterSettings, type BuiltinToolName, type ResolvedSettings } from './builtin-adapter-settings';
import { BuiltinTool, type BuiltinToolSpec } from './builtin-tool';
import { commandTool } from './tools/command-run';
import { deleteTool } from './tools/fs-delete';
import { editTool } from './tools/fs-edit';
import { globTool } from './tools/fs-glob';
import { grepTool } from './tools/fs-grep';
import { listTool } from './tools/fs-list';
import { readTool } from './tools/fs-read';
import { writeTool } from './tools/fs-write';
import { httpGetTool, httpRequestTool } from './tools/http-request';
import { UndoStore } from './undo-store';

const SPECS: Readonly<Record<BuiltinToolName, BuiltinToolSpec>> = {
  'builtin.fs.read': readTool,
  'builtin.fs.write': writeTool,
  'builtin.fs.edit': editTool,
  'builtin.fs.delete': deleteTool,
  'builtin.fs.list': listTool,
  'builtin.fs.glob': globTool,
  'builtin.fs.grep': grepTool,
  'builtin.command.run': commandTool,
  'builtin.http.get': httpGetTool,
  'builtin.http.request': httpRequestTool,
};

/**
 * The built-in tools as a `ToolSource` of kind `'builtin'`: file tools
 * confined to the plan's bound resources and recording undoable changes, a
 * command runner and HTTP requests. Tools are plain objects, created once
 * and served through a `ToolSet`; discovery does no I/O.
 */
export class BuiltinToolSource implements ToolSource {
  /** Always `'builtin'`. */
  readonly kind = 'builtin' as const;
  /** The built-in tools' schemas are this package's own: their patterns run on `RegExp`. */
  readonly schemaTrust = 'trusted' as const;
  /** From the settings, default `'builtin'`. */
  readonly id: string;
  private readonly tools: ToolSet;
  private readonly settings: ResolvedSettings;
  #sandboxDecided: Promise<void> | undefined;

  /**
   * @param settings - See {@link BuiltinAdapterSettings}.
   * @throws {BuiltinToolError} `BUILTIN_INVALID_SETTINGS` when a setting is invalid.
   */
  constructor(settings: BuiltinAdapterSettings = {}) {
    const resolved: ResolvedSettings = resolveSettings(settings);
    const undo = new UndoStore(resolved.undo.directory, resolved.undo.inlineMaxBytes);
    this.id = resolved.id;
    this.settings = resolved;
    // A name the settings repeat is one tool, as it always was.
    const names = [...new Set(resolved.tools)].sort((left, right) => left.localeCompare(right));
    this.tools = new ToolSet({
      id: this.id,
      kind: this.kind,
      schemaTrust: this.schemaTrust,
      tools: names.map((name) => new BuiltinTool(SPECS[name], resolved, undo)),
    });
  }

  /**
   * The descriptors of the enabled tools, sorted by name. The first call
   * decides whether commands run in the kernel sandbox (with `'auto'`, by
   * probing it once per process; a fall back to none is logged once), which
   * marks the command tool `sandboxed` (its capability in a plan then follows
   * the plan: `capabilityInPlan`). Never throws.
   */
  async discover(): Promise<readonly ToolDescriptor[]> {
    if (this.tools.has('builtin.command.run')) {
      const command = this.tools.get('builtin.command.run') as BuiltinTool;
      const sandbox = this.settings.command.sandbox;
      this.#sandboxDecided ??= sandbox.isEnabled().then((sandboxed) => command.useSandbox(sandboxed, sandbox.settings.network));
      await this.#sandboxDecided;
    }
    return this.tools.discover();
  }

  /**
   * The instance of an enabled tool.
   * @throws {ToolNotFoundError} `TOOL_NOT_FOUND` (with the closest names) when the name is not an enabled built-in tool.
   */
  get(name: string): ToolInstance {
    return this.tools.get(name);
  }
}

/**
 * Creates the built-in tool source.
 *
 * @example
 * const source = createBuiltinAdapter({ tools: ['builtin.fs.read', 'builtin.fs.grep'] });
 *
 * @throws {BuiltinToolError} `BUILTIN_INVALID_SETTINGS` when a setting is invalid.
 */
export function createBuiltinAdapter(settings: BuiltinAdapterSettings = {}): BuiltinToolSource {
  return new BuiltinToolSource(settings);
}

/**
 * Creates the built-in tool source and registers it in `container` under
 * `TOOL_SOURCE` (multi-registration); register it before resolving the runtime.
 *
 * @example
 * const child = container.createChildContainer();
 * registerBuiltinAdapter(child, { command: { allow: ['git'] } });
 * registerToolRuntime(child);
 * const runtime = child.resolve(TOOL_RUNTIME);
 *
 * @throws {BuiltinToolError} `BUILTIN_INVALID_SETTINGS` when a setting is invalid.
 */
export function registerBuiltinAdapter(container: DependencyContainer, settings: BuiltinAdapterSettings = {}): BuiltinToolSource {
  // The container's logger, for what the adapter warns about; a malformed settings value is left for the check to refuse.
  const source = createBuiltinAdapter(
    typeof settings === 'object' && settings !== null && settings.logger === undefined ? { ...settings, logger: containerLogger(container) } : settings,
  );
  container.register(TOOL_SOURCE, { useValue: source });
  return source;
}
