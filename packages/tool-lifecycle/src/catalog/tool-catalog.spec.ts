import { TestTool, InMemoryToolSource, RecordingLogger } from '../testing/index';
import { ToolRuntime, type ToolSource } from '../index';

/** A source whose discovery never answers, like a server that hangs or a SKILL.md that is a FIFO. */
function hangingSource(): ToolSource & { readonly signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  return {
    kind: 'skill',
    id: 'skills:hung',
    signals,
    discover: (signal?: AbortSignal) => {
      if (signal !== undefined) signals.push(signal);
      return new Promise(() => undefined);
    },
    get: () => {
      throw new Error('never listed');
    },
  };
}

describe('ToolRuntime discovery deadline', () => {
  it('reports a source that misses the deadline and serves the others', async () => {
    const hung = hangingSource();
    const runtime = new ToolRuntime({
      sources: [hung, new InMemoryToolSource([new TestTool({ name: 'still.works' })])],
      logger: new RecordingLogger(),
      options: { discoverTimeoutMs: 50 },
    });
    const discovery = await runtime.discover();
    expect(discovery.tools.map((tool) => tool.name)).toEqual(['still.works']);
    expect(discovery.sourceErrors).toHaveLength(1);
    expect(discovery.sourceErrors[0]).toMatchObject({ sourceId: 'skills:hung', error: { code: 'TOOL_DISCOVERY_TIMED_OUT' } });
    expect(discovery.sourceErrors[0]?.error.message).toMatch(/did not finish discovery within 50 ms/);
    // The source was told to stop through its signal.
    expect(hung.signals[0]?.aborted).toBe(true);
    const result = await runtime.runPlan({}, (ctx) => runtime.execute('still.works', 1, ctx));
    expect(result.ok).toBe(true);
  });

  it('refuses a discovery deadline that is not a positive number', () => {
    expect(() => new ToolRuntime({ options: { discoverTimeoutMs: 0 } })).toThrow(/discoverTimeoutMs must be a positive number/);
  });
});

/** A source with one part that could not be listed (as an MCP source reports a server: `mcp.<server>`), and maybe no tools at all. */
function sourceWithFailedPart(everyPartFailed: boolean): ToolSource {
  const failure = Object.assign(new Error("MCP server 'remote' refused the request: HTTP 401"), { code: 'MCP_AUTH_FAILED', server: 'remote' });
  const working = new InMemoryToolSource([new TestTool({ name: 'mcp.local.echo' })]);
  return {
    kind: 'mcp',
    id: 'mcp:remote,local',
    discover: async () => {
      if (everyPartFailed) throw failure;
      return working.discover();
    },
    get: (name: string) => working.get(name),
    unavailable: () => [{ name: 'mcp.remote', source: 'mcp', reason: failure.message, error: failure }],
  };
}

describe('a tool whose group is unavailable', () => {
  it.each([
    ['another part of the source was listed', false],
    ['the whole source failed', true],
  ])('is reported with the group’s reason and error, not as unknown (%s)', async (_case, everyPartFailed) => {
    const runtime = new ToolRuntime({ sources: [sourceWithFailedPart(everyPartFailed)], logger: new RecordingLogger() });
    const error = await runtime
      .runPlan({}, (ctx) => runtime.execute('mcp.remote.search', {}, ctx))
      .then(
        () => undefined,
        (thrown: unknown) => thrown as Error & { code?: string; problem?: string; cause?: unknown },
      );
    expect(error).toMatchObject({ code: 'TOOL_REGISTRATION_FAILED', problem: 'unavailable', toolName: 'mcp.remote.search' });
    expect(error?.message).toBe("Tool 'mcp.remote.search' is unavailable: MCP server 'remote' refused the request: HTTP 401");
    expect(error?.cause).toMatchObject({ code: 'MCP_AUTH_FAILED', server: 'remote' });
    // The group's name alone, a prefix that is not a dotted one, and other names are still unknown tools.
    for (const name of ['mcp.remotely.search', 'mcp.other.search']) {
      await expect(runtime.runPlan({}, (ctx) => runtime.execute(name, {}, ctx))).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
    }
    // A failed source stays one source error; its parts are not listed twice.
    const discovery = await runtime.discover();
    expect(discovery.unavailable.map((item) => item.name)).toEqual(everyPartFailed ? [] : ['mcp.remote']);
    expect(discovery.sourceErrors).toHaveLength(everyPartFailed ? 1 : 0);
  });
});

describe('ToolRuntime activation deadline', () => {
  it('fails an activation that misses the deadline, and deactivates it if it succeeds later', async () => {
    let finishActivation: () => void = () => undefined;
    const tool = new TestTool({
      name: 'slow.start',
      activate: () => new Promise<void>((resolve) => (finishActivation = resolve)),
    });
    const logger = new RecordingLogger();
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger, options: { activateTimeoutMs: 30 } });
    const ctx = runtime.createPlan({ planId: 'late-activation' });
    await expect(runtime.execute('slow.start', {}, ctx)).rejects.toMatchObject({
      code: 'TOOL_ACTIVATION_FAILED',
      message: expect.stringContaining('activate did not finish within 30 ms'),
    });
    expect(tool.count('execute')).toBe(0);
    finishActivation();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Matched: the late activation was undone at once.
    expect(tool.count('activate')).toBe(1);
    expect(tool.count('deactivate')).toBe(1);
    await runtime.endPlan(ctx);
    expect(tool.count('deactivate')).toBe(1);
  });
});

describe('ToolRuntime.createPlan', () => {
  it('refuses the id of a plan that has ended', async () => {
    const runtime = new ToolRuntime({ logger: new RecordingLogger() });
    const ctx = runtime.createPlan({ planId: 'once' });
    await runtime.endPlan(ctx);
    expect(() => runtime.createPlan({ planId: 'once' })).toThrow(/Plan 'once' has ended, so it cannot be used again/);
  });

  it('disposes the tokens it made for a plan when the plan ends', async () => {
    const runtime = new ToolRuntime({ logger: new RecordingLogger() });
    const controller = new AbortController();
    const ctx = runtime.createPlan({ timeoutMs: 60_000, signal: controller.signal });
    await runtime.endPlan(ctx);
    controller.abort();
    // Disposed: the followed signal no longer reaches the plan's token, and no timer holds the process.
    expect(ctx.cancellationToken.isCancelled).toBe(false);
  });
});
