import { BUILTIN_TOOL_NAMES } from '@ca/adapters-builtin';
import type { DiscoveryResult } from '@ca/tool-lifecycle';
import { adviseMessage, type AdviceContext } from './cli-advice';
import type { AgentsConfig } from './config';
import { describeConfigFile, sourceOffHint } from './config-sources';
import { didYouMean } from './suggest';

/**
 * Why a command cannot have the tool it names, as a code and a message:
 * the tool (or its MCP server, or its whole source) is unavailable, with
 * the reason; or no source offers it, with the closest names, a word when
 * the source such a name comes from is off, and the command that lists them.
 */
export function describeMissingTool(name: string, discovery: DiscoveryResult, config: AgentsConfig, cwd: string): { code: string; message: string } {
  const context: AdviceContext = { command: 'tools run', ...(config.file === undefined ? {} : { configFile: describeConfigFile(config, cwd) }) };
  const unavailable =
    discovery.unavailable.find((item) => item.name === name) ?? discovery.unavailable.find((item) => item.source === 'mcp' && name.startsWith(`${item.name}.`));
  if (unavailable !== undefined) {
    const code = typeof unavailable.error?.code === 'string' ? unavailable.error.code : 'TOOL_UNAVAILABLE';
    const server = (unavailable.error as { server?: unknown } | undefined)?.server;
    return {
      code,
      message: adviseMessage(code, `Tool '${name}' is unavailable: ${unavailable.reason}`, context, typeof server === 'string' ? { server } : {}),
    };
  }
  const server = name.startsWith('mcp.') ? name.slice(4).split('.')[0] : undefined;
  const failed = server === undefined ? undefined : discovery.sourceErrors.find((item) => (item.error as { server?: unknown }).server === server);
  if (failed !== undefined) {
    const code = failed.error.code ?? 'TOOL_UNAVAILABLE';
    return { code, message: adviseMessage(code, `Tool '${name}' is unavailable: ${failed.error.message}`, context, { server: server as string }) };
  }
  // Built-in names are suggested even when the configuration leaves them out: the hint then says how to turn them on.
  const candidates = [
    ...discovery.tools.map((tool) => tool.name),
    ...discovery.unavailable.map((item) => item.name),
    ...(name.startsWith('builtin.') ? BUILTIN_TOOL_NAMES : []),
  ];
  return {
    code: 'TOOL_NOT_FOUND',
    message: `No configured source offers a tool named '${name}'.${didYouMean(name, candidates)}${sourceOffHint(name, config, cwd)} Run 'agents tools list' to see every tool.`,
  };
}
