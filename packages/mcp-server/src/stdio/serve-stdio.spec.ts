import { PassThrough } from 'node:stream';
import { TestTool } from '@ca/tool-lifecycle/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { gatewayOver } from '../gateway/gateway.test-helper';
import { serveStdio } from './serve-stdio';

/** The client's end of a pair of pipes, speaking the stdio framing (what a client's stdio transport does over a child's pipes). */
class PipeClientTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly buffer = new ReadBuffer();
  constructor(
    private readonly fromServer: PassThrough,
    private readonly toServer: PassThrough,
  ) {}
  async start(): Promise<void> {
    this.fromServer.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let message = this.buffer.readMessage(); message !== null; message = this.buffer.readMessage()) this.onmessage?.(message);
    });
  }
  async send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(serializeMessage(message));
  }
  async close(): Promise<void> {
    this.toServer.end();
    this.onclose?.();
  }
}

describe('serveStdio', () => {
  it('serves one session over a pair of pipes, and ends it (and its plan) when the client closes its end', async () => {
    const tool = new TestTool({ name: 'notes.read', capability: { writes: false }, execute: (_input, ctx) => ctx.planId });
    const { gateway } = gatewayOver([tool]);
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    const session = await serveStdio(gateway, { input: toServer, output: fromServer });
    const client = new Client({ name: 'pipe-client', version: '2.0.0' });
    await client.connect(new PipeClientTransport(fromServer, toServer));
    const planId = ((await client.callTool({ name: 'notes.read', arguments: {} })).content as { text: string }[])[0]?.text;
    expect(planId).toBe(session.planId);
    expect(session.clientName).toBe('pipe-client 2.0.0');
    await client.close();
    await session.ended;
    expect(tool.count('deactivate', planId)).toBe(1);
    expect(gateway.sessionCount).toBe(0);
  });
});
