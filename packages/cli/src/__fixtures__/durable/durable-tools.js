'use strict';
// Custom tools of the durable CLI test: a gate that waits for a file (idempotent: a resumed plan runs it again),
// a counter that is not idempotent (each run appends a line: a step run twice shows), a tool that needs approval,
// and one that echoes a value no guardrail knows for a secret (only the journal key hides it).
const fs = require('node:fs');
const { defineTool } = require('@ca/adapters-custom');

const gate = defineTool({
  name: 'test.gate',
  description: 'Appends this process to <marker>.started, then waits until <marker>.open exists or the plan is cancelled.',
  inputSchema: { type: 'object', properties: { marker: { type: 'string' } }, required: ['marker'] },
  capability: { writes: false, idempotent: true },
  execute: ({ marker }, ctx) =>
    new Promise((resolve) => {
      fs.appendFileSync(`${marker}.started`, `${process.pid}\n`);
      const timer = setInterval(() => {
        if (fs.existsSync(`${marker}.open`)) {
          clearInterval(timer);
          resolve({ opened: true, pid: process.pid });
        }
      }, 50);
      ctx.cancellationToken.signal.addEventListener('abort', () => {
        clearInterval(timer);
        fs.writeFileSync(`${marker}.cancelled`, String(process.pid));
        resolve({ cancelled: true });
      });
    }),
});

const count = defineTool({
  name: 'test.count',
  description: 'Appends one line to a file: not idempotent.',
  inputSchema: { type: 'object', properties: { file: { type: 'string' } }, required: ['file'] },
  capability: { writes: true, idempotent: false, checkpointable: false },
  execute: async ({ file }) => {
    fs.appendFileSync(file, `${process.pid}\n`);
    return { counted: fs.readFileSync(file, 'utf8').trim().split('\n').length };
  },
});

const ask = defineTool({
  name: 'test.ask',
  description: 'Does nothing; the plan asks a person before it runs.',
  inputSchema: { type: 'object' },
  capability: { writes: false, idempotent: true },
  execute: async () => ({ asked: true, pid: process.pid }),
});

const echo = defineTool({
  name: 'test.echo',
  description: 'Returns its input.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  capability: { writes: false, idempotent: true },
  execute: async (input) => input,
});

module.exports = [gate, count, ask, echo];
