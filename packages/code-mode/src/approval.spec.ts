import { MemoryCallJournal, ToolRuntime, canonicalJson, silentLogger, type ApprovalHandler, type ExecutionResult, type PlanOptions } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { createCodeMode, type CodeMode, type CodeModeError, type CodeRunOutput } from './index';

/** The error of a run that must have failed. */
function errorOf(result: ExecutionResult<CodeRunOutput>): CodeModeError {
  if (result.ok) throw new Error('expected a failed run');
  return result.error as CodeModeError;
}

const PROGRAM = `
  const a = await tools.files_read({ path: 'a' });
  const b = await tools.files_read({ path: 'b' });
  console.log('seen', Date.now(), Math.random());
  const issue = await tools.issues_create({ title: a.text + b.text });
  return { issue, random: Math.random() };`;

describe('approval inside a program', () => {
  let reads = 0;
  let writes = 0;
  const granted = new Set<string>();
  let runtime: ToolRuntime;
  let codeMode: CodeMode;
  const handler: ApprovalHandler = {
    requestApproval: (request) =>
      granted.has(`${request.toolName} ${canonicalJson(request.arguments)}`)
        ? { decision: 'approve', decidedBy: 'alice' }
        : { decision: 'deny', reason: 'nobody approved it', decidedBy: 'bridge' },
  };

  beforeAll(async () => {
    codeMode = createCodeMode({ runtime: () => runtime, pool: { size: 1 }, suspend: ({ descriptor }) => descriptor.capability.writes });
    runtime = new ToolRuntime({
      sources: [
        new InMemoryToolSource([
          new TestTool({ name: 'files.read', execute: (input: unknown) => (reads++, { text: (input as { path: string }).path.toUpperCase() }) }),
          new TestTool({ name: 'issues.create', capability: { writes: true, checkpointable: false }, execute: () => (writes++, { id: 7 }) }),
        ]),
        codeMode.source,
      ],
      approvalHandler: handler,
      logger: silentLogger,
    });
    await codeMode.warm();
  });
  afterAll(() => codeMode.close());
  beforeEach(() => {
    reads = 0;
    writes = 0;
    granted.clear();
  });

  const plans: [string, () => PlanOptions][] = [
    ["a plan with the runtime's memory journal", () => ({ policy: { approval: { capabilities: ['writes'] } } })],
    [
      'a plan with a journal of its own (as a durable plan has)',
      () => ({ policy: { approval: { capabilities: ['writes'] } }, journal: new MemoryCallJournal() }),
    ],
  ];

  it.each(plans)('suspends at the inner call that needs a person, and resumes by replay without making a call twice (%s)', async (_, options) => {
    await runtime.runPlan(options(), async (plan) => {
      const first = await codeMode.run(PROGRAM, plan, { step: 'call-1' });
      expect(first.ok).toBe(false);
      const error = errorOf(first);
      expect(error.code).toBe('CODE_APPROVAL_PENDING');
      expect(error.pending).toEqual({
        toolName: 'issues.create',
        input: { title: 'AB' },
        step: 'call-1/3',
        parentExecutionId: first.executionId,
        resumeStep: 'call-1#resume-3',
      });
      expect([reads, writes]).toEqual([2, 0]);
      const firstLogs = (first.output as CodeRunOutput).logs;

      // The person approves the inner call; the program runs again under the resume step.
      granted.add(`issues.create ${canonicalJson({ title: 'AB' })}`);
      const second = await codeMode.run(PROGRAM, plan, { step: error.pending?.resumeStep });
      expect(second).toMatchObject({ ok: true, output: { result: { issue: { id: 7 } } } });
      // No inner call ran twice; the clock and randomness were replayed.
      expect([reads, writes]).toEqual([2, 1]);
      expect((second.output as CodeRunOutput).logs).toEqual(firstLogs);
      const inner = plan.traces.filter((trace) => trace.parentExecutionId === second.executionId);
      expect(inner.map((trace) => [trace.toolName, trace.replayedFrom !== undefined])).toEqual([
        ['files.read', true],
        ['files.read', true],
        ['issues.create', false],
      ]);
      expect(inner[2]?.approval).toMatchObject({ decision: 'approved', decidedBy: 'alice' });
    });
  });

  it('a denied inner call is an exception the program can catch', async () => {
    await runtime.runPlan({ policy: { approval: { capabilities: ['writes'] } } }, async (plan) => {
      const first = await codeMode.run('try { await tools.issues_create({ title: "x" }); } catch (e) { return [e.code, e.denial, e.reason]; }', plan, {
        step: 'c2',
      });
      const pending = errorOf(first).pending;
      expect(pending?.step).toBe('c2/1');
      // Nobody approved: the runtime's handler denies, and the program sees the coded error.
      const second = await codeMode.run('try { await tools.issues_create({ title: "x" }); } catch (e) { return [e.code, e.denial, e.reason]; }', plan, {
        step: pending?.resumeStep,
      });
      expect((second.output as CodeRunOutput).result).toEqual(['TOOL_APPROVAL_DENIED', 'denied', 'nobody approved it']);
      expect(writes).toBe(0);
    });
  });

  it("without suspend, the program waits for the runtime's approval handler", async () => {
    const waiting = createCodeMode({ runtime: () => runtime2, pool: { size: 1 } });
    const runtime2: ToolRuntime = new ToolRuntime({
      sources: [
        new InMemoryToolSource([
          new TestTool({ name: 'issues.create', capability: { writes: true, checkpointable: false }, execute: () => (writes++, { id: 1 }) }),
        ]),
        waiting.source,
      ],
      approvalHandler: { requestApproval: () => new Promise((resolve) => setTimeout(() => resolve({ decision: 'approve', decidedBy: 'bob' }), 30)) },
      logger: silentLogger,
    });
    try {
      await runtime2.runPlan({ policy: { approval: { capabilities: ['writes'] } } }, async (plan) => {
        const result = await waiting.run('return await tools.issues_create({ title: "y" });', plan);
        expect(result).toMatchObject({ ok: true, output: { result: { id: 1 } } });
        expect(plan.traces.find((trace) => trace.toolName === 'issues.create')?.approval).toMatchObject({ decision: 'approved', decidedBy: 'bob' });
      });
    } finally {
      await waiting.close();
    }
  });
});
