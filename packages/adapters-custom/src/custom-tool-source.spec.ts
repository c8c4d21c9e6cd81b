import { ToolNotFoundError, ToolRuntime } from '@ca/tool-lifecycle';
import { TestTool, RecordingLogger } from '@ca/tool-lifecycle/testing';
import { CustomToolRegistrationError, CustomToolSource, createCustomAdapter, defineTool } from './index';

function tool(name: string, output: unknown = name) {
  return defineTool({ name, description: `Returns ${String(output)}.`, inputSchema: { type: 'object' }, capability: { writes: false }, execute: () => output });
}

function captured(fn: () => unknown): CustomToolRegistrationError {
  try {
    fn();
  } catch (error) {
    if (CustomToolRegistrationError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a CustomToolRegistrationError');
}

describe('CustomToolSource', () => {
  it('is a ToolSource of kind custom listing its tools', async () => {
    const source = createCustomAdapter({ id: 'custom:team-a', tools: [tool('custom.a'), tool('custom.b')] });
    expect(source).toBeInstanceOf(CustomToolSource);
    expect(source.kind).toBe('custom');
    expect(source.id).toBe('custom:team-a');
    expect((await source.discover()).map((descriptor) => descriptor.name)).toEqual(['custom.a', 'custom.b']);
    expect(await source.get('custom.b')).toBeDefined();
  });

  it('refuses two tools of one name at construction and in add(), naming the tool and the fix', async () => {
    const fromSettings = captured(() => createCustomAdapter({ tools: [tool('custom.same', 1), tool('custom.same', 2)] }));
    expect(fromSettings.code).toBe('CUSTOM_TOOL_DUPLICATE');
    expect(fromSettings.toolName).toBe('custom.same');
    expect(fromSettings.message).toMatch(/cannot register tool 'custom\.same'.*rename one of them/);

    const source = createCustomAdapter({ tools: [tool('custom.same', 1)] });
    const fromAdd = captured(() => source.add(tool('custom.same', 2)));
    expect(fromAdd.code).toBe('CUSTOM_TOOL_DUPLICATE');
    // The first registration is kept.
    const instance = await source.get('custom.same');
    await expect(instance.execute({}, {} as never)).resolves.toEqual({ ok: true, output: 1 });
  });

  it('refuses a tool whose schema does not compile when it is added', () => {
    const source = createCustomAdapter();
    const sneaky = new TestTool({ name: 'custom.sneaky', inputSchema: { type: 'object', properties: { a: { minimum: 'one' } } } });
    const error = captured(() => source.add(sneaky));
    expect(error.code).toBe('CUSTOM_TOOL_INVALID');
    expect(error.message).toMatch(/Custom tool 'custom\.sneaky' has an inputSchema that cannot be compiled/);
  });

  it('refuses instances of another source kind and invalid settings', () => {
    const mcpTool = new TestTool({ name: 'mcp.server.echo', source: 'mcp' });
    const error = captured(() => createCustomAdapter({ tools: [mcpTool] }));
    expect(error.code).toBe('CUSTOM_TOOL_INVALID');
    expect(error.message).toMatch(/source kind 'mcp', not 'custom'.*wrapTool/);
    expect(captured(() => createCustomAdapter({ tools: 'nope' as never })).message).toMatch(/expects tools to be an array/);
    expect(captured(() => createCustomAdapter({ id: '' })).message).toMatch(/non-empty string/);
  });

  it('accepts a hand-written custom ToolInstance as it is', async () => {
    const handWritten = new TestTool({ name: 'custom.hand', source: 'custom' });
    const source = createCustomAdapter({ tools: [handWritten] });
    expect(await source.get('custom.hand')).toBe(handWritten);
  });

  it('reports an unknown name with ToolNotFoundError, as every source does, suggesting the close names', () => {
    const source = createCustomAdapter({ id: 'custom:team', tools: [tool('custom.alpha'), tool('custom.beta')] });
    let thrown: unknown;
    try {
      source.get('custom.alhpa');
    } catch (error) {
      thrown = error;
    }
    expect(ToolNotFoundError.isInstance(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: 'TOOL_NOT_FOUND', toolName: 'custom.alhpa', sourceId: 'custom:team', suggestions: ['custom.alpha'] });
    expect((thrown as Error).message).toBe(
      "Source 'custom:team' has no tool named 'custom.alhpa'. Did you mean 'custom.alpha'? List the available tools with runtime.listTools().",
    );
  });

  it('serves a tool added later, and still refuses an unknown name after it', async () => {
    const source = createCustomAdapter({ tools: [tool('custom.first')] });
    source.add(tool('custom.second', 'late'));
    expect((await source.discover()).map((descriptor) => descriptor.name)).toEqual(['custom.first', 'custom.second']);
    await expect((await source.get('custom.second')).execute({}, {} as never)).resolves.toEqual({ ok: true, output: 'late' });
    expect(() => source.get('custom.third')).toThrow(expect.objectContaining({ code: 'TOOL_NOT_FOUND', toolName: 'custom.third' }));
  });

  it('tells the runtime about added tools, which it then discovers', async () => {
    const source = createCustomAdapter({ tools: [tool('custom.first')] });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    expect((await runtime.listTools()).map((descriptor) => descriptor.name)).toEqual(['custom.first']);
    source.add(tool('custom.second', 'late'));
    expect((await runtime.listTools()).map((descriptor) => descriptor.name)).toEqual(['custom.first', 'custom.second']);
    const ctx = runtime.createPlan();
    await expect(runtime.execute('custom.second', {}, ctx)).resolves.toMatchObject({ ok: true, output: 'late' });
  });

  it('stops notifying a listener after it unsubscribes', () => {
    const source = createCustomAdapter();
    const listener = jest.fn();
    const unsubscribe = source.onToolsChanged(listener);
    source.add(tool('custom.one'));
    unsubscribe();
    source.add(tool('custom.two'));
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('lets the runtime report two sources offering one name', async () => {
    const runtime = new ToolRuntime({
      sources: [createCustomAdapter({ id: 'custom:a', tools: [tool('custom.clash')] }), createCustomAdapter({ id: 'custom:b', tools: [tool('custom.clash')] })],
      logger: new RecordingLogger(),
    });
    await expect(runtime.listTools()).rejects.toMatchObject({ code: 'TOOL_REGISTRATION_FAILED', message: expect.stringContaining("'custom.clash'") });
  });
});
