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

module.exports = { wordCount };
