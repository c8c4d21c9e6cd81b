import { ToolAccessDeniedError } from '../errors/tool-access-denied-error';
import { ToolRuntime } from '../index';
import { InMemoryToolSource, RecordingLogger, TestTool } from '../testing/index';

describe('policy step: a plan that denies the network', () => {
  const online = () => new TestTool({ name: 'web.fetch', capability: { writes: false, checkpointable: true, openWorld: true } });
  const local = () => new TestTool({ name: 'local.count', capability: { writes: false, checkpointable: true, openWorld: false } });

  function setup(tools: TestTool[]): ToolRuntime {
    return new ToolRuntime({ sources: [new InMemoryToolSource(tools)], logger: new RecordingLogger() });
  }

  it('refuses an openWorld tool with ToolAccessDeniedError (rule network) before it runs, and traces the refusal', async () => {
    const tool = online();
    const runtime = setup([tool]);
    const ctx = runtime.createPlan({ planId: 'plan-offline', policy: { network: 'deny' } });
    const error = await runtime.execute('web.fetch', { url: 'https://example.com' }, ctx).catch((thrown: unknown) => thrown);
    expect(ToolAccessDeniedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'TOOL_ACCESS_DENIED', rule: 'network', toolName: 'web.fetch', planId: 'plan-offline' });
    expect((error as Error).message).toBe(
      "Tool 'web.fetch' reaches outside the plan (it is openWorld: network, remote services), but plan 'plan-offline' denies the network. Run it in a plan whose policy has network: 'allow', or choose a tool that is not openWorld.",
    );
    expect(tool.count('execute')).toBe(0);
    expect(ctx.traces).toHaveLength(1);
    expect(ctx.traces[0]).toMatchObject({ success: false, error: { name: 'ToolAccessDeniedError', code: 'TOOL_ACCESS_DENIED' } });
    await runtime.endPlan(ctx);
  });

  it('runs a tool that is not openWorld in that plan, and the openWorld tool in a plan that allows the network', async () => {
    const runtime = setup([online(), local()]);
    const offline = runtime.createPlan({ policy: { network: 'deny' } });
    await expect(runtime.execute('local.count', { n: 1 }, offline)).resolves.toMatchObject({ ok: true, output: { n: 1 } });
    const byDefault = runtime.createPlan();
    await expect(runtime.execute('web.fetch', { n: 2 }, byDefault)).resolves.toMatchObject({ ok: true });
    const explicit = runtime.createPlan({ policy: { network: 'allow' } });
    await expect(runtime.execute('web.fetch', { n: 3 }, explicit)).resolves.toMatchObject({ ok: true });
    await Promise.all([offline, byDefault, explicit].map((ctx) => runtime.endPlan(ctx)));
  });

  it('takes a tool that declares nothing as openWorld', async () => {
    const vague = new TestTool({ name: 'vague', capability: { writes: false } });
    const runtime = setup([vague]);
    const ctx = runtime.createPlan({ policy: { network: 'deny' } });
    await expect(runtime.execute('vague', {}, ctx)).rejects.toMatchObject({ code: 'TOOL_ACCESS_DENIED', rule: 'network' });
    expect(vague.count('execute')).toBe(0);
    await runtime.endPlan(ctx);
  });

  it('names the read-only rule first when both rules refuse the tool', async () => {
    const writer = new TestTool({ name: 'web.post', capability: { writes: true, checkpointable: false, openWorld: true } });
    const runtime = setup([writer]);
    const ctx = runtime.createPlan({ policy: { readOnly: true, network: 'deny' } });
    await expect(runtime.execute('web.post', {}, ctx)).rejects.toMatchObject({ code: 'TOOL_ACCESS_DENIED', rule: 'read-only' });
    await runtime.endPlan(ctx);
  });
});
