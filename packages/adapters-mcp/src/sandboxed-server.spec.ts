import { readdirSync } from 'node:fs';
import { readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { processesWithArgument, sandboxAvailableForTests } from '@ca/sandbox/testing';
import { createMcpAdapter } from './mcp-adapter';
import { parseMcpConfig } from './mcp-config';
import { FILESYSTEM_SERVER, makeTempDir, removeTempDir } from './mcp-fixtures.test-helper';
import { ProcessStdioTransport } from './process-stdio-transport';

// Servers start slowly on a loaded machine; a hang guard, not a speed requirement.
jest.setTimeout(60_000);

const describeSandboxed = sandboxAvailableForTests('stdio MCP servers in the kernel sandbox (bubblewrap)') ? describe : describe.skip;

describe('the sandbox key of a stdio server', () => {
  const parse = (sandbox: unknown) => parseMcpConfig({ mcpServers: { files: { command: 'node', sandbox } } }).servers[0];

  it('is opt-in: absent, a server has no sandbox; a mode or the settings in full turn it on', () => {
    expect(parseMcpConfig({ mcpServers: { files: { command: 'node' } } }).servers[0]).not.toHaveProperty('sandbox');
    expect(parse('required')?.sandbox).toEqual({ mode: 'required', network: true, writable: [], readable: [] });
    expect(parse({ mode: 'auto', network: false, writable: ['/srv/cache'], readable: ['/tmp/data'], bwrapPath: '/usr/bin/bwrap' })?.sandbox).toEqual({
      mode: 'auto',
      network: false,
      writable: ['/srv/cache'],
      readable: ['/tmp/data'],
      bwrapPath: '/usr/bin/bwrap',
    });
  });

  it.each([
    ['on', 'sandbox', /expected "required", "auto", "off"/],
    [true, 'sandbox', /expected "required", "auto", "off"/],
    [{ mode: 'auto', writable: ['cache'] }, 'sandbox.writable', /expected absolute paths/],
    [{ mode: 'auto', network: 'no' }, 'sandbox.network', /must be true or false/],
    [{ mode: 'auto', writeable: [] }, 'sandbox.writeable', /unknown key/],
    [{ network: false }, 'sandbox.mode', /must be 'required', 'auto' or 'off'/],
  ])('refuses %j, naming the server and %s', (sandbox, key, message) => {
    let error: unknown;
    try {
      parse(sandbox);
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'MCP_CONFIG_INVALID', server: 'files', key });
    expect((error as Error).message).toMatch(message);
  });

  it('is not a key of a Streamable HTTP server', () => {
    expect(() => parseMcpConfig({ mcpServers: { remote: { url: 'http://127.0.0.1:1/mcp', sandbox: 'required' } } })).toThrow(
      /unknown key for a Streamable HTTP server/,
    );
  });

  it('required without a working bwrap: the server does not start, and the error names the install command', async () => {
    const source = createMcpAdapter({
      servers: {
        mcpServers: {
          files: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], sandbox: { mode: 'required', bwrapPath: '/nonexistent/ca-bwrap' } },
        },
      },
      logger: new RecordingLogger(),
    });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    const { sourceErrors } = await runtime.discover();
    expect(sourceErrors).toHaveLength(1);
    expect(sourceErrors[0]?.error).toMatchObject({ code: 'MCP_SERVER_START_FAILED' });
    expect(sourceErrors[0]?.error.message).toMatch(
      /the sandbox is required \(mcpServers\.files\.sandbox\) but does not work on this machine: .*apt-get install bubblewrap/,
    );
    await runtime.dispose();
  });
});

describeSandboxed('a stdio server in the kernel sandbox (real bwrap)', () => {
  let writable: string;
  let readOnly: string;

  beforeEach(async () => {
    writable = await realpath(await makeTempDir('ca-mcp-sandbox-rw-'));
    readOnly = await realpath(await makeTempDir('ca-mcp-sandbox-ro-'));
    await writeFile(join(readOnly, 'notes.txt'), 'read me\n');
  });

  afterEach(async () => {
    await removeTempDir(writable);
    await removeTempDir(readOnly);
  });

  it('lets @modelcontextprotocol/server-filesystem write only where the configuration says, whatever the server itself allows', async () => {
    const source = createMcpAdapter({
      servers: {
        mcpServers: {
          files: {
            command: process.execPath,
            args: [FILESYSTEM_SERVER, writable, readOnly],
            sandbox: { mode: 'required', writable: [writable], readable: [readOnly], network: false },
          },
        },
      },
      logger: new RecordingLogger(),
    });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    try {
      await runtime.runPlan({}, async (ctx) => {
        expect(await runtime.execute('mcp.files.read_text_file', { path: join(readOnly, 'notes.txt') }, ctx)).toMatchObject({
          ok: true,
          output: { content: 'read me\n' },
        });
        expect(await runtime.execute('mcp.files.write_file', { path: join(writable, 'new.txt'), content: 'hello' }, ctx)).toMatchObject({ ok: true });
        const refused = await runtime.execute('mcp.files.write_file', { path: join(readOnly, 'new.txt'), content: 'x' }, ctx);
        expect(refused.ok).toBe(false);
        expect(refused.ok === false && refused.error.message).toMatch(/EROFS|read-only file system/i);
      });
    } finally {
      await runtime.dispose();
    }
    expect(await readFile(join(writable, 'new.txt'), 'utf8')).toBe('hello');
    expect(readdirSync(readOnly)).toEqual(['notes.txt']);
  });

  it('ends a setsid daemon the server started when the session closes', async () => {
    const sleep = `55.${process.pid}${Math.floor(Math.random() * 1e6)}`;
    const stderr: string[] = [];
    const transport = new ProcessStdioTransport({
      command: 'sh',
      args: ['-c', `setsid sleep ${sleep} < /dev/null > /dev/null 2>&1 & echo started >&2; cat > /dev/null`],
      env: {},
      shutdownGraceMs: 300,
      onStderr: (text) => stderr.push(text),
      sandbox: { mode: 'required', network: false, writable: [], readable: [] },
      serverName: 'daemon',
    });
    await transport.start();
    const deadline = Date.now() + 10_000;
    while (processesWithArgument(sleep).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const running = processesWithArgument(sleep);
    expect(running).toHaveLength(1);
    await transport.close();
    const left = processesWithArgument(sleep);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(left).toEqual([]);
    expect(stderr.join('')).toBe('started\n');
  });

  it("takes a server's network away with network: false", async () => {
    const transport = new ProcessStdioTransport({
      command: process.execPath,
      args: ['-e', "process.stderr.write(Object.keys(require('os').networkInterfaces()).join(',') + '\\n'); process.stdin.resume();"],
      env: {},
      shutdownGraceMs: 300,
      onStderr: () => undefined,
      sandbox: { mode: 'required', network: false, writable: [], readable: [] },
    });
    await transport.start();
    const deadline = Date.now() + 10_000;
    while (transport.stderrTail() === '' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(transport.stderrTail()).toBe('lo');
    await transport.close();
  });
});
