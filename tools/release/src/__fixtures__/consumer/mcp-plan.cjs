// After `npm install @ca/adapters-mcp`: the MCP adapter joins the built-in one
// in the same container and runtime, and resolves the same core packages.
// Usage: node mcp-plan.cjs <folder holding note.txt>
const path = require('node:path');
const fs = require('node:fs');
const { pathToFileURL } = require('node:url');
const { registerToolRuntime, TOOL_RUNTIME, TOOL_SOURCE } = require('@ca/tool-lifecycle');
const { registerBuiltinAdapter } = require('@ca/adapters-builtin');
const { registerMcpAdapter } = require('@ca/adapters-mcp');
const { container } = require('tsyringe');

const CORE = ['@ca/domain', '@ca/schema', '@ca/tool-context', '@ca/tool-lifecycle', 'tsyringe'];

/** The file each core package resolves to, seen from `folder`. */
function coreFrom(folder) {
  return Object.fromEntries(CORE.map((name) => [name, fs.realpathSync(require.resolve(name, { paths: [folder] }))]));
}

async function main() {
  const folder = process.argv[2];
  const services = container.createChildContainer();
  registerBuiltinAdapter(services);
  registerMcpAdapter(services, {
    // Trusted, so its readOnlyHint lets echo run in the read-only plan below.
    servers: { mcpServers: { echo: { command: process.execPath, args: [path.join(__dirname, 'echo-server.cjs')], trustAnnotations: true } } },
  });
  registerToolRuntime(services);
  const runtime = services.resolve(TOOL_RUNTIME);
  const resources = [{ id: 'work', kind: 'filesystem', uri: pathToFileURL(folder).href, access: 'read' }];
  const report = { sources: services.resolveAll(TOOL_SOURCE).map((source) => source.kind).sort() };
  await runtime.runPlan({ policy: { readOnly: true }, resources }, async (ctx) => {
    const discovery = await runtime.discover();
    report.sourceErrors = discovery.sourceErrors.map((entry) => `${entry.sourceId}: ${entry.error.message}`);
    report.mcpTools = discovery.tools.filter((tool) => tool.source === 'mcp').map((tool) => tool.name);
    const echo = await runtime.execute('mcp.echo.echo', { text: 'one copy' }, ctx);
    report.echo = { ok: echo.ok, output: echo.ok ? echo.output : String(echo.error), content: echo.content };
    const read = await runtime.execute('builtin.fs.read', { path: 'note.txt' }, ctx);
    report.read = read.ok ? read.output.content : String(read.error);
  });
  await runtime.dispose();
  const mcpFolder = fs.realpathSync(path.dirname(require.resolve('@ca/adapters-mcp/package.json')));
  const builtinFolder = fs.realpathSync(path.dirname(require.resolve('@ca/adapters-builtin/package.json')));
  report.coreFromConsumer = coreFrom(__dirname);
  report.coreFromMcp = coreFrom(mcpFolder);
  report.coreFromBuiltin = coreFrom(builtinFolder);
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
