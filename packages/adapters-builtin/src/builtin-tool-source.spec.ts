import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { container } from 'tsyringe';
import { CaError, isValidToolName } from '@ca/domain';
import { createExecutionContext } from '@ca/tool-context';
import { TOOL_RUNTIME, ToolAccessDeniedError, ToolNotFoundError, registerToolRuntime } from '@ca/tool-lifecycle';
import { BUILTIN_TOOL_NAMES } from './builtin-adapter-settings';
import { BuiltinToolError } from './builtin-tool-error';
import { BuiltinToolSource, createBuiltinAdapter, registerBuiltinAdapter } from './builtin-tool-source';
import { codeOf, folderResource, makeTemporaryFolder, removeTemporaryFolders } from './workspace.test-helper';

describe('BuiltinToolSource', () => {
  afterEach(removeTemporaryFolders);

  it('discovers every tool, sorted, with valid names, 2020-12 schemas and the documented capabilities', async () => {
    // Without the sandbox; command-run-sandbox.spec.ts pins the command's capability under it.
    const source = createBuiltinAdapter({ command: { sandbox: 'off' } });
    expect(source).toBeInstanceOf(BuiltinToolSource);
    expect(source).toMatchObject({ kind: 'builtin', id: 'builtin' });
    const tools = await source.discover();
    expect(tools.map((tool) => tool.name)).toEqual([...BUILTIN_TOOL_NAMES].sort());
    for (const tool of tools) {
      expect(isValidToolName(tool.name)).toBe(true);
      expect(tool.source).toBe('builtin');
      expect(tool.description.length).toBeGreaterThan(100);
      expect(tool.inputSchema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' });
      expect(tool.outputSchema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' });
    }
    const capability = Object.fromEntries(
      tools.map((tool) => [tool.name, [tool.capability.writes, tool.capability.checkpointable, tool.capability.openWorld]]),
    );
    expect(capability).toEqual({
      'builtin.command.run': [true, false, true],
      'builtin.fs.delete': [true, true, false],
      'builtin.fs.edit': [true, true, false],
      'builtin.fs.glob': [false, true, false],
      'builtin.fs.grep': [false, true, false],
      'builtin.fs.list': [false, true, false],
      'builtin.fs.read': [false, true, false],
      'builtin.fs.write': [true, true, false],
      'builtin.http.get': [false, true, true],
      'builtin.http.request': [true, false, true],
    });
  });

  it('offers only the enabled tools and refuses others by name', async () => {
    const source = createBuiltinAdapter({ id: 'readers', tools: ['builtin.fs.read', 'builtin.fs.grep'] });
    expect((await source.discover()).map((tool) => tool.name)).toEqual(['builtin.fs.grep', 'builtin.fs.read']);
    expect(source.get('builtin.fs.read').descriptor.name).toBe('builtin.fs.read');
    let thrown: unknown;
    try {
      source.get('builtin.fs.reed');
    } catch (error) {
      thrown = error;
    }
    // The same failure every source gives for an unknown name, with the close names it does offer.
    expect(ToolNotFoundError.isInstance(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: 'TOOL_NOT_FOUND', toolName: 'builtin.fs.reed', sourceId: 'readers', suggestions: ['builtin.fs.read'] });
    expect((thrown as Error).message).toMatch(/^Source 'readers' has no tool named 'builtin\.fs\.reed'\. Did you mean 'builtin\.fs\.read'\?/);
    expect(() => source.get('builtin.fs.write')).toThrow(
      expect.objectContaining({ name: 'ToolNotFoundError', code: 'TOOL_NOT_FOUND', toolName: 'builtin.fs.write' }),
    );
  });

  it('offers a tool the settings name twice once', async () => {
    const source = createBuiltinAdapter({ tools: ['builtin.fs.read', 'builtin.fs.list', 'builtin.fs.read'] });
    expect((await source.discover()).map((tool) => tool.name)).toEqual(['builtin.fs.list', 'builtin.fs.read']);
  });

  it.each([
    [{ tools: ['builtin.fs.format'] }, /unknown tool "builtin.fs.format"/],
    [{ files: { readMaxBytes: 0 } }, /files\.readMaxBytes: expected an integer ≥ 1/],
    [{ command: { allow: 'git' } }, /command\.allow: expected an array/],
    [{ command: { env: { A: 1 } } }, /command\.env/],
    [{ http: { maxRedirects: -1 } }, /http\.maxRedirects/],
    [{ undo: { directory: 'relative' } }, /undo\.directory: expected an absolute path/],
  ])('refuses invalid settings %p', (settings, message) => {
    const call = () => createBuiltinAdapter(settings as never);
    expect(call).toThrow(message);
    try {
      call();
    } catch (error) {
      expect(BuiltinToolError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'BUILTIN_INVALID_SETTINGS' });
    }
  });

  it('registers through DI and runs in a real runtime: read-only plans refuse writes, traces are kept', async () => {
    const work = await makeTemporaryFolder();
    await writeFile(join(work, 'hello.txt'), 'hello\n');
    const child = container.createChildContainer();
    const source = registerBuiltinAdapter(child, { tools: ['builtin.fs.read', 'builtin.fs.write'] });
    registerToolRuntime(child);
    const runtime = child.resolve(TOOL_RUNTIME);
    const discovered = await runtime.discover();
    expect(discovered.tools.map((tool) => tool.name)).toEqual(['builtin.fs.read', 'builtin.fs.write']);
    expect(child.resolveAll<unknown>(Symbol.for('ca.tool-lifecycle.ToolSource'))).toContain(source);

    await runtime.runPlan({ planId: 'plan-di', policy: { readOnly: true }, resources: [folderResource('work', work)] }, async (ctx) => {
      const read = await runtime.execute('builtin.fs.read', { path: 'hello.txt' }, ctx);
      expect(read).toMatchObject({ ok: true, output: { content: 'hello\n' } });
      const denied = await runtime.execute('builtin.fs.write', { path: 'hello.txt', content: 'x' }, ctx).catch((error: unknown) => error);
      expect(ToolAccessDeniedError.isInstance(denied)).toBe(true);
      expect(ctx.traces.map((trace) => [trace.toolName, trace.success])).toEqual([
        ['builtin.fs.read', true],
        ['builtin.fs.write', false],
      ]);
      expect(ctx.changes).toHaveLength(0);
    });
  });

  it('answers a direct execute with a non-object input with a coded failure', async () => {
    const tool = createBuiltinAdapter().get('builtin.fs.read');
    expect(codeOf(await tool.execute('nope', createExecutionContext()))).toBe('BUILTIN_INVALID_INPUT');
  });
});

describe('BuiltinToolError', () => {
  it('carries code, tool, plan, target and cause, and is recognised by its brand', () => {
    const cause = new Error('root');
    const error = new BuiltinToolError({ code: 'BUILTIN_NOT_FOUND', message: 'gone', toolName: 't', planId: 'p', target: '/x', cause });
    expect(error).toMatchObject({ name: 'BuiltinToolError', code: 'BUILTIN_NOT_FOUND', toolName: 't', planId: 'p', target: '/x', message: 'gone' });
    expect(error.cause).toBe(cause);
    expect(BuiltinToolError.isInstance(error)).toBe(true);
    expect(BuiltinToolError.isInstance({ ...error })).toBe(false);
    expect(BuiltinToolError.isInstance(Object.assign(new Error('x'), { [Symbol.for('ca.error.BuiltinToolError')]: true }))).toBe(true);
    expect(BuiltinToolError.isInstance(null)).toBe(false);
    expect(CaError.isInstance(error)).toBe(true);
  });
});
