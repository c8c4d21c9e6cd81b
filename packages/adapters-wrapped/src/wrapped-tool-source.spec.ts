import {
  RUNTIME_LOGGER,
  TOOL_RUNTIME,
  TOOL_SOURCE,
  ToolNotFoundError,
  ToolRuntime,
  registerToolRuntime,
  type ToolRuntime as Runtime,
} from '@ca/tool-lifecycle';
import { InMemoryToolSource, RecordingLogger, TestTool } from '@ca/tool-lifecycle/testing';
import { container } from 'tsyringe';
import { WrappedToolError, WrappedToolSource, createWrappedAdapter, fromFunction, registerWrappedAdapter, wrapTool } from './index';

const echo = (name: string) => fromFunction((input: unknown) => input, { name, description: `Echoes (${name}).`, capability: { writes: false } });

function thrownBy(fn: () => unknown): WrappedToolError {
  try {
    fn();
  } catch (error) {
    if (WrappedToolError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a WrappedToolError');
}

describe('WrappedToolSource', () => {
  it('is a ToolSource of kind wrapped listing its tools', async () => {
    const source = createWrappedAdapter({ id: 'wrapped:team', tools: [echo('w.a'), echo('w.b')] });
    expect(source).toBeInstanceOf(WrappedToolSource);
    expect(source.kind).toBe('wrapped');
    expect(source.id).toBe('wrapped:team');
    expect((await source.discover()).map((descriptor) => descriptor.name)).toEqual(['w.a', 'w.b']);
  });

  it('refuses duplicates, tools that are not wrapped, and bad settings', () => {
    const duplicate = thrownBy(() => createWrappedAdapter({ tools: [echo('w.same'), echo('w.same')] }));
    expect(duplicate).toMatchObject({ code: 'WRAP_DUPLICATE_TOOL', toolName: 'w.same' });
    expect(duplicate.message).toMatch(/already has a tool 'w\.same'/);
    const unwrapped = thrownBy(() => createWrappedAdapter({ tools: [new TestTool({ name: 'custom.raw' })] }));
    expect(unwrapped.message).toMatch(/of source kind 'custom'.*Wrap it first/);
    expect(thrownBy(() => createWrappedAdapter({} as never)).message).toBe(
      'createWrappedAdapter(settings): tools must be an array of wrapped tools or factories of them; got undefined.',
    );
    expect(thrownBy(() => createWrappedAdapter('tools' as never)).message).toMatch(
      /^createWrappedAdapter\(settings\): settings must be \{ tools: \[\.\.\.\] \}/,
    );
    expect(thrownBy(() => createWrappedAdapter({ tools: [{ descriptor: 'x' } as never] })).message).toMatch(
      /^Wrapped tool source 'wrapped' needs a ToolInstance/,
    );
    const source = createWrappedAdapter({ tools: [echo('w.one')] });
    expect(thrownBy(() => source.add(echo('w.one'))).code).toBe('WRAP_DUPLICATE_TOOL');
  });

  it('reports an unknown name with ToolNotFoundError, as every source does, suggesting the close names', () => {
    const source = createWrappedAdapter({ id: 'wrapped:team', tools: [echo('w.lookup'), echo('w.other')] });
    let thrown: unknown;
    try {
      source.get('w.lokup');
    } catch (error) {
      thrown = error;
    }
    expect(ToolNotFoundError.isInstance(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: 'TOOL_NOT_FOUND', toolName: 'w.lokup', sourceId: 'wrapped:team', suggestions: ['w.lookup'] });
    expect((thrown as Error).message).toBe(
      "Source 'wrapped:team' has no tool named 'w.lokup'. Did you mean 'w.lookup'? List the available tools with runtime.listTools().",
    );
  });

  it('answers an unknown name after running its factories, suggesting a tool a factory made', async () => {
    const source = createWrappedAdapter({ tools: [async () => echo('w.from-factory')] });
    await expect(source.get('w.from-factroy')).rejects.toMatchObject({ name: 'ToolNotFoundError', code: 'TOOL_NOT_FOUND', suggestions: ['w.from-factory'] });
  });

  it('takes several tools, or none, from one factory', async () => {
    const source = createWrappedAdapter({ tools: [() => [echo('w.first'), echo('w.second')], async () => [], echo('w.plain')] });
    expect((await source.discover()).map((descriptor) => descriptor.name)).toEqual(['w.plain', 'w.first', 'w.second']);
    const clash = createWrappedAdapter({ id: 'wrapped:clash', tools: [() => [echo('w.same'), echo('w.same')]] });
    await expect(clash.discover()).rejects.toMatchObject({ code: 'WRAP_DUPLICATE_TOOL', toolName: 'w.same' });
    const invalid = createWrappedAdapter({ id: 'wrapped:bad', tools: [() => [echo('w.ok'), 42 as never]] });
    await expect(invalid.discover()).rejects.toMatchObject({
      code: 'WRAP_INVALID_OPTIONS',
      problem: 'not-a-tool',
      message: expect.stringContaining('got number 42'),
    });
    // All or nothing: the valid tool of the failed factory is not served.
    await expect(invalid.get('w.ok')).rejects.toMatchObject({ code: 'WRAP_INVALID_OPTIONS' });
  });

  it('tells the runtime about added tools', async () => {
    const source = createWrappedAdapter({ tools: [] });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    expect(await runtime.listTools()).toEqual([]);
    source.add(echo('w.late'));
    expect((await runtime.listTools()).map((descriptor) => descriptor.name)).toEqual(['w.late']);
  });

  it('runs factories once, on the first discovery, to wrap tools of another source', async () => {
    const mcp = new InMemoryToolSource([new TestTool({ name: 'mcp.fs.read', source: 'mcp', capability: { writes: false } })], { kind: 'mcp', id: 'mcp:fs' });
    const factory = jest.fn(async (signal?: AbortSignal) => {
      await mcp.discover(signal);
      return wrapTool(mcp.get('mcp.fs.read'), { name: 'fs.read' });
    });
    const source = createWrappedAdapter({ tools: [factory] });
    expect(factory).not.toHaveBeenCalled();
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    expect((await runtime.listTools()).map((descriptor) => descriptor.name)).toEqual(['fs.read']);
    await source.discover();
    expect(factory).toHaveBeenCalledTimes(1);
    const ctx = runtime.createPlan({ policy: { readOnly: true } });
    await expect(runtime.execute('fs.read', { path: 'x' }, ctx)).resolves.toMatchObject({ ok: true, output: { path: 'x' } });
  });

  it('reports a failing factory as a source error and runs it again on the next discovery', async () => {
    let fail = true;
    const source = createWrappedAdapter({
      id: 'wrapped:lazy',
      tools: [
        () => {
          if (fail) throw new Error('server not reachable');
          return echo('w.recovered');
        },
      ],
    });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    const first = await runtime.discover();
    expect(first.sourceErrors).toEqual([{ sourceId: 'wrapped:lazy', error: expect.objectContaining({ code: 'WRAP_FACTORY_FAILED' }) }]);
    expect(first.sourceErrors[0]!.error.message).toMatch(/factory at tools\[0\] failed: server not reachable/);
    fail = false;
    expect((await runtime.discover({ refresh: true })).tools.map((descriptor) => descriptor.name)).toEqual(['w.recovered']);
  });
});

describe('registerWrappedAdapter', () => {
  it('registers the source under TOOL_SOURCE; the runtime resolved from the container runs its tools', async () => {
    const child = container.createChildContainer();
    const logger = new RecordingLogger();
    child.register(RUNTIME_LOGGER, { useValue: logger });
    const writer = new TestTool({ name: 'builtin.write', source: 'builtin', capability: { writes: true } });
    const source = registerWrappedAdapter(child, {
      tools: [echo('w.echo'), wrapTool(writer, { namespace: 'team', capability: { destructive: true } })],
    });
    expect(child.resolveAll(TOOL_SOURCE)).toEqual([source]);
    registerToolRuntime(child);
    const runtime: Runtime = child.resolve(TOOL_RUNTIME);
    const traces = await runtime.runPlan({ planId: 'plan-di', policy: { readOnly: true } }, async (ctx) => {
      await expect(runtime.execute('w.echo', { hello: 'world' }, ctx)).resolves.toMatchObject({ ok: true, output: { hello: 'world' } });
      await expect(runtime.execute('team.builtin.write', {}, ctx)).rejects.toMatchObject({ code: 'TOOL_ACCESS_DENIED' });
      return [...ctx.traces];
    });
    expect(traces.map((trace) => [trace.toolName, trace.success, trace.error?.code])).toEqual([
      ['w.echo', true, undefined],
      ['team.builtin.write', false, 'TOOL_ACCESS_DENIED'],
    ]);
    expect(writer.count('execute')).toBe(0);
  });

  it('refuses something that is not a container', () => {
    expect(thrownBy(() => registerWrappedAdapter(null as never, { tools: [] })).message).toBe(
      'registerWrappedAdapter(container, settings): container must be a tsyringe DependencyContainer (e.g. container.createChildContainer()); got null.',
    );
  });
});
