import { RUNTIME_LOGGER, TOOL_SOURCE } from '@ca/tool-lifecycle';
import type { DependencyContainer } from 'tsyringe';
import type { McpAdapterSettings } from './mcp-adapter-settings';
import { McpToolSource } from './mcp-tool-source';

/**
 * Creates the tool source of the MCP servers in `settings.servers`.
 *
 * @example
 * const source = createMcpAdapter({
 *   servers: { mcpServers: { everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] } } },
 * });
 * const runtime = new ToolRuntime({ sources: [source] });
 *
 * @throws {McpConfigError} When `servers` is an object and not a valid configuration.
 */
export function createMcpAdapter(settings: McpAdapterSettings): McpToolSource {
  return new McpToolSource(settings);
}

/**
 * Creates the MCP tool source and registers it in `container` under
 * `TOOL_SOURCE` (multi-registration, beside other adapters). Without a
 * `logger` in the settings it uses the container's `RUNTIME_LOGGER`, when one
 * is registered already. Register adapters before resolving `TOOL_RUNTIME`.
 *
 * @returns The source, e.g. to dispose it or watch its leases.
 * @throws {McpConfigError} When `servers` is an object and not a valid configuration.
 */
export function registerMcpAdapter(container: DependencyContainer, settings: McpAdapterSettings): McpToolSource {
  const logger = settings.logger ?? (container.isRegistered(RUNTIME_LOGGER, true) ? container.resolve(RUNTIME_LOGGER) : undefined);
  const source = createMcpAdapter(logger === undefined ? settings : { ...settings, logger });
  container.register(TOOL_SOURCE, { useValue: source });
  return source;
}
