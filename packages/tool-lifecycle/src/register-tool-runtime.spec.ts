// The package entry comes first: it loads reflect-metadata, which tsyringe needs.
import { RUNTIME_LOGGER, TOOL_RUNTIME, TOOL_SOURCE, ToolRuntime, registerToolRuntime } from './index';
import { container as globalContainer } from 'tsyringe';
import { InMemoryToolSource, RecordingLogger, TestTool } from './testing/index';

describe('registerToolRuntime', () => {
  it('wires the runtime with every registered source and the injected logger, in a child container', async () => {
    const container = globalContainer.createChildContainer();
    const logger = new RecordingLogger();
    container.register(RUNTIME_LOGGER, { useValue: logger });
    registerToolRuntime(container, { strictOutput: true });
    container.register(TOOL_SOURCE, { useValue: new InMemoryToolSource([new TestTool({ name: 'a' })], { id: 'one' }) });
    container.register(TOOL_SOURCE, {
      useValue: new InMemoryToolSource([new TestTool({ name: 'b', outputSchema: { type: 'string' }, execute: () => 1 })], { id: 'two' }),
    });
    const runtime = container.resolve(TOOL_RUNTIME);
    expect(runtime).toBeInstanceOf(ToolRuntime);
    expect(container.resolve(TOOL_RUNTIME)).toBe(runtime);
    expect((await runtime.listTools()).map((tool) => tool.name)).toEqual(['a', 'b']);
    const ctx = runtime.createPlan();
    await expect(runtime.execute('b', {}, ctx)).resolves.toMatchObject({ ok: false });
    expect(globalContainer.isRegistered(TOOL_RUNTIME)).toBe(false);
  });

  it('works with no source registered, and refuses something that is not a container', async () => {
    const container = globalContainer.createChildContainer();
    registerToolRuntime(container);
    await expect(container.resolve(TOOL_RUNTIME).listTools()).resolves.toEqual([]);
    expect(() => registerToolRuntime({} as never)).toThrow(/tsyringe DependencyContainer/);
  });
});
