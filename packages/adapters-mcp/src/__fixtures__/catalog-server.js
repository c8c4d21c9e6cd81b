'use strict';
// A small MCP server over stdio whose prompts change while it runs: add-prompt
// registers a prompt, and the SDK's McpServer announces prompts/list_changed.
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');

const server = new McpServer({ name: 'catalog-fixture', version: '1.0.0' });
const text = (value) => ({ messages: [{ role: 'user', content: { type: 'text', text: value } }] });
server.registerPrompt('greeting', { description: 'Says hello.' }, () => text('Hello!'));
server.registerTool('add-prompt', { description: 'Adds the prompt "farewell".' }, async () => {
  server.registerPrompt('farewell', { description: 'Says goodbye.' }, () => text('Goodbye!'));
  return { content: [{ type: 'text', text: 'added' }] };
});
server.connect(new StdioServerTransport()).catch((error) => {
  process.stderr.write(`catalog-fixture: ${error && error.message}\n`);
  process.exit(1);
});
