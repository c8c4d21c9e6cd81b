// Answers of a server that are neither a result nor an isError result: a
// JSON-RPC error, and a "result" that is not a CallToolResult. Both are
// returned as failed results through the runtime, traced, and leave the
// plan's session serving the next call.
import { ToolRuntime, type ExecutionResult } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import type { PlanContext } from '@ca/tool-context';
import { createMcpAdapter } from './mcp-adapter';
import { McpToolError } from './mcp-tool-error';
import { countingSpawn, fixtureServer } from './mcp-fixtures.test-helper';

jest.setTimeout(60_000);

describe('MCP calls answered with an error or a malformed result (fixture server, through the runtime)', () => {
  let runtime: ToolRuntime;
  let spawns: ReturnType<typeof countingSpawn>;
  let logger: RecordingLogger;

  beforeEach(() => {
    spawns = countingSpawn();
    logger = new RecordingLogger();
    const source = createMcpAdapter({ servers: { mcpServers: { fixture: fixtureServer() } }, spawn: spawns.spawn, logger });
    runtime = new ToolRuntime({ sources: [source], logger });
  });

  afterEach(async () => {
    await runtime.dispose();
    for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(false);
  });

  function failureOf(result: ExecutionResult): McpToolError {
    if (result.ok) throw new Error(`expected a failed result, got ${JSON.stringify(result.output)}`);
    if (!McpToolError.isInstance(result.error)) throw new Error(`expected an McpToolError, got ${String(result.error)}`);
    return result.error;
  }

  async function expectSessionStillServes(ctx: PlanContext): Promise<void> {
    const spawned = spawns.count();
    expect(await runtime.execute('mcp.fixture.echo', { text: 'still here' }, ctx)).toMatchObject({ ok: true, output: 'echo: still here' });
    expect(spawns.count()).toBe(spawned);
  }

  it('returns MCP_REQUEST_FAILED with the JSON-RPC code and message for a JSON-RPC error', async () => {
    const ctx = runtime.createPlan();
    const result = await runtime.execute('mcp.fixture.rpc-error', {}, ctx);
    const error = failureOf(result);
    expect(error).toMatchObject({
      code: 'MCP_REQUEST_FAILED',
      rpcCode: -32042,
      server: 'fixture',
      toolName: 'mcp.fixture.rpc-error',
      mcpToolName: 'rpc-error',
      planId: ctx.planId,
    });
    expect(error.message).toContain(`Tool 'mcp.fixture.rpc-error' (MCP tool 'rpc-error' of server 'fixture') in plan '${ctx.planId}'`);
    expect(error.message).toContain('was refused by the server (JSON-RPC error -32042)');
    expect(error.message).toContain('quota exceeded for this key');
    expect(error.cause).toMatchObject({ code: -32042 });
    expect(result.trace).toBe(ctx.traces[ctx.traces.length - 1]);
    expect(result.trace).toMatchObject({ toolName: 'mcp.fixture.rpc-error', success: false, error: { code: 'MCP_REQUEST_FAILED' } });
    await expectSessionStillServes(ctx);
    expect((await runtime.endPlan(ctx)).failures).toEqual([]);
  });

  it('returns MCP_INVALID_RESULT, naming what is wrong, for a result that is not a CallToolResult', async () => {
    const ctx = runtime.createPlan();
    const result = await runtime.execute('mcp.fixture.malformed-result', {}, ctx);
    const error = failureOf(result);
    expect(error).toMatchObject({
      code: 'MCP_INVALID_RESULT',
      server: 'fixture',
      toolName: 'mcp.fixture.malformed-result',
      mcpToolName: 'malformed-result',
      planId: ctx.planId,
    });
    expect(error.rpcCode).toBeUndefined();
    expect(error.message).toContain(`Tool 'mcp.fixture.malformed-result' (MCP tool 'malformed-result' of server 'fixture') in plan '${ctx.planId}'`);
    expect(error.message).toContain('returned something that is not a valid CallToolResult');
    expect(error.message).toContain('content: Invalid input: expected array, received string');
    expect(error.message).toMatch(/Fix the server\.$/);
    expect(error.cause).toMatchObject({ issues: [expect.objectContaining({ path: ['content'] })] });
    expect(result.trace).toMatchObject({ toolName: 'mcp.fixture.malformed-result', success: false, error: { code: 'MCP_INVALID_RESULT' } });
    await expectSessionStillServes(ctx);
    expect((await runtime.endPlan(ctx)).failures).toEqual([]);
  });
});
