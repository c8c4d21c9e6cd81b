import { join } from 'node:path';
import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { createMcpAdapter } from './mcp-adapter';
import { McpServerError } from './mcp-server-error';
import { makeTempDir, readLines, removeTempDir, startFixtureHttp, waitFor, type FixtureHttpServer } from './mcp-fixtures.test-helper';

// The kill tests wait for the transport to give up reconnecting (about 3 s); the
// Jest timeout is a hang guard far below the 60 s call timeout they must not reach.
jest.setTimeout(40_000);

describe('a Streamable HTTP server that dies in the middle of a call', () => {
  let dir: string;
  let server: FixtureHttpServer | undefined;

  beforeEach(async () => {
    dir = await makeTempDir();
  });

  afterEach(async () => {
    await server?.kill();
    server = undefined;
    await removeTempDir(dir);
  });

  it.each([
    ['resumable streams', {}],
    ['streams it cannot resume', { FIXTURE_RESUMABLE: '0' }],
  ])('fails the call with MCP_SERVER_EXITED once the transport gives up reconnecting (%s), not at callTimeoutMs', async (_label, extra) => {
    const record = join(dir, 'record.txt');
    server = await startFixtureHttp({ FIXTURE_RECORD_FILE: record, ...extra });
    const logger = new RecordingLogger();
    const source = createMcpAdapter({ servers: { mcpServers: { web: { url: server.url, callTimeoutMs: 60_000 } } }, logger });
    const runtime = new ToolRuntime({ sources: [source], logger });
    try {
      const ctx = runtime.createPlan();
      const call = runtime.execute('mcp.web.hang', {}, ctx);
      await waitFor(async () => (await readLines(record)).includes('call hang'), 10_000, 'the call to reach the server');
      await server.kill();
      const result = await call;
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(McpServerError.isInstance(result.error)).toBe(true);
      expect(result.error).toMatchObject({ code: 'MCP_SERVER_EXITED', server: 'web', toolName: 'mcp.web.hang', planId: ctx.planId });
      expect(result.error.message).toMatch(/was lost: it stopped answering and 2 attempts to reconnect failed during a call of tool 'mcp\.web\.hang'/);
      // The plan's later calls fail at once, and the plan ends cleanly.
      const again = await runtime.execute('mcp.web.echo', { text: 'x' }, ctx);
      expect(again.ok === false && again.error.code).toBe('MCP_SERVER_EXITED');
      expect((await runtime.endPlan(ctx)).failures).toEqual([]);
      expect(logger.at('warn').some((entry) => /can no longer be reached/.test(entry.message))).toBe(true);
    } finally {
      await runtime.dispose();
    }
  });
});

describe('a Streamable HTTP server that refuses the credentials', () => {
  let server: FixtureHttpServer;

  beforeAll(async () => {
    server = await startFixtureHttp({ FIXTURE_AUTH: 'token', FIXTURE_TOKEN: 'right-token' });
  });

  afterAll(async () => {
    await server.kill();
  });

  it('reports a 401 as MCP_AUTH_FAILED with its status, naming the headers, not as a server that cannot be reached', async () => {
    const source = createMcpAdapter({
      servers: { mcpServers: { web: { url: server.url, headers: { Authorization: 'Bearer wrong-token' } } } },
      logger: new RecordingLogger(),
    });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    try {
      const { sourceErrors } = await runtime.discover();
      const error = sourceErrors[0]?.error as McpServerError;
      expect(McpServerError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'MCP_AUTH_FAILED', server: 'web', status: 401 });
      expect(error.message).toMatch(/refused the request: HTTP 401 \(not authenticated\)\. Check the credentials in "headers"/);
      expect(error.message).not.toMatch(/could not be reached/);
    } finally {
      await runtime.dispose();
    }
  });

  it('works with the right token', async () => {
    const source = createMcpAdapter({
      servers: { mcpServers: { web: { url: server.url, headers: { Authorization: 'Bearer right-token' } } } },
      logger: new RecordingLogger(),
    });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    try {
      const result = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.web.echo', { text: 'authorised' }, ctx));
      expect(result).toMatchObject({ ok: true, output: 'echo: authorised' });
    } finally {
      await runtime.dispose();
    }
  });
});
