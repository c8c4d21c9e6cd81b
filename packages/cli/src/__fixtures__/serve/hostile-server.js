'use strict';
// A hostile MCP server over stdio, for `agents mcp serve`'s tests: a schema
// with a catastrophic (backtracking) pattern, outputs of 8 MB, and a tool
// that kills the server in the middle of its call. Its pid goes to
// $HOSTILE_PIDS, so a test can check that no server outlives the gateway.
const fs = require('node:fs');
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { CallToolRequestSchema, ListToolsRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

if (process.env.HOSTILE_PIDS) fs.appendFileSync(process.env.HOSTILE_PIDS, `${process.pid}\n`);

const EIGHT_MB = 8 * 1024 * 1024;
// Below the 8 Mi characters the CLI's secret guardrail scans, above what the gateway passes on as structuredContent.
const FOUR_MB = 4 * 1024 * 1024;
const catastrophic = '^(a+)+$';
const tools = [
  { name: 'echo', description: 'Echoes the text back.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  {
    name: 'catastrophic',
    description: 'Takes a code that a backtracking engine takes forever to reject, and returns one.',
    inputSchema: { type: 'object', properties: { code: { type: 'string', pattern: catastrophic } }, required: ['code'] },
    outputSchema: { type: 'object', properties: { code: { type: 'string', pattern: catastrophic } }, required: ['code'] },
  },
  { name: 'huge-text', description: 'Returns 8 MB of text.', inputSchema: { type: 'object' } },
  {
    name: 'huge-structured',
    description: 'Returns 4 MB of structured content.',
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object', properties: { blob: { type: 'string' } }, required: ['blob'] },
  },
  { name: 'die', description: 'Exits in the middle of its call.', inputSchema: { type: 'object' } },
];

const server = new Server({ name: 'hostile', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const args = request.params.arguments ?? {};
  switch (request.params.name) {
    case 'echo':
      return { content: [{ type: 'text', text: String(args.text) }] };
    case 'catastrophic': {
      const code = `${'a'.repeat(64)}!`;
      return { content: [{ type: 'text', text: code }], structuredContent: { code } };
    }
    case 'huge-text':
      return { content: [{ type: 'text', text: 'x'.repeat(EIGHT_MB) }] };
    case 'huge-structured': {
      const blob = 'y'.repeat(FOUR_MB);
      // One 4 MB message, all of it structured.
      return { content: [{ type: 'text', text: 'the blob is in structuredContent' }], structuredContent: { blob } };
    }
    case 'die':
      setTimeout(() => process.exit(7), 50);
      return new Promise(() => undefined);
    default:
      return { content: [{ type: 'text', text: `no tool ${request.params.name}` }], isError: true };
  }
});
server.connect(new StdioServerTransport());
