import type { ToolInstance } from '@ca/tool-lifecycle';
import { TestTool } from '@ca/tool-lifecycle/testing';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, gatewayOver } from '../gateway/gateway.test-helper';

const reader = { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: true };

/** A tool standing for an upstream server's request, annotated as `@ca/adapters-mcp` annotates its operation tools. */
function operation(server: string, method: string, execute: (input: Record<string, unknown>) => unknown): ToolInstance {
  const tool = new TestTool({
    name: `mcp.${server}.${method.replace('/', '.')}`,
    capability: reader,
    execute: (input: Record<string, unknown>) => execute(input),
  });
  return Object.assign(Object.create(tool) as ToolInstance, {
    descriptor: Object.freeze({ ...tool.descriptor, source: 'mcp', annotations: { mcpServer: server, mcpOperation: method } }),
  });
}

function twoServers(reads: string[]): ToolInstance[] {
  const docs = { uri: 'docs://guide', name: 'guide', mimeType: 'text/plain' };
  return [
    operation('docs', 'resources/list', () => ({ resources: [docs], resourceTemplates: [{ uriTemplate: 'docs://pages/{page}', name: 'page' }] })),
    operation('docs', 'resources/read', (input) => {
      reads.push(`docs ${String(input['uri'])}`);
      return { contents: [{ uri: input['uri'], mimeType: 'text/plain', text: `docs has ${String(input['uri'])}` }] };
    }),
    operation('docs', 'prompts/list', () => ({ prompts: [{ name: 'summarise', arguments: [{ name: 'topic', required: true }] }] })),
    operation('docs', 'prompts/get', (input) => ({
      description: 'Summarise',
      messages: [{ role: 'user', content: { type: 'text', text: `Summarise ${(input['arguments'] as Record<string, string>)['topic']}` } }],
    })),
    operation('files', 'resources/list', () => ({ resources: [{ uri: 'file:///notes.md', name: 'notes' }], resourceTemplates: [] })),
    operation('files', 'resources/read', (input) => {
      reads.push(`files ${String(input['uri'])}`);
      return { contents: [{ uri: input['uri'], text: 'notes' }] };
    }),
    operation('files', 'prompts/list', () => ({ prompts: [{ name: 'summarise' }] })),
    new TestTool({ name: 'notes.read', capability: reader }),
  ];
}

describe('McpGateway: upstream resources and prompts pass through', () => {
  it("lists every server's resources and sends each read to the server that offers it, by listing or template", async () => {
    const reads: string[] = [];
    const { gateway } = gatewayOver(twoServers(reads));
    const { client } = await connectClient(gateway);
    expect(client.getServerCapabilities()).toMatchObject({ resources: { listChanged: true }, prompts: { listChanged: true } });
    // The operation tools are not tools here: they are resources and prompts.
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['notes.read']);
    expect((await client.listResources()).resources.map((resource) => resource.uri)).toEqual(['docs://guide', 'file:///notes.md']);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([{ uriTemplate: 'docs://pages/{page}', name: 'page' }]);
    expect((await client.readResource({ uri: 'file:///notes.md' })).contents).toEqual([{ uri: 'file:///notes.md', text: 'notes' }]);
    expect((await client.readResource({ uri: 'docs://pages/intro' })).contents[0]).toMatchObject({ text: 'docs has docs://pages/intro' });
    expect(reads).toEqual(['files file:///notes.md', 'docs docs://pages/intro']);
    await expect(client.readResource({ uri: 'nowhere://x' })).rejects.toMatchObject({
      code: -32002,
      message: expect.stringMatching(/No upstream MCP server offers the resource 'nowhere:\/\/x'/),
    });
    await gateway.close();
  });

  it("names prompts <server>.<prompt>, so two servers' prompts never meet, and gets one from its server", async () => {
    const { gateway } = gatewayOver(twoServers([]));
    const { client } = await connectClient(gateway);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(['docs.summarise', 'files.summarise']);
    expect(prompts[0]).toMatchObject({ title: 'summarise', arguments: [{ name: 'topic', required: true }] });
    const got = await client.getPrompt({ name: 'docs.summarise', arguments: { topic: 'MCP' } });
    expect(got.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Summarise MCP' } }]);
    const unknown = client.getPrompt({ name: 'summarise' });
    await expect(unknown).rejects.toBeInstanceOf(McpError);
    await expect(unknown).rejects.toThrow(/No upstream MCP server offers a prompt named 'summarise'.*docs.summarise, files.summarise/);
    await gateway.close();
  });

  it("refuses a request the plan's policy refuses, with the runtime's reason", async () => {
    const { gateway } = gatewayOver(twoServers([]), { profile: { policy: { readOnly: false, requireCheckpoint: false, network: 'deny' } } });
    const { client } = await connectClient(gateway);
    await expect(client.listResources()).rejects.toThrow(/TOOL_ACCESS_DENIED.*denies the network/);
    await gateway.close();
  });

  it('declares completions and forwards each to the server of the prompt or template, with the names the server knows', async () => {
    const asked: unknown[] = [];
    const tools = [
      ...twoServers([]),
      operation('docs', 'completion/complete', (input) => {
        asked.push(input);
        return { completion: { values: ['MCP', 'MCP servers', 42], total: 2, hasMore: false } };
      }),
    ];
    const { gateway } = gatewayOver(tools);
    const { client } = await connectClient(gateway);
    expect(client.getServerCapabilities()?.completions).toEqual({});
    const prompt = await client.complete({ ref: { type: 'ref/prompt', name: 'docs.summarise' }, argument: { name: 'topic', value: 'MC' } });
    expect(prompt.completion).toEqual({ values: ['MCP', 'MCP servers'], total: 2, hasMore: false });
    await client.listResourceTemplates();
    await client.complete({
      ref: { type: 'ref/resource', uri: 'docs://pages/{page}' },
      argument: { name: 'page', value: 'in' },
      context: { arguments: { lang: 'en' } },
    });
    expect(asked).toEqual([
      { ref: { type: 'ref/prompt', name: 'summarise' }, argument: { name: 'topic', value: 'MC' } },
      { ref: { type: 'ref/resource', uri: 'docs://pages/{page}' }, argument: { name: 'page', value: 'in' }, context: { arguments: { lang: 'en' } } },
    ]);
    // A server that offers no completions has no suggestions; an unknown prompt is a protocol error.
    expect((await client.complete({ ref: { type: 'ref/prompt', name: 'files.summarise' }, argument: { name: 'x', value: '' } })).completion).toEqual({
      values: [],
      hasMore: false,
    });
    await expect(client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'x', value: '' } })).rejects.toMatchObject({
      code: -32602,
    });
    expect(asked).toHaveLength(2);
    await gateway.close();
  });

  it('answers a failed read with the upstream error code and words for an MCP client, not advice for a model', async () => {
    // As @ca/adapters-mcp fails an operation the server answered with a JSON-RPC error: a failed result, the server's error as its cause.
    const failing = operation('docs', 'resources/read', () => ({
      ok: false,
      error: Object.assign(new Error("Tool 'mcp.docs.resources.read' (MCP method 'resources/read' of server 'docs') failed."), {
        code: 'MCP_REQUEST_FAILED',
        rpcCode: -32002,
        cause: new Error('MCP error -32002: Resource docs://gone not found'),
      }),
    }));
    const tools = twoServers([]).filter((tool) => tool.descriptor.name !== 'mcp.docs.resources.read');
    const { gateway } = gatewayOver([...tools, failing]);
    const { client } = await connectClient(gateway);
    const read = client.readResource({ uri: 'docs://guide' });
    await expect(read).rejects.toBeInstanceOf(McpError);
    const error = (await read.catch((caught: unknown) => caught)) as McpError;
    expect(error.code).toBe(-32002);
    expect(error.message).toMatch(/resources\/read failed upstream.*Resource docs:\/\/gone not found/);
    expect(error.message).not.toMatch(/repeat|Check the arguments|Error MCP_/);
    await gateway.close();
  });

  it('declares no resources or prompts when no upstream server offers them', async () => {
    const { gateway } = gatewayOver([new TestTool({ name: 'notes.read', capability: reader })]);
    const { client } = await connectClient(gateway);
    expect(client.getServerCapabilities()?.resources).toBeUndefined();
    expect(client.getServerCapabilities()?.prompts).toBeUndefined();
    expect(client.getServerCapabilities()?.completions).toBeUndefined();
    await gateway.close();
  });
});
