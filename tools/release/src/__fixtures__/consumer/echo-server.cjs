// A tiny MCP server on stdio with one read-only tool, `echo`, built with the
// @modelcontextprotocol/sdk that @ca/adapters-mcp brought in.
const path = require('node:path');

const adapterFolder = path.dirname(require.resolve('@ca/adapters-mcp/package.json'));
const fromAdapter = (request) => require(require.resolve(request, { paths: [adapterFolder] }));
const { Server } = fromAdapter('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = fromAdapter('@modelcontextprotocol/sdk/server/stdio.js');
const { CallToolRequestSchema, ListToolsRequestSchema } = fromAdapter('@modelcontextprotocol/sdk/types.js');

const server = new Server({ name: 'echo', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'echo',
      description: 'Returns the text it was given.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      annotations: { readOnlyHint: true },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => ({
  content: [{ type: 'text', text: String(request.params.arguments?.text) }],
}));
server.connect(new StdioServerTransport()).catch((error) => {
  process.stderr.write(`${error}\n`);
  process.exit(1);
});
