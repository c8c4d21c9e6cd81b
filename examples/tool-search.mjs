// Part of `npm start`: how a model finds its tools among many, and reads an
// output too large to take whole. The runtime of examples/agents.config.json
// (all five sources) offers tools.search, results.read and results.grep; the
// other tools are sent with defer_loading, as Anthropic's API takes them
// (@ca/model-tools, DeferredTools). A scripted model — the tool_use blocks a
// real one would send — searches, gets tool_reference blocks back, and calls
// what it found. The MCP server's tool list comes from the cache the earlier
// plans left in the state folder, so no search starts it; its first call does.
// The access log (about 2 MB) comes back as a handle, read by lines and searched.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const { FileResultStore, FileToolListCache, buildRuntime, loadConfig } = require('../packages/cli/dist/index.js');
const { DeferredTools, ModelTools } = require('../packages/model-tools/dist/index.js');

/** A logger that keeps the debug lines: the MCP adapter says there when it starts a server. */
function startsCounter() {
  const starts = [];
  const keep = (message) => {
    if (/^MCP server '.*' connected \(/.test(message)) starts.push(message);
  };
  return { starts, logger: { debug: keep, info: keep, warn: () => undefined, error: () => undefined } };
}

const short = (text, length = 100) => (text.length > length ? `${text.slice(0, length - 1)}…` : text).replace(/\s+/g, ' ');

/** Runs the searches and calls; resolves to the number of unexpected results. */
export async function runToolSearch({ env, stdout, stateDir }) {
  const configured = loadConfig({ cwd: here, env });
  // As in the model loop: the service trusts the MCP server it ships, so its tools that only read run in a read-only plan.
  const everything = { ...configured.mcpServers.everything, trustAnnotations: true };
  const config = {
    ...configured,
    mcpServers: { ...configured.mcpServers, everything },
    runtime: { ...configured.runtime, searchTool: true, outputBudget: { bytes: 16_384 } },
  };
  const { starts, logger } = startsCounter();
  const built = await buildRuntime(config, logger, {
    mcp: {
      // Nobody is at a terminal here: a server's question is declined, as the agents command declines it in a pipe
      // (the client declares that it can be asked, as the command does, so the server's cached list is the same).
      interactionHandler: { interact: async () => ({ action: 'decline' }) },
      toolListCache: new FileToolListCache(path.join(stateDir, 'mcp-tools')),
    },
    resultStore: new FileResultStore(path.join(stateDir, 'results')),
  });
  const runtime = built.runtime;
  let failures = 0;
  const expect = (ok, what) => {
    if (!ok) {
      failures++;
      process.stderr.write(`tool search: ${what}\n`);
    }
  };
  try {
    await runtime.runPlan({ policy: { readOnly: true }, resources: config.resources }, async (plan) => {
      const deferred = new DeferredTools(new ModelTools(runtime), plan, { format: 'anthropic' });
      const tools = await deferred.definitions();
      const loaded = tools.filter((tool) => tool.defer_loading !== true).map((tool) => tool.name);
      stdout(`  ${tools.length} tools in the request: ${loaded.join(', ')} loaded, ${tools.length - loaded.length} deferred (defer_loading: true)\n`);

      const catalog = new Map((await runtime.listTools()).map((tool) => [tool.name.replace(/\./g, '_'), tool.source]));
      let call = 0;
      const use = async (name, input) => {
        const { message, outcome } = await deferred.call({ type: 'tool_use', id: `toolu_${++call}`, name, input });
        return { message, outcome };
      };
      const searches = [
        ['add two numbers', 'mcp_everything_get-sum', 'mcp'],
        ['write release notes from merged pull requests', 'skill_release-notes', 'skill'],
        ['count the words of a text', 'demo_word-count', 'custom'],
        ['echo a message with a deadline', 'demo_echo-twice', 'wrapped'],
        ["the web server's access log", 'demo_access-log', 'custom'],
        ['search the files of the workspace for a pattern', 'builtin_fs_grep', 'builtin'],
      ];
      for (const [query, expected, source] of searches) {
        const { message } = await use('tools_search', { query, k: 3 });
        const found = message.content.filter((block) => block.type === 'tool_reference').map((block) => block.tool_name);
        stdout(`  tools_search "${query}" → ${found.map((name) => `${name} (${catalog.get(name) ?? '?'})`).join(', ')}\n`);
        expect(found.includes(expected) && catalog.get(expected) === source, `'${query}' did not find ${expected}`);
      }
      stdout(`  MCP servers started by the ${searches.length} searches: ${starts.length} (their tool lists came from the cache in the state folder)\n`);
      expect(starts.length === 0, 'a search started an MCP server');

      const sum = await use('mcp_everything_get-sum', { a: 19, b: 23 });
      stdout(`  mcp_everything_get-sum {"a":19,"b":23} → ${sum.message.content} (MCP servers started: ${starts.length})\n`);
      expect(sum.message.content === 'The sum of 19 and 23 is 42.' && starts.length === 1, 'the sum did not run on a server started for it');

      const log = await use('demo_access-log', {});
      const handle = log.outcome.result?.handle;
      stdout(
        `  demo_access-log {} → a handle, not the log:\n${log.message.content
          .split('\n')
          .map((line) => `    | ${short(line, 110)}`)
          .slice(0, 4)
          .join('\n')}\n    | …\n`,
      );
      expect(handle?.format === 'text' && handle.lines === 36_000, 'the log did not come back as a handle');
      expect(!log.message.content.includes('f3a9c1d2e4b5a6c7d8e9'), 'a secret of the log reached the model');

      const errors = await use('results_grep', { handle: handle?.handle, pattern: ' 503 ' });
      const grep = JSON.parse(errors.message.content);
      stdout(
        `  results_grep {"pattern":" 503 "} → ${grep.matches.length} lines, e.g. line ${grep.matches[0]?.line}: ${short(grep.matches[0]?.text ?? '', 70)}\n`,
      );
      expect(grep.matches.length === 7, 'the search of the log did not find its 7 errors');

      const range = await use('results_read', { handle: handle?.handle, lines: { from: 17_321, to: 17_323 } });
      const read = JSON.parse(range.message.content);
      stdout(
        `  results_read {"lines":{"from":17321,"to":17323}} →\n${read.text
          .trimEnd()
          .split('\n')
          .map((line) => `    | ${line}`)
          .join('\n')}\n`,
      );
      expect(read.range.lines.from === 17_321 && /session_token=\[REDACTED [a-z-]+\] /.test(read.text), 'the range read did not come back redacted');
    });
  } finally {
    await built.dispose();
  }
  return failures;
}
