import { TOOL_RUNTIME, TOOL_SOURCE, registerToolRuntime, RUNTIME_LOGGER, type ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import type { ToolExecutionContext } from '@ca/tool-context';
import { container, inject, injectable, type DependencyContainer } from 'tsyringe';
import { CUSTOM_TOOL, CustomTool, CustomToolRegistrationError, defineTool, registerCustomAdapter, type FromSchema } from './index';

interface GreetingService {
  greet(name: string): string;
}
const GREETING_SERVICE = Symbol.for('test.adapters-custom.GreetingService');

const greetSchema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false } as const;
type GreetInput = FromSchema<typeof greetSchema>;

@injectable()
class GreetTool extends CustomTool<GreetInput, string> {
  readonly name = 'custom.di.greet';
  readonly description = 'Greets through the injected greeting service.';
  readonly capability = { writes: false, checkpointable: true };
  override readonly inputSchema = greetSchema;
  readonly activePlans = new Set<string>();

  constructor(@inject(GREETING_SERVICE) private readonly greetings: GreetingService) {
    super();
  }

  override async activate(ctx: ToolExecutionContext): Promise<void> {
    this.activePlans.add(ctx.planId);
  }

  async execute(input: GreetInput, ctx: ToolExecutionContext): Promise<string> {
    if (!this.activePlans.has(ctx.planId)) throw new Error('not activated');
    return this.greetings.greet(input.name);
  }

  override async deactivate(ctx: ToolExecutionContext): Promise<void> {
    this.activePlans.delete(ctx.planId);
  }
}

@injectable()
class NamelessTool extends CustomTool {
  readonly name = 'not a name';
  readonly description = 'Invalid on purpose.';
  readonly capability = { writes: false };
  execute(): string {
    return '';
  }
}

/** A registration that does not extend CustomTool: only its shape matters. */
@injectable()
class PlainShapeTool {
  readonly name = 'custom.di.plain';
  readonly description = 'Has the members of a CustomTool without extending it.';
  readonly capability = { writes: false, checkpointable: false };
  execute(): { ok: true; output: string } {
    return { ok: true, output: 'plain' };
  }
}

describe('class-based custom tools through dependency injection', () => {
  let child: DependencyContainer;
  let logger: RecordingLogger;

  beforeEach(() => {
    child = container.createChildContainer();
    logger = new RecordingLogger();
    child.register(RUNTIME_LOGGER, { useValue: logger });
  });

  afterEach(() => {
    child.clearInstances();
  });

  function runtime(): ToolRuntime {
    registerToolRuntime(child);
    return child.resolve(TOOL_RUNTIME);
  }

  it('resolves CUSTOM_TOOL registrations with their injected dependencies and runs them', async () => {
    child.register(GREETING_SERVICE, { useValue: { greet: (name: string) => `Bonjour, ${name}!` } });
    child.register(CUSTOM_TOOL, { useClass: GreetTool });
    child.register(CUSTOM_TOOL, { useClass: PlainShapeTool });
    const inline = defineTool({
      name: 'custom.inline',
      description: 'Inline.',
      inputSchema: { type: 'object' },
      capability: { writes: false },
      execute: () => 1,
    });
    const source = registerCustomAdapter(child, { tools: [inline] });
    expect(child.resolveAll(TOOL_SOURCE)).toContain(source);

    const tools = runtime();
    const listed = await tools.listTools();
    expect(listed.map((descriptor) => descriptor.name)).toEqual(['custom.di.greet', 'custom.di.plain', 'custom.inline']);
    expect(listed[0]).toMatchObject({ source: 'custom', capability: { writes: false, checkpointable: true }, inputSchema: greetSchema });

    const report = await tools.runPlan({ planId: 'plan-di', policy: { readOnly: true, requireCheckpoint: true } }, async (ctx) => {
      const greeting = await tools.execute('custom.di.greet', { name: 'Ada' }, ctx);
      expect(greeting).toMatchObject({ ok: true, output: 'Bonjour, Ada!' });
      const invalid = await tools.execute('custom.di.greet', { name: 7 }, ctx);
      expect(invalid.ok).toBe(false);
      await expect(tools.execute('custom.di.plain', {}, ctx)).rejects.toMatchObject({ code: 'TOOL_CHECKPOINT_REQUIRED' });
      return ctx.traces.map((trace) => [trace.toolName, trace.success]);
    });
    expect(report).toEqual([
      ['custom.di.greet', true],
      ['custom.di.greet', false],
      ['custom.di.plain', false],
    ]);
    const greet = (await source.get('custom.di.greet')) as unknown as { descriptor: unknown };
    expect(greet.descriptor).toMatchObject({ name: 'custom.di.greet' });
  });

  it('resolves the classes once, lazily, on the first discovery', async () => {
    let constructed = 0;
    child.register(GREETING_SERVICE, {
      useFactory: () => {
        constructed++;
        return { greet: (name: string) => name };
      },
    });
    child.register(CUSTOM_TOOL, { useClass: GreetTool });
    const source = registerCustomAdapter(child);
    expect(constructed).toBe(0);
    await source.discover();
    await source.discover();
    await source.get('custom.di.greet');
    expect(constructed).toBe(1);
  });

  it('answers an unknown name, once the classes are resolved, with ToolNotFoundError suggesting a class-based tool', async () => {
    child.register(GREETING_SERVICE, { useValue: { greet: (name: string) => name } });
    child.register(CUSTOM_TOOL, { useClass: GreetTool });
    const source = registerCustomAdapter(child, { id: 'custom:di' });
    await expect(source.get('custom.di.gret')).rejects.toMatchObject({
      name: 'ToolNotFoundError',
      code: 'TOOL_NOT_FOUND',
      sourceId: 'custom:di',
      suggestions: ['custom.di.greet'],
    });
  });

  it('reports a class whose dependency is not registered as a source error, and recovers once it is', async () => {
    child.register(CUSTOM_TOOL, { useClass: GreetTool });
    const source = registerCustomAdapter(child, { id: 'custom:di' });
    const tools = runtime();
    const first = await tools.discover();
    expect(first.tools).toEqual([]);
    expect(first.sourceErrors).toHaveLength(1);
    expect(first.sourceErrors[0]!.sourceId).toBe('custom:di');
    expect(CustomToolRegistrationError.isInstance(first.sourceErrors[0]!.error)).toBe(true);
    expect(first.sourceErrors[0]!.error.message).toMatch(
      /could not resolve the class-based tools registered under CUSTOM_TOOL.*GreetingService.*Register every dependency/s,
    );

    child.register(GREETING_SERVICE, { useValue: { greet: (name: string) => `Hi ${name}` } });
    const second = await tools.discover({ refresh: true });
    expect(second.tools.map((descriptor) => descriptor.name)).toEqual(['custom.di.greet']);
    expect(await source.discover()).toHaveLength(1);
  });

  it('refuses an invalid class and a class duplicating another tool, at discovery', async () => {
    child.register(CUSTOM_TOOL, { useClass: NamelessTool });
    const invalidSource = registerCustomAdapter(child);
    await expect(invalidSource.discover()).rejects.toMatchObject({ code: 'CUSTOM_TOOL_INVALID', message: expect.stringContaining("'not a name'") });

    const other = container.createChildContainer();
    other.register(CUSTOM_TOOL, { useClass: PlainShapeTool });
    const clash = defineTool({
      name: 'custom.di.plain',
      description: 'Same name.',
      inputSchema: { type: 'object' },
      capability: { writes: false },
      execute: () => 0,
    });
    const duplicateSource = registerCustomAdapter(other, { tools: [clash] });
    const error = await duplicateSource.discover().catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'CUSTOM_TOOL_DUPLICATE', toolName: 'custom.di.plain' });
    // Until the clash is fixed, get() reports it too rather than serving a tool of an unusable source.
    await expect(duplicateSource.get('custom.di.plain')).rejects.toMatchObject({ code: 'CUSTOM_TOOL_DUPLICATE' });
  });

  it('refuses something that is not a container', () => {
    expect(() => registerCustomAdapter({} as never)).toThrow(/needs a tsyringe DependencyContainer/);
  });
});
