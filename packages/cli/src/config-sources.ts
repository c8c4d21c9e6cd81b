import path from 'node:path';
import { BUILTIN_TOOL_NAMES } from '@ca/adapters-builtin';
import type { AgentsConfig, WrappedEntry } from './config';

/** The sources a configuration can turn on, in the order they are described. */
export type SourceName = 'builtin' | 'custom' | 'mcp' | 'skills' | 'wrapped';

/** Whether one source is on, and what it brings. */
export interface SourceSummary {
  readonly source: SourceName;
  readonly enabled: boolean;
  /** `all built-in tools`, `servers: everything`, `no "builtin" key`, … */
  readonly detail: string;
}

/** Which sources (and which MCP servers and wrapped entries) a command builds its runtime from. */
export interface SourceSelection {
  readonly builtin: boolean;
  readonly custom: boolean;
  /** Names of the MCP servers to start. */
  readonly mcpServers: readonly string[];
  readonly skills: boolean;
  readonly wrapped: readonly WrappedEntry[];
}

function builtinEnabled(config: AgentsConfig): boolean {
  return config.builtin !== undefined && config.builtin !== false;
}

function builtinToolList(config: AgentsConfig): readonly string[] | undefined {
  const settings = config.builtin;
  if (typeof settings !== 'object' || settings === null) return undefined;
  const tools = (settings as { tools?: unknown }).tools;
  return Array.isArray(tools) ? (tools as string[]) : undefined;
}

/** Names of the configured MCP servers that are not `disabled`. */
export function enabledMcpServers(config: AgentsConfig): string[] {
  return Object.entries(config.mcpServers ?? {})
    .filter(([, server]) => server['disabled'] !== true)
    .map(([name]) => name);
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** The configuration's file, as the user would type it from `cwd`. */
export function describeConfigFile(config: AgentsConfig, cwd: string): string {
  if (config.file === undefined) return 'no configuration file';
  const relative = path.relative(cwd, config.file);
  return relative.length > 0 && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : config.file;
}

/** What each source of a configuration brings, or why it is off. */
export function describeSources(config: AgentsConfig): SourceSummary[] {
  const toolList = builtinToolList(config);
  const servers = Object.keys(config.mcpServers ?? {});
  const enabledServers = enabledMcpServers(config);
  const disabled = servers.filter((server) => !enabledServers.includes(server));
  const roots = config.skills?.roots ?? [];
  const wrapped = config.wrapped ?? [];
  const modules = config.custom?.modules ?? [];
  return [
    builtinEnabled(config)
      ? { source: 'builtin', enabled: true, detail: toolList === undefined ? 'all built-in tools' : `only ${toolList.join(', ')}` }
      : { source: 'builtin', enabled: false, detail: config.builtin === false ? '"builtin": false' : 'no "builtin" key' },
    modules.length > 0
      ? { source: 'custom', enabled: true, detail: plural(modules.length, 'module') }
      : { source: 'custom', enabled: false, detail: 'no "custom" key' },
    enabledServers.length > 0
      ? { source: 'mcp', enabled: true, detail: `${enabledServers.join(', ')}${disabled.length > 0 ? `; disabled: ${disabled.join(', ')}` : ''}` }
      : { source: 'mcp', enabled: false, detail: servers.length > 0 ? `every server is disabled (${disabled.join(', ')})` : 'no "mcpServers" key' },
    config.skills !== undefined
      ? { source: 'skills', enabled: true, detail: plural(roots.length, 'root') }
      : { source: 'skills', enabled: false, detail: 'no "skills" key' },
    wrapped.length > 0
      ? { source: 'wrapped', enabled: true, detail: plural(wrapped.length, 'tool') }
      : { source: 'wrapped', enabled: false, detail: 'no "wrapped" key' },
  ];
}

/**
 * One line saying which sources a configuration turns on and which are off:
 * `Configuration agents.config.json — on: builtin (all built-in tools), mcp (everything); off: custom, skills, wrapped.`
 */
export function summarizeSources(config: AgentsConfig, cwd: string): string {
  const sources = describeSources(config);
  const on = sources.filter((source) => source.enabled).map((source) => `${source.source} (${source.detail})`);
  const off = sources.filter((source) => !source.enabled).map((source) => (source.source === 'builtin' ? `builtin (${source.detail})` : source.source));
  const where = config.file === undefined ? 'No configuration file (built-in tools only)' : `Configuration ${describeConfigFile(config, cwd)}`;
  return `${where} — on: ${on.length > 0 ? on.join(', ') : 'nothing'}; off: ${off.length > 0 ? off.join(', ') : 'nothing'}.`;
}

/**
 * Why a tool of that name cannot come from this configuration, when the
 * reason is a source that is off (`builtin.*` without `builtin`, an MCP
 * server that is not configured, …); `''` otherwise. Starts with a space.
 */
export function sourceOffHint(toolName: string, config: AgentsConfig, cwd: string): string {
  const file = config.file === undefined ? undefined : describeConfigFile(config, cwd);
  const noFile = `No configuration file was found (agents.config.json, .yaml or .yml in ${cwd}; or pass -c <file>), so only the built-in tools are on.`;
  if (toolName.startsWith('builtin.')) {
    if (!builtinEnabled(config)) {
      return ` The built-in tools are off in ${file}${config.builtin === false ? ' ("builtin": false)' : ' (it has no "builtin" key)'}: add "builtin": true, or its settings, to turn them on.`;
    }
    const list = builtinToolList(config);
    if (list !== undefined && !list.includes(toolName) && (BUILTIN_TOOL_NAMES as readonly string[]).includes(toolName)) {
      return ` ${file} turns on only some built-in tools ("builtin": { "tools": [...] }): add '${toolName}' to that list.`;
    }
    return '';
  }
  if (toolName.startsWith('mcp.')) {
    const server = toolName.slice(4).split('.')[0] ?? '';
    if (file === undefined) return ` ${noFile}`;
    const configured = config.mcpServers?.[server];
    if (configured === undefined) {
      const servers = Object.keys(config.mcpServers ?? {});
      return ` No MCP server '${server}' is configured in ${file} (${servers.length > 0 ? `its servers: ${servers.join(', ')}` : 'it has no "mcpServers" key'}); MCP tools are named mcp.<server>.<tool>.`;
    }
    if (configured['disabled'] === true) return ` MCP server '${server}' is disabled in ${file} ("disabled": true).`;
    return '';
  }
  if (toolName.startsWith('skill.') && config.skills === undefined) {
    return file === undefined ? ` ${noFile}` : ` Skills are off in ${file} (it has no "skills" key): add "skills": { "roots": ["<folder>"] }.`;
  }
  return '';
}

/**
 * The sources a command needs. Without `tools`, every configured source (as
 * `tools list` needs). With `tools`, only what can offer those names: MCP
 * servers by their `mcp.<server>.` prefix, built-ins by `builtin.`, skills by
 * `skill.`, the wrapped entries of those names and, through them, the tools
 * they wrap. Custom tools are named freely, so the custom modules are loaded
 * unless every name is in one of those namespaces. (A command that does not
 * find a name among the selected sources builds every source after all.)
 */
export function selectSources(config: AgentsConfig, tools?: readonly string[]): SourceSelection {
  const servers = enabledMcpServers(config);
  const entries = config.wrapped ?? [];
  // The runtime's search tool searches every source.
  if (tools === undefined || tools.includes('tools.search')) {
    return { builtin: builtinEnabled(config), custom: config.custom !== undefined, mcpServers: servers, skills: config.skills !== undefined, wrapped: entries };
  }
  const names = new Set(tools);
  const wrapped = new Set<WrappedEntry>();
  // A wrapped tool needs the tool it wraps, which may itself be wrapped.
  for (let grew = true; grew;) {
    grew = false;
    for (const entry of entries) {
      if (names.has(entry.name) && !wrapped.has(entry)) {
        wrapped.add(entry);
        names.add(entry.tool);
        grew = true;
      }
    }
  }
  const needed = [...names];
  const namespaced = (name: string) => name.startsWith('builtin.') || name.startsWith('mcp.') || name.startsWith('skill.');
  return {
    builtin: builtinEnabled(config) && needed.some((name) => name.startsWith('builtin.')),
    custom: config.custom !== undefined && !needed.every(namespaced),
    mcpServers: servers.filter((server) => needed.some((name) => name.startsWith(`mcp.${server}.`))),
    skills: config.skills !== undefined && needed.some((name) => name.startsWith('skill.')),
    wrapped: [...wrapped],
  };
}

/** True when the selection leaves out something the configuration turns on. */
export function isPartial(selection: SourceSelection, config: AgentsConfig): boolean {
  const all = selectSources(config);
  return (
    selection.builtin !== all.builtin ||
    selection.custom !== all.custom ||
    selection.skills !== all.skills ||
    selection.mcpServers.length !== all.mcpServers.length ||
    selection.wrapped.length !== all.wrapped.length
  );
}
