import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { McpGateway, McpGatewaySession } from '../gateway/mcp-gateway';

/** Options of {@link serveStdio}. */
export interface ServeStdioOptions {
  /** Where the client's messages come from; default `process.stdin`. */
  readonly input?: Readable;
  /** Where the answers go; default `process.stdout` (nothing else may write there). */
  readonly output?: Writable;
}

/**
 * Serves one session over stdio, as an MCP client starts a server from its
 * `mcpServers` entry: newline-delimited JSON-RPC on `input` and `output`.
 * The session (and its plan) ends when the client closes its end of the
 * pipe, when the plan is cancelled, or when `close` is called; `ended`
 * resolves then.
 */
export async function serveStdio(gateway: McpGateway, options: ServeStdioOptions = {}): Promise<McpGatewaySession> {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const session = await gateway.connect(new StdioServerTransport(input, output), { transport: 'stdio' });
  // The SDK's transport does not watch for the end of its input: a client that quits must end the session.
  const onEnd = (): void => void session.close('the client closed its end of stdio');
  input.once('end', onEnd);
  input.once('close', onEnd);
  void session.ended.then(() => {
    input.off('end', onEnd);
    input.off('close', onEnd);
  });
  return session;
}
