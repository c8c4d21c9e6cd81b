import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourceFromPath, type BoundResource } from '@ca/tool-context';
import { ToolRuntime, silentLogger, type ToolDescriptor } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { ModelTools } from '../calls/model-tools';
import { toMcpTool } from './mcp';

/** A descriptor with the given capability, as a source would list it; `sandboxed` for a tool whose programs run in the kernel sandbox. */
function descriptorOf(capability: ToolDescriptor['capability'], sandboxed?: ToolDescriptor['sandboxed']): ToolDescriptor {
  return { name: 'tool', description: 'a tool', source: 'builtin', capability, ...(sandboxed === undefined ? {} : { sandboxed }) };
}

const plainReader = { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false };
const writer = { writes: true, checkpointable: true, idempotent: false, destructive: true, openWorld: false };

describe('MCP definitions: readOnlyHint only where the tool cannot write in the plan', () => {
  let folder: string;
  let writable: BoundResource;
  let readable: BoundResource;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'model-tools-mcp-'));
    writable = resourceFromPath({ id: 'work', path: folder, access: 'write' });
    readable = resourceFromPath({ id: 'docs', path: folder, access: 'read' });
  });
  afterAll(() => rm(folder, { recursive: true, force: true }));

  const hints = (descriptor: ToolDescriptor, plan?: { policy: { readOnly: boolean; requireCheckpoint: boolean }; resources?: BoundResource[] }) => {
    const { readOnlyHint, destructiveHint } = toMcpTool({
      descriptor,
      providerName: 'tool',
      description: '',
      inputSchema: { type: 'object' },
      strict: false,
      ...(plan === undefined ? {} : { plan }),
    }).annotations;
    return { readOnlyHint, destructiveHint };
  };
  const readWrite = { readOnly: false, requireCheckpoint: false };
  const readOnly = { readOnly: true, requireCheckpoint: false };

  it('a tool that declares no write is read-only; one that writes is not', () => {
    expect(hints(descriptorOf(plainReader), { policy: readWrite, resources: [writable] })).toEqual({ readOnlyHint: true, destructiveHint: false });
    expect(hints(descriptorOf(writer), { policy: readWrite, resources: [writable] })).toEqual({ readOnlyHint: false, destructiveHint: true });
  });

  it('a sandboxed command writes where the plan binds a writable resource and is not read-only, and nowhere else', () => {
    const sandboxed = descriptorOf(writer, { overlay: true });
    expect(hints(sandboxed, { policy: readWrite, resources: [writable] })).toEqual({ readOnlyHint: false, destructiveHint: true });
    expect(hints(sandboxed, { policy: readOnly, resources: [writable] })).toEqual({ readOnlyHint: true, destructiveHint: false });
    expect(hints(sandboxed, { policy: readWrite, resources: [readable] })).toEqual({ readOnlyHint: true, destructiveHint: false });
    // Without a plan to judge by, its capability as declared.
    expect(hints(sandboxed)).toEqual({ readOnlyHint: false, destructiveHint: true });
  });

  it('definitions pass the plan, and include leaves out what a profile does not offer', async () => {
    const command = new TestTool({ name: 'run.command', capability: writer });
    const sandboxed = Object.assign(Object.create(command), {
      descriptor: Object.freeze({ ...command.descriptor, sandboxed: Object.freeze({ overlay: true }) }),
    });
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([sandboxed, new TestTool({ name: 'other' })])], logger: silentLogger });
    const modelTools = new ModelTools(runtime);
    await runtime.runPlan({ resources: [writable] }, async (ctx) => {
      const definitions = await modelTools.definitions('mcp', ctx, { include: (name) => name !== 'other' });
      expect(definitions.map((tool) => [tool.name, tool.annotations.readOnlyHint])).toEqual([['run.command', false]]);
    });
    await runtime.runPlan({ policy: { readOnly: true, requireCheckpoint: false }, resources: [writable] }, async (ctx) => {
      expect((await modelTools.definitions('mcp', ctx)).map((tool) => [tool.name, tool.annotations.readOnlyHint])).toEqual([
        ['other', true],
        ['run.command', true],
      ]);
    });
    await expect(runtime.runPlan({}, (ctx) => modelTools.definitions('mcp', ctx, { include: 'all' as never }))).rejects.toMatchObject({
      code: 'MODEL_TOOLS_INVALID_ARGUMENT',
      field: 'include',
    });
  });
});

describe('MCP results: the content blocks MCP has and other APIs lack pass as they are', () => {
  const audio = { type: 'audio', data: Buffer.from('RIFF....WAVE').toString('base64'), mimeType: 'audio/wav' };
  const embedded = { type: 'resource', resource: { uri: 'test://doc', mimeType: 'text/plain', text: 'the document' } };
  const binary = { type: 'resource', resource: { uri: 'test://blob', mimeType: 'application/octet-stream', blob: Buffer.from([1, 2, 3]).toString('base64') } };
  const link = { type: 'resource_link', uri: 'test://linked', name: 'linked', mimeType: 'text/plain' };
  const image = { type: 'image', data: Buffer.from('PNG').toString('base64'), mimeType: 'image/png' };

  async function callWith(content: readonly { type: string; [field: string]: unknown }[], options: ConstructorParameters<typeof ModelTools>[1] = {}) {
    const tool = new TestTool({ name: 'mixed', execute: () => ({ ok: true, output: 'see content', content }) });
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger: silentLogger });
    const modelTools = new ModelTools(runtime, options);
    return runtime.runPlan({}, async (ctx) => ({
      mcp: (await modelTools.call('mcp', { name: 'mixed', arguments: {} }, ctx)).message,
      anthropic: (await modelTools.call('anthropic', { type: 'tool_use', id: 'toolu_1', name: 'mixed', input: {} }, ctx)).message,
    }));
  }

  it('keeps text, image, audio, embedded resources and resource links in order for MCP; other formats read them as text', async () => {
    const { mcp, anthropic } = await callWith([{ type: 'text', text: 'first' }, image, audio, embedded, binary, link]);
    expect(mcp.content).toEqual([{ type: 'text', text: 'first' }, image, audio, embedded, binary, link]);
    expect(JSON.stringify(anthropic)).toContain('[audio (audio/wav) left out]');
    expect(JSON.stringify(anthropic)).toContain('[resource link test://linked (linked)]');
  });

  it('leaves out audio and binary resources above the budget, saying so, and cuts a long embedded text (the block then goes)', async () => {
    const big = 'x'.repeat(4_000);
    const { mcp } = await callWith(
      [
        { ...audio, data: Buffer.alloc(3_000).toString('base64') },
        { type: 'resource', resource: { uri: 'test://big', blob: Buffer.alloc(3_000).toString('base64') } },
        { type: 'resource', resource: { uri: 'test://long', text: big } },
      ],
      { maxImageBytes: 1_000, maxResultCharacters: 1_000 },
    );
    expect(mcp.content[0]).toEqual({ type: 'text', text: '[audio (audio/wav, 3000 bytes) left out]' });
    expect(mcp.content[1]).toEqual({ type: 'text', text: '[resource test://big (3000 bytes) was left out: larger than 1000 bytes]' });
    expect(mcp.content[2]).toMatchObject({ type: 'text' });
    expect((mcp.content[2] as { text: string }).text).toMatch(/truncated/);
  });
});

describe('ModelTools.call options reach runtime.execute', () => {
  it('passes progress and a signal that cancels this call only', async () => {
    const tool = new TestTool({
      name: 'slow',
      execute: (_input, ctx, options) =>
        new Promise((resolve) => {
          options?.onProgress?.({ progress: 1, total: 2, message: 'half' });
          ctx.cancellationToken.onCancel((reason) => resolve({ stopped: reason }));
        }),
    });
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool, new TestTool({ name: 'echo' })])], logger: silentLogger });
    const modelTools = new ModelTools(runtime);
    await runtime.runPlan({}, async (ctx) => {
      const controller = new AbortController();
      const progress: unknown[] = [];
      const running = modelTools.call('mcp', { name: 'slow', arguments: {} }, ctx, {
        signal: controller.signal,
        onProgress: (update) => {
          progress.push(update);
          controller.abort('the client cancelled');
        },
      });
      const { message, outcome } = await running;
      expect(progress).toEqual([{ progress: 1, total: 2, message: 'half' }]);
      expect(message.isError).toBe(true);
      expect(outcome.error).toMatchObject({ code: 'TOOL_CANCELLED', reason: 'the client cancelled' });
      expect(ctx.cancellationToken.isCancelled).toBe(false);
      expect((await modelTools.call('mcp', { name: 'echo', arguments: { a: 1 } }, ctx)).message).toMatchObject({ structuredContent: { a: 1 } });
    });
  });
});
