'use strict';
// An MCP server over stdio that answers every tools/call with the `_meta` of
// the request, for the tests of what the client sends besides the arguments.
// `note` declares no annotations (so it counts as writing); `look` says it is
// read-only.
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { CallToolRequestSchema, ListToolsRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

const server = new Server({ name: 'meta-echo', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: 'note', description: 'Returns the _meta of the request.', inputSchema: { type: 'object' } },
    {
      name: 'look',
      description: 'Returns the _meta of the request; read-only.',
      inputSchema: { type: 'object' },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => ({
  content: [],
  structuredContent: { meta: request.params._meta || {} },
}));
server.connect(new StdioServerTransport()).catch((error) => {
  process.stderr.write(`meta-echo: ${error && error.message}\n`);
  process.exit(1);
});
