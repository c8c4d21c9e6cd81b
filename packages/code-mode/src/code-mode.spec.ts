import { ToolRuntime, silentLogger } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { createCodeMode, type CodeMode, type CodeRunOutput } from './index';

const files: Record<string, string> = { 'a.md': 'uses oldApi()', 'b.md': 'fine', 'c.md': 'oldApi again' };

function tools(): TestTool[] {
  return [
    new TestTool({
      name: 'fs.list',
      description: 'Lists the files. Each has a path.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      execute: () => Object.keys(files).map((path) => ({ path })),
    }),
    new TestTool({
      name: 'fs.read',
      description: 'Reads one file.',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
      execute: (input: unknown) => {
        const text = files[(input as { path: string }).path];
        if (text === undefined) throw new Error(`no file ${(input as { path: string }).path}`);
        return { text };
      },
    }),
    new TestTool({
      name: 'issues.create',
      description: 'Opens an issue.',
      capability: { writes: true, checkpointable: false },
      inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
      execute: (input: unknown) => ({ id: (input as { title: string }).title.length }),
    }),
  ];
}

describe('code.run', () => {
  let runtime: ToolRuntime;
  let codeMode: CodeMode;

  beforeAll(async () => {
    codeMode = createCodeMode({ runtime: () => runtime, pool: { size: 1 } });
    runtime = new ToolRuntime({ sources: [new InMemoryToolSource(tools()), codeMode.source], logger: silentLogger });
    await codeMode.warm();
  });
  afterAll(() => codeMode.close());

  it('runs a program whose every call is an execution of the plan, traced with code.run as its parent', async () => {
    await runtime.runPlan({}, async (plan) => {
      const result = await codeMode.run(
        `const found = [];
         for (const { path } of await tools.fs_list()) {
           const { text } = await tools.fs_read({ path });
           if (text.includes('oldApi')) found.push(path);
         }
         console.log('checked', found.length);
         return found;`,
        plan,
      );
      expect(result).toMatchObject({ ok: true, output: { result: ['a.md', 'c.md'], logs: ['checked 2'] } });
      const inner = plan.traces.filter((trace) => trace.toolName !== 'code.run');
      expect(inner.map((trace) => trace.toolName)).toEqual(['fs.list', 'fs.read', 'fs.read', 'fs.read']);
      expect(new Set(inner.map((trace) => trace.parentExecutionId))).toEqual(new Set([result.executionId]));
    });
  });

  it('accepts TypeScript, and gives a refused or failed call to the program as an error with the coded fields', async () => {
    await runtime.runPlan({ policy: { readOnly: true } }, async (plan) => {
      const result = await codeMode.run(
        `type Caught = { code: string; toolName: string };
         const caught: Caught[] = [];
         try { await tools.issues_create({ title: 'x' }); } catch (error) { caught.push({ code: (error as any).code, toolName: (error as any).toolName }); }
         try { await tools.fs_read({ path: 'missing.md' }); } catch (error: any) { caught.push({ code: error.code, toolName: error.toolName }); }
         try { await tools.fs_read({ nope: 1 } as any); } catch (error: any) { caught.push({ code: error.code, toolName: error.toolName }); }
         return caught;`,
        plan,
      );
      expect((result.output as CodeRunOutput).result).toEqual([
        { code: 'TOOL_ACCESS_DENIED', toolName: 'issues.create' },
        { code: 'TOOL_EXECUTION_FAILED', toolName: 'fs.read' },
        { code: 'TOOL_SCHEMA_VALIDATION_FAILED', toolName: 'fs.read' },
      ]);
    });
  });

  it('ends with a coded error when the program throws, and gives Date and Math.random of the host', async () => {
    await runtime.runPlan({}, async (plan) => {
      const thrown = await codeMode.run('await tools.fs_read({ path: "missing.md" });', plan);
      expect(thrown).toMatchObject({ ok: false, error: { code: 'CODE_PROGRAM_FAILED', thrown: { code: 'TOOL_EXECUTION_FAILED', toolName: 'fs.read' } } });
      const first = await codeMode.run('return [Date.now(), new Date().getTime(), Math.random()];', plan, { step: 's1' });
      const again = await codeMode.run('return [Date.now(), new Date().getTime(), Math.random()];', plan, { step: 's1' });
      expect(again.output).toEqual(first.output);
      const [now, date] = (first.output as CodeRunOutput).result as number[];
      expect(now).toBe(date);
    });
  });

  it('describes itself in a few lines: how to call, how a failed call shows, its own limits, then the declarations', async () => {
    const limited = createCodeMode({ runtime: () => runtime, limits: { timeMs: 2_500, maxCalls: 7, maxConcurrentCalls: 3 } });
    try {
      const text = await limited.description();
      const declarations = await limited.declarations();
      expect(text.endsWith(`\n${declarations}`)).toBe(true);
      const rules = text.slice(0, text.length - declarations.length - 1);
      expect(rules).toContain('`await tools.<ident>(input)`');
      expect(rules).toContain('throws an Error with .code');
      expect(rules).toMatch(/Limits: 2500 ms, 64 MiB, 7 calls, 3 at once, 64000 chars of output;/);
      expect(rules.split('\n')).toHaveLength(1);
      expect(declarations).toContain('declare function search(query: string, o?: { limit?: number })');
      expect(declarations).toContain('declare function describe(name: string)');
      // One unindented line a tool: an indent would cost a token a tool in the JSON the model is sent.
      expect(declarations).toContain('\n/** Lists the files. */ fs_list(i?: {}): Promise<any>;\n');
    } finally {
      await limited.close();
    }
  });

  it('declares the tools compactly, and finds and describes them from the program', async () => {
    const text = await codeMode.declarations();
    expect(text).toContain('/** Lists the files. */ fs_list(i?: {}): Promise<any>;');
    expect(text).toContain('fs_read(i: { path: string }): Promise<any>;');
    expect(text).not.toContain('code_run');
    await runtime.runPlan({}, async (plan) => {
      const result = await codeMode.run(
        'const hits = await search("open an issue"); const d = await describe(hits[0].name); return [hits[0].ident, d.declaration];',
        plan,
      );
      expect((result.output as CodeRunOutput).result).toEqual(['issues_create', 'issues_create(i: { title: string }): Promise<any>;']);
    });
  });
});
