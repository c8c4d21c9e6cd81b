import { createCancelMessage } from '@ca/tool-lifecycle';
import { InMemoryPlanRegistry, TestTool } from '@ca/tool-lifecycle/testing';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, eventually, gatewayOver } from './gateway.test-helper';

const reader = { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false };
const writer = { writes: true, checkpointable: true, idempotent: false, destructive: true, openWorld: false };

describe('McpGateway: one plan per client session', () => {
  it('gives each session its own plan, announced in the registry, and ends it once when the client leaves', async () => {
    const tool = new TestTool({ name: 'notes.read', capability: reader, execute: (_input, ctx) => ctx.planId });
    const registry = new InMemoryPlanRegistry();
    const { gateway } = gatewayOver([tool], { planRegistry: registry, profile: { labels: { profile: 'review' } } });
    const first = await connectClient(gateway, {}, 'first-client');
    const second = await connectClient(gateway, {}, 'second-client');
    const planOf = async (client: typeof first.client) =>
      ((await client.callTool({ name: 'notes.read', arguments: {} })).content as { text: string }[])[0]?.text;
    const [firstPlan, secondPlan] = [await planOf(first.client), await planOf(second.client)];
    expect(firstPlan).toBe(first.session.planId);
    expect(secondPlan).toBe(second.session.planId);
    expect(firstPlan).not.toBe(secondPlan);
    const listed = await registry.list();
    expect(listed.map((plan) => plan.planId).sort()).toEqual([firstPlan, secondPlan].sort());
    expect(listed.find((plan) => plan.planId === firstPlan)?.labels).toEqual({
      server: 'mcp',
      transport: 'memory',
      client: 'first-client 1.0.0',
      profile: 'review',
    });
    await first.client.close();
    await first.session.ended;
    expect(tool.count('deactivate', firstPlan)).toBe(1);
    expect(tool.count('deactivate', secondPlan)).toBe(0);
    expect((await registry.list()).map((plan) => plan.planId)).toEqual([secondPlan]);
    // Ending again (the gateway stopping) deactivates nothing twice.
    await gateway.close();
    expect(tool.count('deactivate', firstPlan)).toBe(1);
    expect(tool.count('deactivate', secondPlan)).toBe(1);
  });

  it("cancelling a session's plan from the registry (agents plan cancel) ends the session", async () => {
    let stopped: string | undefined;
    const waits = new TestTool({
      name: 'slow.wait',
      capability: reader,
      execute: (_input, ctx) => new Promise((resolve) => ctx.cancellationToken.onCancel((reason) => resolve((stopped = reason)))),
    });
    const registry = new InMemoryPlanRegistry();
    const { gateway } = gatewayOver([waits], { planRegistry: registry });
    const { client, session } = await connectClient(gateway);
    let closed = false;
    client.onclose = () => (closed = true);
    const call = client.callTool({ name: 'slow.wait', arguments: {} });
    await eventually(() => waits.count('execute') === 1, 'the call to start');
    await registry.send(createCancelMessage(session.planId as string, 'cancelled by an operator', 'test'));
    await session.ended;
    await expect(call).rejects.toThrow();
    expect(stopped).toMatch(/cancelled by an operator/);
    await eventually(() => closed, 'the client to see the session close');
    expect(waits.count('deactivate')).toBe(1);
    expect(await registry.list()).toEqual([]);
    await gateway.close();
  });
});

describe('McpGateway: approvals and questions go to the client', () => {
  const askWrites = { readOnly: false, requireCheckpoint: false, approval: { capabilities: ['writes' as const] } };

  function writeTool() {
    return new TestTool({
      name: 'notes.write',
      capability: writer,
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      execute: (input: { text: string }) => `wrote ${input.text}`,
    });
  }

  it('asks a client that supports elicitation, as a form naming the tool and the arguments, and runs the call it approves', async () => {
    const write = writeTool();
    const { gateway } = gatewayOver([write], { profile: { policy: askWrites } });
    const { client } = await connectClient(gateway, { elicitation: { form: {} } });
    const asked: { message: string; schema: unknown }[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      const params = request.params as { message: string; requestedSchema: unknown };
      asked.push({ message: params.message, schema: params.requestedSchema });
      return { action: 'accept', content: { answer: asked.length === 1 ? 'once' : 'deny', reason: 'not this one' } };
    });
    const approved = await client.callTool({ name: 'notes.write', arguments: { text: 'hello' } });
    expect(approved.content).toEqual([{ type: 'text', text: 'wrote hello' }]);
    expect(asked[0]?.message).toMatch(/Tool notes.write \(custom\): writes.*\nAbout: .*\nArguments: \{"text":"hello"\}/s);
    expect(asked[0]?.schema).toMatchObject({ properties: { answer: { oneOf: expect.arrayContaining([{ const: 'once', title: 'Approve this call' }]) } } });
    const denied = await client.callTool({ name: 'notes.write', arguments: { text: 'again' } });
    expect(denied.isError).toBe(true);
    expect((denied.content as { text: string }[])[0]?.text).toMatch(/^Error TOOL_APPROVAL_DENIED: a person denied this call of 'notes.write' \(not this one\)/);
    expect(write.count('execute')).toBe(1);
    await gateway.close();
  });

  it('without elicitation, the fallback (--approve) decides; without one, the call is denied saying what would let it run', async () => {
    const write = writeTool();
    const { gateway } = gatewayOver([write], { profile: { policy: askWrites } });
    const { client } = await connectClient(gateway);
    const denied = await client.callTool({ name: 'notes.write', arguments: { text: 'x' } });
    expect((denied.content as { text: string }[])[0]?.text).toMatch(/^Error TOOL_APPROVAL_DENIED/);
    expect(write.count('execute')).toBe(0);
    await gateway.close();

    const approving = writeTool();
    const fallback = gatewayOver([approving], {
      profile: { policy: askWrites },
      fallbackApprovals: { requestApproval: (request) => ({ decision: 'approve', scope: 'once', decidedBy: `--approve ${request.toolName}` }) },
    });
    const { client: other } = await connectClient(fallback.gateway);
    expect((await other.callTool({ name: 'notes.write', arguments: { text: 'y' } })).content).toEqual([{ type: 'text', text: 'wrote y' }]);
    await fallback.gateway.close();
  });

  it("routes an upstream server's question and sampling request to the client of the plan that made the call", async () => {
    const { gateway, clients } = gatewayOver([
      new TestTool({
        name: 'upstream.ask',
        capability: reader,
        // What the MCP adapter does when its server asks during a call: the interaction handler, with the call's plan and tool.
        execute: async (_input, ctx) => {
          const answer = await clients.interactionHandler.interact(
            { kind: 'form', message: 'Your favourite colour?', schema: { type: 'object', properties: { colour: { type: 'string' } } } },
            { source: 'mcp', origin: 'everything', planId: ctx.planId, toolName: 'upstream.ask', signal: ctx.signal },
          );
          const sampled = await clients.samplingHandler.createMessage(
            { messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }], maxTokens: 10 },
            { source: 'mcp', origin: 'everything', planId: ctx.planId, toolName: 'upstream.ask', signal: ctx.signal },
          );
          return { answer, sampled };
        },
      }),
    ]);
    const { client } = await connectClient(gateway, { elicitation: { form: {} }, sampling: {} }, 'asker');
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { colour: 'green' } }));
    client.setRequestHandler(CreateMessageRequestSchema, () => ({ role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'scripted' }));
    const result = await client.callTool({ name: 'upstream.ask', arguments: {} });
    expect(result.structuredContent).toEqual({
      answer: { action: 'accept', content: { colour: 'green' } },
      sampled: { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'scripted' },
    });
    await gateway.close();
  });

  it('declines an upstream question for a client that cannot be asked, and withdraws it when the client cancels the call', async () => {
    let answered: unknown;
    const { gateway, clients } = gatewayOver([
      new TestTool({
        name: 'upstream.ask',
        capability: reader,
        execute: async (_input, ctx) => {
          answered = await clients.interactionHandler.interact(
            { kind: 'form', message: 'Still there?', schema: { type: 'object', properties: {} } },
            { source: 'mcp', origin: 'everything', planId: ctx.planId, toolName: 'upstream.ask', signal: ctx.signal },
          );
          return answered;
        },
      }),
    ]);
    const { client: mute } = await connectClient(gateway);
    expect((await mute.callTool({ name: 'upstream.ask', arguments: {} })).structuredContent).toEqual({ action: 'decline' });

    const { client } = await connectClient(gateway, { elicitation: { form: {} } });
    let askedFor!: () => void;
    const asked = new Promise<void>((resolve) => (askedFor = resolve));
    client.setRequestHandler(ElicitRequestSchema, (_request, extra) => {
      askedFor();
      return new Promise((resolve) => extra.signal.addEventListener('abort', () => resolve({ action: 'cancel' })));
    });
    const controller = new AbortController();
    const call = client.callTool({ name: 'upstream.ask', arguments: {} }, undefined, { signal: controller.signal });
    await asked;
    controller.abort('never mind');
    await expect(call).rejects.toThrow();
    await eventually(() => (answered as { action?: string } | undefined)?.action === 'cancel', 'the question to be withdrawn');
    await gateway.close();
  });
});
