import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { fixtures, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';

// What an MCP client of `agents mcp serve` receives when the output guardrail
// or an after-hook changed a result: the built binary as a child process, a
// real SDK client on its stdio, server-everything upstream, a real hook program.
const bin = path.resolve(__dirname, '..', 'dist', 'bin.js');
jest.setTimeout(120_000);

const openClients: Client[] = [];
afterEach(async () => {
  for (const client of openClients.splice(0)) await client.close().catch(() => undefined);
  removeTemporaryFolders();
});

async function serve(hooks: readonly Record<string, unknown>[]): Promise<Client> {
  const folder = temporaryFolder();
  writeFixture(
    folder,
    'agents.config.json',
    JSON.stringify({
      builtin: false,
      sandbox: 'off',
      mcpServers: { everything: { command: 'node', args: [path.join(fixtures, 'counted-server.js')] } },
      hooks,
    }),
  );
  const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', AGENTS_STATE_DIR: temporaryFolder('ca-cli-state-') };
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', 'serve'], cwd: folder, env, stderr: 'pipe' });
  const client = new Client({ name: 'serve-guardrails-test', version: '1.0.0' });
  await client.connect(transport);
  openClients.push(client);
  return client;
}

const texts = (result: unknown): string[] =>
  (((result as { content?: unknown }).content as { type: string; text?: string }[] | undefined) ?? []).map((block) => block.text ?? `[${block.type}]`);

describe('agents mcp serve gives MCP clients what the guardrails and hooks made of an output', () => {
  it('a password inside a URL in an upstream output is redacted in the text the client receives', async () => {
    const client = await serve([]);
    const result = await client.callTool({ name: 'mcp.everything.echo', arguments: { message: 'use postgres://app:Pa55-w0rd-of-orders@db/orders' } });
    expect(result.isError).not.toBe(true);
    expect(JSON.stringify(result)).not.toContain('Pa55-w0rd-of-orders');
    expect(texts(result).join('\n')).toContain('Echo: use postgres://[REDACTED url-credentials]@db/orders');
  });

  it("an after-hook's replacement is the structured content and the text: the original text blocks do not reach the client", async () => {
    const replacement = { temperature: 0, conditions: 'withheld by policy', humidity: 0 };
    const client = await serve([
      {
        name: 'policy',
        on: 'after',
        tools: 'mcp.everything.get-structured-content',
        command: 'node',
        args: [
          path.join(fixtures, 'answer-hook.js'),
          JSON.stringify({ hookSpecificOutput: { hookEventName: 'PostToolUse', updatedMCPToolOutput: replacement } }),
        ],
      },
    ]);
    const result = await client.callTool({ name: 'mcp.everything.get-structured-content', arguments: { location: 'New York' } });
    expect(result.isError).not.toBe(true);
    expect(result.structuredContent).toEqual(replacement);
    const text = texts(result).join('\n');
    expect(text).toContain('withheld by policy');
    // server-everything's own text block said the weather (33 degrees, cloudy).
    expect(text).not.toMatch(/Cloudy|"temperature":\s*33/);
  });
});
