import { TestTool } from '@ca/tool-lifecycle/testing';
import { CallToolResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { McpGatewayError } from '../errors/mcp-gateway-error';
import { connectClient, eventually, gatewayOver } from './gateway.test-helper';
import { McpGateway } from './mcp-gateway';

const reader = { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false };
const writer = { writes: true, checkpointable: true, idempotent: false, destructive: true, openWorld: false };

const sumTool = () =>
  new TestTool({
    name: 'math.sum',
    description: 'Adds two numbers.',
    capability: reader,
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false },
    outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
    execute: (input: { a: number; b: number }) => ({ sum: input.a + input.b }),
  });

function noteWriter() {
  return new TestTool({
    name: 'notes.write',
    description: 'Writes a note.',
    capability: writer,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    execute: (input: { text: string }) => `wrote ${input.text}`,
  });
}

describe('McpGateway: tools', () => {
  it('lists the tools a plan may run as MCP tools, and a call returns their output as content and structuredContent', async () => {
    const { gateway } = gatewayOver([sumTool(), noteWriter()]);
    const { client } = await connectClient(gateway);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['math.sum', 'notes.write']);
    const listed = tools.find((tool) => tool.name === 'math.sum');
    expect(listed).toMatchObject({
      description: 'Adds two numbers.',
      inputSchema: { type: 'object', required: ['a', 'b'] },
      outputSchema: { type: 'object', properties: { sum: { type: 'number' } } },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    });
    expect(tools.find((tool) => tool.name === 'notes.write')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    const result = await client.callTool({ name: 'math.sum', arguments: { a: 2, b: 3 } });
    expect(result).toMatchObject({ structuredContent: { sum: 5 }, content: [{ type: 'text', text: '{"sum":5}' }] });
    expect(result.isError).toBeUndefined();
    await gateway.close();
  });

  it('answers arguments a client gets wrong with an error result that says what to change, and an unknown tool with MCP -32602', async () => {
    const sum = sumTool();
    const { gateway } = gatewayOver([sum]);
    const { client } = await connectClient(gateway);
    const invalid = await client.callTool({ name: 'math.sum', arguments: { a: 'two' } });
    expect(invalid.isError).toBe(true);
    expect((invalid.content as { text: string }[])[0]?.text).toMatch(
      /^Error TOOL_SCHEMA_VALIDATION_FAILED: the arguments of 'math.sum' do not match its input schema/,
    );
    await expect(client.callTool({ name: 'math.summ', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/Unknown tool: 'math.summ' \(close names: 'math.sum'\)/),
      data: { code: 'MODEL_TOOL_UNKNOWN', tool: 'math.summ', suggestions: ['math.sum'] },
    });
    expect(sum.count('execute')).toBe(0);
    await gateway.close();
  });

  it("a read-only profile does not list a writer, and a call of it gets the plan's refusal before anything of it runs", async () => {
    const write = noteWriter();
    const { gateway } = gatewayOver([sumTool(), write], { profile: { policy: { readOnly: true, requireCheckpoint: false } } });
    const { client } = await connectClient(gateway);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['math.sum']);
    const refused = await client.callTool({ name: 'notes.write', arguments: { text: 'x' } });
    expect(refused.isError).toBe(true);
    expect((refused.content as { text: string }[])[0]?.text).toMatch(/^Error TOOL_ACCESS_DENIED: 'notes.write' changes things and this plan is read-only/);
    expect(write.count('execute')).toBe(0);
    await gateway.close();
  });

  it("a profile's tool globs decide what a session sees and may call", async () => {
    const { gateway } = gatewayOver([sumTool(), noteWriter()], { profile: { tools: ['math.*'] } });
    const { client } = await connectClient(gateway);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['math.sum']);
    await expect(client.callTool({ name: 'notes.write', arguments: { text: 'x' } })).rejects.toMatchObject({ code: -32602 });
    await gateway.close();
  });

  it('passes progress on to the client that asked for it', async () => {
    const steps = new TestTool({
      name: 'slow.steps',
      capability: reader,
      execute: (_input, _ctx, options) => {
        for (let step = 1; step <= 3; step++) options?.onProgress?.({ progress: step, total: 3, message: `step ${step}` });
        return 'done';
      },
    });
    const { gateway } = gatewayOver([steps]);
    const { client } = await connectClient(gateway);
    const seen: unknown[] = [];
    const result = await client.callTool({ name: 'slow.steps', arguments: {} }, CallToolResultSchema, { onprogress: (progress) => seen.push(progress) });
    expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
    await eventually(() => seen.length === 3, 'three progress notifications');
    expect(seen).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
    await gateway.close();
  });

  it("a client's cancellation stops that call only: the tool's signal fires, the session's other calls and plan go on", async () => {
    let stopped: string | undefined;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const waits = new TestTool({
      name: 'slow.wait',
      capability: reader,
      execute: (_input, ctx) =>
        new Promise((resolve) => {
          started();
          ctx.cancellationToken.onCancel((reason) => {
            stopped = reason;
            resolve('stopped');
          });
        }),
    });
    const { gateway } = gatewayOver([waits, sumTool()]);
    const { client, session } = await connectClient(gateway);
    const controller = new AbortController();
    const call = client.callTool({ name: 'slow.wait', arguments: {} }, CallToolResultSchema, { signal: controller.signal });
    await running;
    controller.abort('the person pressed stop');
    await expect(call).rejects.toThrow();
    await eventually(() => stopped !== undefined, 'the tool to see the cancellation');
    expect((await client.callTool({ name: 'math.sum', arguments: { a: 1, b: 1 } })).structuredContent).toEqual({ sum: 2 });
    expect(session.planId).toMatch(/^mcp-/);
    await gateway.close();
  });

  it('tells the client when the tools it lists change, and lists the new ones', async () => {
    const { gateway, source } = gatewayOver([sumTool()]);
    const { client } = await connectClient(gateway);
    await client.listTools();
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
    });
    source.add(noteWriter());
    await eventually(() => changes === 1, 'notifications/tools/list_changed');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['math.sum', 'notes.write']);
    await gateway.close();
  });

  it('answers a tool whose output does not match its output schema with an error, since the client would refuse it', async () => {
    const liar = new TestTool({
      name: 'math.liar',
      capability: reader,
      outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
      execute: () => ({ sum: 'many' }),
    });
    const patterned = new TestTool({
      name: 'text.code',
      capability: reader,
      outputSchema: { type: 'object', properties: { code: { type: 'string', pattern: '^(a+)+$' } } },
      execute: () => ({ code: `${'a'.repeat(40)}!` }),
    });
    const { gateway } = gatewayOver([liar, patterned]);
    const { client } = await connectClient(gateway);
    const { tools } = await client.listTools();
    // A pattern from elsewhere could make the client's own validator hang: the schema is not passed on.
    expect(tools.find((tool) => tool.name === 'text.code')?.outputSchema).toBeUndefined();
    const result = await client.callTool({ name: 'math.liar', arguments: {} });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]?.text).toMatch(/GATEWAY_OUTPUT_UNFIT.*does not match the tool's output schema/s);
    expect(await client.callTool({ name: 'text.code', arguments: {} })).toMatchObject({ structuredContent: { code: `${'a'.repeat(40)}!` } });
    await gateway.close();
  });

  it('limits the calls of a session running at once, answering the one over the limit with an error', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = new TestTool({ name: 'slow.held', capability: reader, execute: async () => (await gate, 'released') });
    const { gateway } = gatewayOver([held], { maxConcurrentCalls: 1 });
    const { client } = await connectClient(gateway);
    const first = client.callTool({ name: 'slow.held', arguments: {} });
    await eventually(() => held.count('execute') === 1, 'the first call to start');
    const second = await client.callTool({ name: 'slow.held', arguments: {} });
    expect(second.isError).toBe(true);
    expect((second.content as { text: string }[])[0]?.text).toMatch(/GATEWAY_CALL_LIMIT.*already runs 1 call\(s\) at once/s);
    release();
    expect((await first).content).toEqual([{ type: 'text', text: 'released' }]);
    await gateway.close();
  });

  it('refuses options it cannot use, with the field and what it expects', () => {
    expect(() => new McpGateway({} as never)).toThrow(McpGatewayError);
    const { runtime } = gatewayOver([sumTool()]);
    expect(() => new McpGateway(runtime, { maxConcurrentCalls: 0 })).toThrow(/maxConcurrentCalls is not valid: expected a whole number ≥ 1, got number 0/);
    expect(() => new McpGateway(runtime, { profile: { mode: 'everything' as never } })).toThrow(/profile.mode is not valid/);
    expect(() => new McpGateway(runtime, { profile: { tools: [''] } })).toThrow(/profile.tools is not valid/);
  });
});
