import { ToolInvalidArgumentError, type DiscoveryResult, type ToolRuntime } from '@ca/tool-lifecycle';
import type { Command } from 'commander';
import { CliError } from './cli-error';
import type { CliIo } from './cli-io';
import type { AgentsConfig } from './config';
import { EXIT_CODES, type ExitCode } from './exit-codes';
import { formatTable } from './format-table';
import { terminalSafe } from './terminal-text';

/** What `agents tools search` needs from `main`. */
export interface ToolsSearchContext {
  readonly io: CliIo;
  readonly loadConfiguration: () => AgentsConfig;
  readonly open: (config: AgentsConfig) => Promise<{ runtime: ToolRuntime; discovery: DiscoveryResult }>;
  readonly wantsJson: (local: { readonly json?: boolean }) => boolean;
  /** Lists every MCP server anew instead of reading the cached lists (`--refresh`). */
  readonly refreshToolLists: () => void;
  readonly setExitCode: (code: ExitCode) => void;
}

interface SearchFlags {
  k?: string;
  regex?: boolean;
  refresh?: boolean;
  json?: boolean;
}

/**
 * `agents tools search "<query>" [-k N] [--regex] [--refresh] [--json]`: the
 * tools of every configured source that best match the query (the runtime's
 * `searchTools`), best first. An MCP server whose tool list is cached in the
 * state folder is not started; `--refresh` lists every server anew.
 */
export function addToolsSearchCommand(tools: Command, context: ToolsSearchContext): void {
  tools
    .command('search <query>')
    .description(
      'find the tools of every configured source that do what the query says (words, or a pattern with --regex); starts no MCP server whose tool list is cached',
    )
    .option('-k, --k <n>', 'how many tools at most, 1 to 100 (default 10)')
    .option('--regex', 'the query is a regular expression (RE2 syntax) matched on names, then descriptions, then arguments')
    .option('--refresh', 'list every MCP server anew first (starting each), and cache the lists')
    .option('--json', 'machine-readable output')
    .action(async (query: string, local: SearchFlags) => {
      const { io } = context;
      const k = local.k === undefined ? 10 : Number(local.k);
      if (!Number.isInteger(k) || k < 1 || k > 100)
        throw new CliError({ code: 'CLI_USAGE', message: `-k ${String(local.k)}: expected a whole number from 1 to 100.` });
      const config = context.loadConfiguration();
      if (local.refresh === true) context.refreshToolLists();
      const { runtime, discovery } = await context.open(config);
      let hits;
      try {
        hits = await runtime.searchTools(query, { k, mode: local.regex === true ? 'regex' : 'bm25' });
      } catch (error) {
        if (!ToolInvalidArgumentError.isInstance(error)) throw error;
        throw new CliError({ code: 'CLI_USAGE', message: `The query cannot be searched: ${error.message}`, cause: error });
      }
      // A source that could not be listed leaves its tools out: the search is incomplete, and says so.
      const failedServers = discovery.unavailable.filter((item) => item.source === 'mcp' && /^mcp\.[^.]+$/.test(item.name));
      for (const item of failedServers) io.stderr(`unavailable: ${item.name} — ${terminalSafe(item.reason)} (its tools are not searched)\n`);
      for (const item of discovery.sourceErrors)
        io.stderr(`source ${item.sourceId} failed: ${terminalSafe(item.error.message)} (its tools are not searched)\n`);
      if (failedServers.length > 0 || discovery.sourceErrors.length > 0) context.setExitCode(EXIT_CODES.failed);
      if (context.wantsJson(local)) {
        io.stdout(`${JSON.stringify({ query, tools: hits }, null, 2)}\n`);
        return;
      }
      if (hits.length === 0) {
        io.stdout(`No tool matches '${terminalSafe(query)}' among ${discovery.tools.length} tools. Try other words, or 'agents tools list'.\n`);
        return;
      }
      io.stdout(
        formatTable(
          ['name', 'source', 'score', 'description'],
          hits.map((hit) => [hit.name, hit.source, hit.score.toFixed(2), terminalSafe(hit.description)]),
          100,
        ),
      );
    });
}
