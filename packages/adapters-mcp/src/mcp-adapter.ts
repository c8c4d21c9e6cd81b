import { INTERACTION_HANDLER, RUNTIME_LOGGER, SAMPLING_HANDLER, TOOL_SOURCE } from '@ca/tool-lifecycle';
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
 * `logger`, `interactionHandler` or `samplingHandler` in the settings it uses
 * the container's `RUNTIME_LOGGER`, `INTERACTION_HANDLER` and
 * `SAMPLING_HANDLER`, when registered already. Register adapters before
 * resolving `TOOL_RUNTIME`.
 *
 * @returns The source, e.g. to dispose it or watch its leases.
 * @throws {McpConfigError} When `servers` is an object and not a valid configuration.
 */
export function registerMcpAdapter(container: DependencyContainer, settings: McpAdapterSettings): McpToolSource {
  const fromContainer = <T>(token: symbol): T | undefined => (container.isRegistered(token, true) ? container.resolve<T>(token) : undefined);
  const logger = settings.logger ?? fromContainer(RUNTIME_LOGGER as symbol);
  const interactionHandler = settings.interactionHandler ?? fromContainer(INTERACTION_HANDLER as symbol);
  const samplingHandler = settings.samplingHandler ?? fromContainer(SAMPLING_HANDLER as symbol);
  const source = createMcpAdapter({
    ...settings,
    ...(logger === undefined ? {} : { logger }),
    ...(interactionHandler === undefined ? {} : { interactionHandler }),
    ...(samplingHandler === undefined ? {} : { samplingHandler }),
  } as McpAdapterSettings);
  container.register(TOOL_SOURCE, { useValue: source });
  return source;
}
