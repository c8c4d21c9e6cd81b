import { ToolCancelledError } from '@ca/tool-context';
import { InMemoryToolSource, RecordingLogger, TestTool } from '../testing/index';
import {
  MemoryCallJournal,
  ToolExecutionError,
  ToolInvalidArgumentError,
  ToolJournalError,
  ToolOutcomeUnknownError,
  ToolRuntime,
  createSecretRedactionHook,
  type ApprovalHandler,
  type ApprovalRequest,
  type CallJournal,
  type JournalRecord,
  type ToolInstance,
  type ToolRuntimeSettings,
} from '../index';

/** The error a promise rejects with (fails the test when it resolves). */
async function failure<E>(promise: Promise<unknown>): Promise<E> {
  try {
    await promise;
  } catch (error) {
    return error as E;
  }
  throw new Error('expected the promise to reject');
}

/** A tool that counts its calls and returns the idempotency key it got. */
function counter(name: string, capability: { writes: boolean; idempotent?: boolean }, extra: Partial<ToolInstance> = {}) {
  const calls: string[] = [];
  const tool = new TestTool({
    name,
    capability,
    execute: (input: { n?: number }, ctx) => {
      calls.push(ctx.idempotencyKey as string);
      return { ok: true, output: { made: calls.length, key: ctx.idempotencyKey, n: input?.n } };
    },
  });
  Object.assign(tool, extra);
  return { tool, calls };
}

function runtimeOf(tools: ToolInstance[], settings: Partial<ToolRuntimeSettings> = {}): ToolRuntime {
  return new ToolRuntime({ sources: [new InMemoryToolSource(tools as TestTool[])], logger: new RecordingLogger(), ...settings });
}

/** The records of a journal whose process stopped while the last call was in flight: its outcome removed. */
function interruptedCopy(journal: MemoryCallJournal): JournalRecord[] {
  const records = journal.records();
  const last = records.at(-1) as JournalRecord;
  return [...records.slice(0, -1), { entry: last.entry, host: 'host-a pid 1', begunAt: '2026-01-01T00:00:00.000Z' }];
}

/** An approval handler that answers with `answer` and keeps the requests. */
function answering(answer: 'approve' | 'deny'): ApprovalHandler & { requests: ApprovalRequest[] } {
  const requests: ApprovalRequest[] = [];
  return {
    requests,
    requestApproval: async (request) => {
      requests.push(request);
      return answer === 'approve' ? { decision: 'approve', decidedBy: 'alice' } : { decision: 'deny', reason: 'it was sent already', decidedBy: 'alice' };
    },
  };
}

describe('the call journal', () => {
  it('records a call when it is decided (tool, argument hash, fingerprint, key, approval) and when it ends', async () => {
    const { tool } = counter('orders.create', { writes: true });
    const journal = new MemoryCallJournal({ host: 'host-a' });
    const runtime = runtimeOf([tool], { approvalHandler: answering('approve') });
    const ctx = runtime.createPlan({ planId: 'p1', journal, policy: { readOnly: false, requireCheckpoint: false, approval: { always: true } } });
    const result = await runtime.execute('orders.create', { n: 1 }, ctx, { step: 'buy' });
    const [record] = journal.records('p1');
    expect(record?.entry).toMatchObject({
      planId: 'p1',
      step: 'buy',
      key: result.trace.idempotencyKey,
      toolName: 'orders.create',
      argumentsHash: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      fingerprint: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      approval: { decision: 'approved', decidedBy: 'alice' },
      executionId: result.executionId,
    });
    expect(record?.host).toBe('host-a');
    expect(record?.outcome).toMatchObject({ kind: 'result', ok: true, output: { made: 1 }, executionId: result.executionId });
    // The arguments themselves are not journaled.
    expect(JSON.stringify(record?.entry)).not.toContain('"n"');
  });

  it('a plan made again in another runtime from the same records does not run the call: same result, its changes back, replayedFrom', async () => {
    const changes = [{ kind: 'create' as const, target: '/w/a.txt', summary: 'created', undo: { format: 'x', before: null } }];
    const writer = new TestTool({ name: 'files.write', capability: { writes: true, checkpointable: true }, changes, execute: () => ({ written: true }) });
    const first = new MemoryCallJournal();
    const runtime = runtimeOf([writer]);
    const ctx = runtime.createPlan({ planId: 'p2', journal: first });
    const made = await runtime.execute('files.write', { path: 'a.txt' }, ctx, { step: 's1' });
    expect(writer.count('execute')).toBe(1);

    const restarted = runtimeOf([writer]);
    const again = restarted.createPlan({ planId: 'p2', journal: new MemoryCallJournal({ records: first.records() }) });
    const replayed = await restarted.execute('files.write', { path: 'a.txt' }, again, { step: 's1' });
    expect(writer.count('execute')).toBe(1);
    expect(replayed).toMatchObject({ ok: true, output: { written: true } });
    expect(replayed.trace.replayedFrom).toBe(made.executionId);
    // The undo data came back with the change, attributed to the execution that made it: a checkpoint plan can still roll back.
    expect(again.changes).toEqual([expect.objectContaining({ target: '/w/a.txt', executionId: made.executionId, undo: { format: 'x', before: null } })]);
    // Replayed in the same plan, the change is not recorded twice.
    await runtime.execute('files.write', { path: 'a.txt' }, ctx, { step: 's1' });
    expect(ctx.changes).toHaveLength(1);
  });

  it('a failure the tool threw is journaled and thrown again on replay, with its code and message, without calling', async () => {
    let calls = 0;
    const tool = new TestTool({
      name: 'mail.send',
      capability: { writes: true },
      execute: () => {
        calls++;
        throw new Error('smtp refused');
      },
    });
    const journal = new MemoryCallJournal();
    const runtime = runtimeOf([tool]);
    const ctx = runtime.createPlan({ planId: 'p3', journal });
    const first = await failure<ToolExecutionError & { message: string }>(runtime.execute('mail.send', {}, ctx, { step: 'm' }));
    expect(ToolExecutionError.isInstance(first)).toBe(true);
    const restarted = runtimeOf([tool]);
    const again = restarted.createPlan({ planId: 'p3', journal: new MemoryCallJournal({ records: journal.records() }) });
    const replayed = await failure<ToolExecutionError & { trace: { replayedFrom?: string } }>(restarted.execute('mail.send', {}, again, { step: 'm' }));
    expect(calls).toBe(1);
    expect(ToolExecutionError.isInstance(replayed)).toBe(true);
    expect(replayed).toMatchObject({ code: 'TOOL_EXECUTION_FAILED', message: first.message, failure: 'threw' });
    expect(replayed.trace.replayedFrom).toBe((first as unknown as { trace: { executionId: string } }).trace.executionId);
  });

  it('a cancelled call is journaled as a cancellation (a step deadline), and replayed as ToolCancelledError', async () => {
    const tool = new TestTool({ name: 'slow', execute: () => new Promise(() => undefined) });
    const journal = new MemoryCallJournal();
    const runtime = runtimeOf([tool]);
    const ctx = runtime.createPlan({ planId: 'p4', journal });
    await expect(runtime.execute('slow', {}, ctx, { step: 's', timeoutMs: 20 })).rejects.toThrow(ToolCancelledError);
    const replayed = await failure<ToolCancelledError & { reason: string }>(runtime.execute('slow', {}, ctx, { step: 's', timeoutMs: 20 }));
    expect(ToolCancelledError.isInstance(replayed)).toBe(true);
    expect(replayed.reason).toBe('timed out after 20 ms');
    expect(tool.count('execute')).toBe(1);
  });

  it('an idempotent call in flight when its host stopped is run again with the same idempotency key', async () => {
    const { tool, calls } = counter('http.put', { writes: true, idempotent: true });
    const journal = new MemoryCallJournal();
    const first = runtimeOf([tool]);
    await first.execute('http.put', { n: 1 }, first.createPlan({ planId: 'p5', journal }), { step: 'put' });
    const resumed = runtimeOf([tool]);
    const result = await resumed.execute(
      'http.put',
      { n: 1 },
      resumed.createPlan({ planId: 'p5', journal: new MemoryCallJournal({ records: interruptedCopy(journal) }) }),
      { step: 'put' },
    );
    expect(calls).toHaveLength(2);
    expect(calls[1]).toBe(calls[0]);
    expect(result.trace.replayedFrom).toBeUndefined();
    expect(result.output).toMatchObject({ made: 2 });
  });

  it('a non-idempotent call in flight is never run again silently: a person is asked (outcome unknown, its key and host)', async () => {
    const { tool, calls } = counter('counter.add', { writes: true });
    const journal = new MemoryCallJournal();
    const planRuntime = runtimeOf([tool]);
    await planRuntime.execute('counter.add', { n: 1 }, planRuntime.createPlan({ planId: 'p6', journal }), { step: 'add' });
    const records = interruptedCopy(journal);

    // Denied: the step fails with TOOL_OUTCOME_UNKNOWN, the tool is not called.
    const denier = answering('deny');
    const denied = runtimeOf([tool], { approvalHandler: denier });
    const kept = new MemoryCallJournal({ records });
    const deniedCtx = denied.createPlan({ planId: 'p6', journal: kept });
    const error = await failure<ToolOutcomeUnknownError>(denied.execute('counter.add', { n: 1 }, deniedCtx, { step: 'add' }));
    expect(ToolOutcomeUnknownError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'TOOL_OUTCOME_UNKNOWN', step: 'add', host: 'host-a pid 1', decidedBy: 'alice', reason: 'it was sent already' });
    expect(calls).toHaveLength(1);
    expect(denier.requests).toEqual([
      expect.objectContaining({
        toolName: 'counter.add',
        step: 'add',
        idempotencyKey: records[0]?.entry.key,
        outcomeUnknown: { host: 'host-a pid 1' },
        reason: expect.objectContaining({ source: 'resume', match: 'outcome-unknown', text: expect.stringContaining('outcome unknown') }),
        arguments: { n: 1 },
      }),
    ]);
    // The decision is journaled: the same step made again fails the same way without asking again.
    await expect(denied.execute('counter.add', { n: 1 }, deniedCtx, { step: 'add' })).rejects.toMatchObject({ code: 'TOOL_OUTCOME_UNKNOWN' });
    expect(denier.requests).toHaveLength(1);

    // Approved: run again, once, with the same key.
    const approver = answering('approve');
    const approved = runtimeOf([tool], { approvalHandler: approver });
    const result = await approved.execute('counter.add', { n: 1 }, approved.createPlan({ planId: 'p6', journal: new MemoryCallJournal({ records }) }), {
      step: 'add',
    });
    expect(result.output).toMatchObject({ made: 2 });
    expect(calls).toEqual([calls[0], calls[0]]);
    expect(approver.requests).toHaveLength(1);

    // Nobody to ask: refused, never run.
    const alone = runtimeOf([tool]);
    await expect(
      alone.execute('counter.add', { n: 1 }, alone.createPlan({ planId: 'p6', journal: new MemoryCallJournal({ records }) }), { step: 'add' }),
    ).rejects.toMatchObject({ code: 'TOOL_OUTCOME_UNKNOWN', decidedBy: 'runtime' });
    expect(calls).toHaveLength(2);
  });

  it("the tool's reconciliation decides when it can: done (its result, no call), not done (called), unknown (a person)", async () => {
    for (const [found, expectedCalls, asked] of [
      [{ outcome: 'done', result: { ok: true, output: { reconciled: true } } }, 1, 0],
      [{ outcome: 'not-done' }, 2, 0],
      [{ outcome: 'unknown' }, 2, 1],
    ] as const) {
      const seen: unknown[] = [];
      const { tool, calls } = counter('payments.charge', { writes: true }, {
        reconcile: async (_input: unknown, ctx: { idempotencyKey?: string }, call: unknown) => {
          seen.push({ key: ctx.idempotencyKey, call });
          return found;
        },
      } as Partial<ToolInstance>);
      const journal = new MemoryCallJournal();
      const first = runtimeOf([tool]);
      await first.execute('payments.charge', {}, first.createPlan({ planId: 'p7', journal }), { step: 'charge' });
      const approver = answering('approve');
      const resumed = runtimeOf([tool], { approvalHandler: approver });
      const result = await resumed.execute(
        'payments.charge',
        {},
        resumed.createPlan({ planId: 'p7', journal: new MemoryCallJournal({ records: interruptedCopy(journal) }) }),
        {
          step: 'charge',
        },
      );
      expect(calls).toHaveLength(expectedCalls);
      expect(approver.requests).toHaveLength(asked);
      expect(seen).toEqual([{ key: calls[0], call: { idempotencyKey: calls[0], host: 'host-a pid 1', begunAt: '2026-01-01T00:00:00.000Z' } }]);
      if (found.outcome === 'done') expect(result.output).toEqual({ reconciled: true });
    }
  });

  it("the service's resume settings decide first: retry a tool the other side dedups, ask about one that claims to be idempotent", async () => {
    const { tool: post, calls: posts } = counter('http.post', { writes: true });
    const { tool: claims, calls: claimed } = counter('shady.idempotent', { writes: true, idempotent: true });
    const journal = new MemoryCallJournal();
    const first = runtimeOf([post, claims]);
    const ctx = first.createPlan({ planId: 'p8', journal });
    await first.execute('http.post', {}, ctx, { step: 'a' });
    const afterFirst = interruptedCopy(journal);
    await first.execute('shady.idempotent', {}, ctx, { step: 'b' });
    const afterSecond = interruptedCopy(journal);
    const settings = {
      options: {
        resume: [
          { tools: 'http.*', interrupted: 'retry' as const },
          { tools: 'shady.*', interrupted: 'ask' as const },
        ],
      },
    };
    const retried = runtimeOf([post, claims], settings);
    await retried.execute('http.post', {}, retried.createPlan({ planId: 'p8', journal: new MemoryCallJournal({ records: afterFirst }) }), { step: 'a' });
    expect(posts).toEqual([posts[0], posts[0]]);
    const asking = runtimeOf([post, claims], settings);
    await expect(
      asking.execute('shady.idempotent', {}, asking.createPlan({ planId: 'p8', journal: new MemoryCallJournal({ records: afterSecond }) }), { step: 'b' }),
    ).rejects.toMatchObject({ code: 'TOOL_OUTCOME_UNKNOWN' });
    expect(claimed).toHaveLength(1);
    expect(() => runtimeOf([], { options: { resume: [{ tools: 'x', interrupted: 'maybe' as never }] } })).toThrow(
      /resume\[0\]\.interrupted must be 'retry' or 'ask'/,
    );
  });

  it('an entry says when the resume rules would run the call again anyway (retrySafe), so that a journal may write it once', async () => {
    const { tool: read } = counter('docs.read', { writes: false });
    const { tool: put } = counter('http.put', { writes: true, idempotent: true });
    const { tool: add } = counter('counter.add', { writes: true });
    const { tool: post } = counter('http.post', { writes: true });
    const { tool: shady } = counter('shady.idempotent', { writes: true, idempotent: true });
    const { tool: reconciled } = counter('mail.send', { writes: false }, { reconcile: async () => ({ outcome: 'unknown' as const }) });
    const journal = new MemoryCallJournal();
    const runtime = runtimeOf([read, put, add, post, shady, reconciled], {
      options: {
        resume: [
          { tools: 'http.post', interrupted: 'retry' as const },
          { tools: 'shady.*', interrupted: 'ask' as const },
        ],
      },
    });
    const ctx = runtime.createPlan({ planId: 'p-safe', journal });
    for (const name of ['docs.read', 'http.put', 'counter.add', 'http.post', 'shady.idempotent', 'mail.send'])
      await runtime.execute(name, {}, ctx, { step: name });
    const safe = Object.fromEntries(journal.records().map((record) => [record.entry.toolName, record.entry.retrySafe === true]));
    expect(safe).toEqual({
      'docs.read': true,
      'http.put': true,
      'counter.add': false,
      'http.post': true,
      'shady.idempotent': false,
      'mail.send': false,
    });
  });

  it('in a plan with a journal of its own every call needs a step id; other plans are not affected', async () => {
    const { tool } = counter('echo', { writes: false });
    const runtime = runtimeOf([tool]);
    const journaled = runtime.createPlan({ planId: 'p9', journal: new MemoryCallJournal() });
    const error = await failure<ToolInvalidArgumentError>(runtime.execute('echo', {}, journaled));
    expect(ToolInvalidArgumentError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(/options\.step must be a step id in plan 'p9', which keeps a journal \(memory\)/);
    expect((await runtime.execute('echo', {}, runtime.createPlan())).ok).toBe(true);
    expect(() => runtime.createPlan({ journal: {} as CallJournal })).toThrow(/journal must be a CallJournal/);
  });

  it('a journal that fails stops the call before the tool runs (TOOL_JOURNAL_FAILED, naming the journal)', async () => {
    const { tool, calls } = counter('counter.add', { writes: true });
    const broken: CallJournal = {
      description: 'broken store',
      record: async () => {
        throw new Error('connection refused');
      },
    };
    const runtime = runtimeOf([tool]);
    const error = await failure<ToolJournalError>(runtime.execute('counter.add', {}, runtime.createPlan({ planId: 'p10', journal: broken }), { step: 's' }));
    expect(ToolJournalError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'TOOL_JOURNAL_FAILED', step: 's', journal: 'broken store' });
    expect(error.message).toContain('connection refused');
    expect(calls).toHaveLength(0);
  });

  it('holds no secret the trace would not: error messages redacted, outputs as the guardrail left them, no arguments', async () => {
    const secret = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
    const leaky = new TestTool({ name: 'leaky', execute: (input: { token: string }) => ({ echoed: `token=${input.token}` }) });
    const failing = new TestTool({
      name: 'failing',
      execute: () => {
        throw new Error(`request failed with Authorization: Bearer ${secret}`);
      },
    });
    const journal = new MemoryCallJournal();
    const runtime = runtimeOf([leaky, failing], { hooks: [createSecretRedactionHook()] });
    const ctx = runtime.createPlan({ planId: 'p11', journal });
    const shown = await runtime.execute('leaky', { token: secret }, ctx, { step: 'a' });
    await runtime.execute('failing', {}, ctx, { step: 'b' }).catch(() => undefined);
    const text = JSON.stringify(journal.records());
    expect(JSON.stringify(shown.output)).not.toContain(secret);
    expect(text).not.toContain(secret);
    expect(text).toContain('REDACTED');
  });
});
