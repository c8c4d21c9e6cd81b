import { MemoryApprovalStore, ToolRuntime, fingerprintTool, silentLogger, type ApprovalHandler } from '@ca/tool-lifecycle';
import { InMemoryToolSource, TestTool } from '@ca/tool-lifecycle/testing';
import { FrameworkApprovals } from './framework-approvals';

const KEY = 'an approval key of at least thirty-two bytes, for tests';
const write = new TestTool({ name: 'notes.write', capability: { writes: true, checkpointable: true } });
const read = new TestTool({ name: 'notes.read', capability: { writes: false } });

function runtimeWith(approvals: FrameworkApprovals, store?: MemoryApprovalStore): ToolRuntime {
  return new ToolRuntime({
    sources: [new InMemoryToolSource([write, read])],
    logger: silentLogger,
    approvalHandler: approvals,
    ...(store === undefined ? {} : { approvalStore: store, approvalKey: KEY }),
    options: { rules: [{ name: 'ask-read-secret', decision: 'ask', tools: 'notes.read', arguments: { '/path': { glob: 'secret/**' } } }] },
  });
}

describe('FrameworkApprovals', () => {
  it('foresees the runtime: the plan policy, an ask rule on the arguments, nothing else', async () => {
    const approvals = new FrameworkApprovals({
      rules: [{ name: 'ask-read-secret', decision: 'ask', tools: 'notes.read', arguments: { '/path': { glob: 'secret/**' } } }],
    });
    const runtime = runtimeWith(approvals);
    await runtime.runPlan({ policy: { approval: { capabilities: ['writes'] } } }, async (plan) => {
      expect(await approvals.needsApproval(write.descriptor, {}, plan)).toBe(true);
      expect(await approvals.needsApproval(read.descriptor, { path: 'public/a' }, plan)).toBe(false);
      expect(await approvals.needsApproval(read.descriptor, { path: 'secret/a' }, plan)).toBe(true);
    });
    await runtime.runPlan({}, async (plan) => {
      expect(await approvals.needsApproval(write.descriptor, {}, plan)).toBe(false);
    });
  });

  it('foresees a sandboxed tool as the runtime reads it: it writes in a plain plan, nothing in a read-only one', async () => {
    const approvals = new FrameworkApprovals();
    const runtime = runtimeWith(approvals);
    const command = {
      ...write.descriptor,
      name: 'builtin.command.run',
      capability: { ...write.descriptor.capability, destructive: true },
      sandboxed: { overlay: true },
    };
    await runtime.runPlan({ policy: { approval: { capabilities: ['destructive'] } } }, async (plan) => {
      expect(await approvals.needsApproval(command, {}, plan)).toBe(true);
    });
    await runtime.runPlan({ policy: { readOnly: true, approval: { capabilities: ['destructive'] } } }, async (plan) => {
      expect(await approvals.needsApproval(command, {}, plan)).toBe(false);
    });
  });

  it('answers the runtime with a grant bound to the call, once; a withdrawn or mismatched grant answers nothing', async () => {
    const approvals = new FrameworkApprovals();
    const runtime = runtimeWith(approvals);
    await runtime.runPlan({ policy: { approval: { always: true } } }, async (plan) => {
      const revoke = approvals.grant(plan, 'notes.write', { text: 'a' }, { scope: 'once', decidedBy: 'alice' });
      await expect(runtime.execute('notes.write', { text: 'b' }, plan)).rejects.toMatchObject({ code: 'TOOL_APPROVAL_DENIED' });
      expect((await runtime.execute('notes.write', { text: 'a' }, plan)).trace.approval).toMatchObject({
        decision: 'approved',
        decidedBy: 'alice',
        scope: 'once',
      });
      await expect(runtime.execute('notes.write', { text: 'a' }, plan)).rejects.toMatchObject({ code: 'TOOL_APPROVAL_DENIED' });
      revoke();
      const withdrawn = approvals.grant(plan, 'notes.write', { text: 'c' }, { scope: 'once', decidedBy: 'alice' });
      withdrawn();
      await expect(runtime.execute('notes.write', { text: 'c' }, plan)).rejects.toMatchObject({ code: 'TOOL_APPROVAL_DENIED' });
      approvals.grant(plan, 'notes.write', { text: 'd' }, { scope: 'once', decidedBy: 'bob', denied: { reason: 'no' } });
      const denied = await runtime.execute('notes.write', { text: 'd' }, plan).catch((error: { trace: unknown }) => error.trace);
      expect(denied).toMatchObject({ approval: { decision: 'denied', decidedBy: 'bob', reason: 'no' } });
    });
  });

  it('asks the fallback for a call no framework approved', async () => {
    const asked: string[] = [];
    const fallback: ApprovalHandler = { requestApproval: (request) => (asked.push(request.toolName), { decision: 'approve', decidedBy: 'terminal' }) };
    const approvals = new FrameworkApprovals({ fallback });
    const runtime = runtimeWith(approvals);
    await runtime.runPlan({ policy: { approval: { always: true } } }, async (plan) => {
      expect((await runtime.execute('notes.write', {}, plan)).trace.approval?.decidedBy).toBe('terminal');
      expect(asked).toEqual(['notes.write']);
    });
  });

  it('a tool approval for the rest of the plan is remembered, and read back from the store in another runtime', async () => {
    const store = new MemoryApprovalStore();
    const approvals = new FrameworkApprovals({ store });
    const runtime = runtimeWith(approvals, store);
    await runtime.runPlan({ planId: 'p-1', policy: { approval: { capabilities: ['writes'] } } }, async (plan) => {
      approvals.grant(plan, 'notes.write', {}, { scope: 'tool', decidedBy: 'alice' });
      await runtime.execute('notes.write', {}, plan);
      expect(await approvals.needsApproval(write.descriptor, { other: 1 }, plan)).toBe(false);
    });
    const later = new FrameworkApprovals({ store });
    const runtime2 = runtimeWith(later, store);
    await runtime2.runPlan({ planId: 'p-1', policy: { approval: { capabilities: ['writes'] } } }, async (plan) => {
      expect(await later.needsApproval(write.descriptor, {}, plan)).toBe(false);
      expect((await runtime2.execute('notes.write', {}, plan)).trace.approval).toMatchObject({ remembered: true, scope: 'tool' });
      const records = (await store.load('p-1')) as { fingerprint: string }[];
      expect(records[0]!.fingerprint).toBe(fingerprintTool(write.descriptor));
    });
  });
});
