import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { createMcpAdapter } from './mcp-adapter';
import { countingSpawn, makeTempDir, readLines, removeTempDir } from './mcp-fixtures.test-helper';

jest.setTimeout(60_000);

// A server that records the end of its input and SIGTERM, in the order they
// come; it exits on SIGTERM, and on the end of its input only when told to.
const serverSource = (record: string, exitOnEnd: boolean) => `
const fs = require('node:fs');
const { Server } = require(${JSON.stringify(require.resolve('@modelcontextprotocol/sdk/server/index.js'))});
const { StdioServerTransport } = require(${JSON.stringify(require.resolve('@modelcontextprotocol/sdk/server/stdio.js'))});
const { ListToolsRequestSchema } = require(${JSON.stringify(require.resolve('@modelcontextprotocol/sdk/types.js'))});
const note = (line) => fs.appendFileSync(${JSON.stringify(record)}, line + '\\n');
process.on('SIGTERM', () => { note('SIGTERM'); process.exit(0); });
process.stdin.on('end', () => { note('stdin-end'); if (${exitOnEnd}) process.exit(0); });
setInterval(() => undefined, 1000);
const server = new Server({ name: 'shutdown-probe', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'noop', inputSchema: { type: 'object' } }] }));
server.connect(new StdioServerTransport());
`;

describe("shutdown: 'prompt' stops stdio servers without waiting for them to exit on their own", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir('ca-mcp-shutdown-');
  });
  afterEach(() => removeTempDir(dir));

  async function discoverAndDispose(shutdown: 'graceful' | 'prompt' | undefined, exitOnEnd: boolean): Promise<string[]> {
    const record = join(dir, `${shutdown ?? 'default'}.txt`);
    const script = join(dir, `${shutdown ?? 'default'}-server.js`);
    await writeFile(script, serverSource(record, exitOnEnd));
    const spawns = countingSpawn();
    const source = createMcpAdapter({
      // A grace far beyond the test's timeout: only a SIGTERM sent at once ends a
      // server that ignores the end of its input before the test gives up.
      servers: { mcpServers: { probe: { command: process.execPath, args: [script], shutdownGraceMs: 600_000 } } },
      spawn: spawns.spawn,
      logger: new RecordingLogger(),
      ...(shutdown === undefined ? {} : { shutdown }),
    });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    expect((await runtime.discover()).tools.map((tool) => tool.name)).toEqual(['mcp.probe.noop']);
    await runtime.dispose();
    expect(spawns.count()).toBe(1);
    expect(isProcessAlive(spawns.pids[0] as number)).toBe(false);
    return readLines(record);
  }

  it("'prompt' sends SIGTERM with the end of the input, to a server that would not exit on its own", async () => {
    const seen = await discoverAndDispose('prompt', false);
    expect(seen).toContain('SIGTERM');
  });

  it("'graceful' (the default) lets a server that exits at the end of its input do so, with no signal", async () => {
    expect(await discoverAndDispose(undefined, true)).toEqual(['stdin-end']);
    expect(await discoverAndDispose('graceful', true)).toEqual(['stdin-end']);
  });

  it('refuses an unknown value', () => {
    expect(() => createMcpAdapter({ servers: { mcpServers: {} }, shutdown: 'fast' as never })).toThrow(/shutdown must be 'graceful' or 'prompt'/);
  });
});
