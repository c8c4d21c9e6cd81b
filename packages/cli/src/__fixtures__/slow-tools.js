'use strict';
// Custom tools for the CLI tests: one that waits until it is cancelled and
// writes a marker file when its signal aborts, one that writes without
// undo data, one that echoes, and one that throws.
const fs = require('node:fs');
const { defineTool } = require('@ca/adapters-custom');

const waitForCancel = defineTool({
  name: 'test.wait-for-cancel',
  description: 'Waits until the plan is cancelled, then writes a marker file.',
  inputSchema: { type: 'object', properties: { marker: { type: 'string' } }, required: ['marker'] },
  capability: { writes: false },
  execute: ({ marker }, ctx) =>
    new Promise((resolve) => {
      fs.writeFileSync(`${marker}.started`, String(process.pid));
      ctx.cancellationToken.signal.addEventListener('abort', () => {
        fs.writeFileSync(marker, String(ctx.cancellationToken.reason));
        resolve({ cancelled: true });
      });
    }),
});

const unsafeWrite = defineTool({
  name: 'test.unsafe-write',
  description: 'Claims to write without recording undo data.',
  inputSchema: { type: 'object' },
  capability: { writes: true, checkpointable: false },
  execute: async () => ({ wrote: true }),
});

const echo = defineTool({
  name: 'test.echo',
  description: 'Returns its input.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  capability: { writes: false, idempotent: true },
  execute: async (input) => input,
});

const fail = defineTool({
  name: 'test.throw',
  description: 'Throws an error of its own.',
  inputSchema: { type: 'object' },
  capability: { writes: false },
  execute: async (input) => {
    throw new Error(typeof input.message === 'string' ? input.message : 'the disk is on fire');
  },
});

module.exports = [waitForCancel, unsafeWrite, echo, fail];
