'use strict';
// Custom tools for the demo, defined with @ca/adapters-custom. The input type
// of execute is inferred from the JSON Schema in TypeScript; here, plain JS.
const { defineTool } = require('@ca/adapters-custom');

const wordCount = defineTool({
  name: 'demo.word-count',
  description: 'Counts the words and lines of a text.',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string', maxLength: 1000000 } },
    required: ['text'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: { words: { type: 'integer' }, lines: { type: 'integer' } },
    required: ['words', 'lines'],
  },
  capability: { writes: false, checkpointable: true, idempotent: true, openWorld: false },
  execute: async ({ text }) => ({
    words: text.split(/\s+/).filter(Boolean).length,
    lines: text.split('\n').length,
  }),
});

// A tool whose output is large: the service's access log of the last hours,
// about 2 MB of text. With an output budget, it comes back as a handle.
const accessLog = defineTool({
  name: 'demo.access-log',
  description: "Returns the web server's access log of the last hours, one request per line.",
  inputSchema: {
    type: 'object',
    properties: { hours: { type: 'integer', minimum: 1, maximum: 24, description: 'How many hours back (default 6).' } },
    additionalProperties: false,
  },
  capability: { writes: false, checkpointable: true, idempotent: true, openWorld: false },
  execute: async ({ hours = 6 }) => {
    const lines = [];
    for (let index = 0; index < hours * 6_000; index++) {
      const second = String(index % 60).padStart(2, '0');
      const status = index % 4_999 === 4_998 ? 503 : 200;
      const query = index === 17_321 ? '?session_token=f3a9c1d2e4b5a6c7d8e9' : '';
      lines.push(
        `2026-12-03T0${Math.floor(index / 6_000)}:${String(Math.floor(index / 100) % 60).padStart(2, '0')}:${second}Z GET /api/items/${index % 977}${query} ${status} ${index % 89} ms`,
      );
    }
    return lines.join('\n');
  },
});

module.exports = { wordCount, accessLog };
