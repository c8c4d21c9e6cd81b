import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ToolCancelledError, type PlanContext } from '@ca/tool-context';
import { InMemoryToolSource, RecordingLogger, TestTool } from '../testing/index';
// The package entry first: it loads reflect-metadata, which tsyringe needs.
import {
  APPROVAL_HANDLER,
  MemoryApprovalStore,
  TOOL_RUNTIME,
  TOOL_SOURCE,
  ToolAccessDeniedError,
  ToolApprovalDeniedError,
  ToolInvalidArgumentError,
  ToolPlanEndedError,
  ToolRuntime,
  fingerprintTool,
  registerToolRuntime,
  type ApprovalContext,
  type ApprovalDecision,
  type ApprovalHandler,
  type ApprovalRecord,
  type ApprovalRequest,
  type ApprovalStore,
  type ToolRuntimeOptions,
  type ToolRuntimeSettings,
} from '../index';
import { container } from 'tsyringe';

const KEY = 'an approval key of at least 32 bytes, kept secret';

const pathSchema = {
  type: 'object',
  properties: { path: { type: 'string' }, content: { type: 'string' } },
  required: ['path'],
  additionalProperties: false,
} as const;

/**
 * The service's side of approval in these tests: answers with what `answer`
 * returns, and keeps every request and the context it came with.
 */
class ScriptedApprovals implements ApprovalHandler {
  readonly requests: ApprovalRequest[] = [];
  readonly contexts: ApprovalContext[] = [];

  constructor(private readonly answer: (request: ApprovalRequest, context: ApprovalContext) => ApprovalDecision | Promise<ApprovalDecision>) {}

  requestApproval(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalDecision> {
    this.requests.push(request);
    this.contexts.push(context);
    return Promise.resolve(this.answer(request, context));
  }
}

/** A handler that leaves every request pending until the test answers it. */
class PendingApprovals implements ApprovalHandler {
  readonly pending: { request: ApprovalRequest; context: ApprovalContext; answer: (decision: ApprovalDecision) => void }[] = [];
  private waiters: (() => void)[] = [];

  requestApproval(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalDecision> {
    return new Promise((resolve) => {
      this.pending.push({ request, context, answer: resolve });
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  async until(count: number): Promise<void> {
    while (this.pending.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

function writer(name = 'files.write', execute?: (input: unknown) => unknown): TestTool {
  return new TestTool({
    name,
    capability: { writes: true, checkpointable: false, destructive: true, openWorld: false },
    inputSchema: pathSchema,
    ...(execute === undefined ? {} : { execute }),
  });
}

function reader(name = 'files.read'): TestTool {
  return new TestTool({ name, capability: { writes: false, openWorld: false }, inputSchema: pathSchema });
}

function setup(tools: TestTool[], settings: Omit<ToolRuntimeSettings, 'sources' | 'logger'> = {}, options: ToolRuntimeOptions = {}) {
  const logger = new RecordingLogger();
  const source = new InMemoryToolSource(tools);
  const runtime = new ToolRuntime({ sources: [source], logger, options, ...settings });
  return { runtime, logger, source };
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; trace?: unknown; denial?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the promise to reject');
}

const asksForWrites = { approval: { capabilities: ['writes'] as const } };

describe('approval in the pipeline', () => {
  it('asks after the capability check and the input validation, before the call, with the tool, arguments, capability and fingerprint', async () => {
    const order: string[] = [];
    const tool = writer('files.write', () => {
      order.push('tool ran');
      return 'written';
    });
    const handler = new ScriptedApprovals(() => {
      order.push('asked');
      return { decision: 'approve', decidedBy: 'alice' };
    });
    const { runtime } = setup([tool], { approvalHandler: handler });

    const readOnly = runtime.createPlan({ planId: 'read-only', policy: { readOnly: true, ...asksForWrites } });
    const refused = await rejection(runtime.execute('files.write', { path: 'a' }, readOnly));
    expect(ToolAccessDeniedError.isInstance(refused)).toBe(true);

    const ctx = runtime.createPlan({ planId: 'asks', policy: asksForWrites });
    const invalid = await runtime.execute('files.write', { path: 42 }, ctx);
    expect(invalid.ok).toBe(false);
    expect(handler.requests).toEqual([]);

    const result = await runtime.execute('files.write', { path: 'notes.md', content: 'hi' }, ctx);
    expect(result).toMatchObject({ ok: true, output: 'written' });
    expect(order).toEqual(['asked', 'tool ran']);
    const [request] = handler.requests;
    expect(request).toMatchObject({
      id: '1',
      planId: 'asks',
      executionId: result.executionId,
      toolName: 'files.write',
      arguments: { path: 'notes.md', content: 'hi' },
      capability: { writes: true, destructive: true, checkpointable: false, openWorld: false, idempotent: false },
      source: 'custom',
      reason: { source: 'policy', match: 'writes', text: 'the plan asks before tools that write' },
    });
    expect(request?.fingerprint).toBe(fingerprintTool(tool.descriptor));
    expect(Object.isFrozen(request)).toBe(true);
    expect(result.trace.approval).toEqual({ decision: 'approved', decidedBy: 'alice', scope: 'once', waitedMs: expect.any(Number), requestId: '1' });
  });

  it('does not ask for a call the policy does not cover', async () => {
    const handler = new ScriptedApprovals(() => ({ decision: 'approve' }));
    const { runtime } = setup([reader()], { approvalHandler: handler });
    const ctx = runtime.createPlan({ policy: asksForWrites });
    const result = await runtime.execute('files.read', { path: 'a' }, ctx);
    expect(result.ok).toBe(true);
    expect(handler.requests).toHaveLength(0);
    expect(result.trace.approval).toBeUndefined();
  });

  it.each([
    [{ always: true }, 'files.read', 'always', 'the plan asks before every call'],
    [{ tools: ['files.*'] }, 'files.read', 'files.*', "the plan asks before tools matching 'files.*'"],
    [{ tools: ['files.?ead'] }, 'files.read', 'files.?ead', "the plan asks before tools matching 'files.?ead'"],
    [{ capabilities: ['destructive'] as const }, 'files.write', 'destructive', 'the plan asks before tools that may destroy data'],
  ])('asks as the policy %p says', async (approval, toolName, match, text) => {
    const handler = new ScriptedApprovals(() => ({ decision: 'approve' }));
    const { runtime } = setup([reader(), writer()], { approvalHandler: handler });
    const ctx = runtime.createPlan({ policy: { approval } });
    await runtime.execute(toolName, { path: 'a' }, ctx);
    expect(handler.requests.map((request) => request.reason)).toEqual([{ source: 'policy', match, text }]);
  });

  it('a denied call never reaches the tool: ToolApprovalDeniedError with who and why, in the error and the trace', async () => {
    const tool = writer();
    const handler = new ScriptedApprovals(() => ({ decision: 'deny', reason: 'not on a Friday', decidedBy: 'bob' }));
    const { runtime } = setup([tool], { approvalHandler: handler });
    const ctx = runtime.createPlan({ planId: 'friday', policy: asksForWrites });
    const error = await rejection(runtime.execute('files.write', { path: 'a' }, ctx));
    expect(ToolApprovalDeniedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'TOOL_APPROVAL_DENIED',
      denial: 'denied',
      decidedBy: 'bob',
      reason: 'not on a Friday',
      requestId: '1',
      toolName: 'files.write',
      planId: 'friday',
    });
    expect(error.message).toBe(
      "Tool 'files.write' in plan 'friday' was denied by bob: not on a Friday. The tool did not run. Change the call, or ask for approval again.",
    );
    expect(tool.count('execute')).toBe(0);
    expect(ctx.traces).toHaveLength(1);
    expect(ctx.traces[0]).toMatchObject({
      success: false,
      error: { code: 'TOOL_APPROVAL_DENIED' },
      approval: { decision: 'denied', decidedBy: 'bob', reason: 'not on a Friday', requestId: '1' },
    });
    expect(error.trace).toBe(ctx.traces[0]);
  });

  it('approve once asks again on the next call', async () => {
    const handler = new ScriptedApprovals(() => ({ decision: 'approve', scope: 'once' }));
    const { runtime } = setup([writer()], { approvalHandler: handler });
    const ctx = runtime.createPlan({ policy: asksForWrites });
    await runtime.execute('files.write', { path: 'a' }, ctx);
    await runtime.execute('files.write', { path: 'a' }, ctx);
    expect(handler.requests.map((request) => request.id)).toEqual(['1', '2']);
    expect(ctx.traces.map((trace) => trace.approval?.decidedBy)).toEqual(['approval handler', 'approval handler']);
  });

  it('approve for the tool: not asked again in the plan whatever the arguments, asked in another plan, and again when the definition changes', async () => {
    const handler = new ScriptedApprovals(() => ({ decision: 'approve', scope: 'tool', decidedBy: 'carol' }));
    const { runtime, source } = setup([writer()], { approvalHandler: handler });
    const ctx = runtime.createPlan({ policy: asksForWrites });
    await runtime.execute('files.write', { path: 'a' }, ctx);
    const second = await runtime.execute('files.write', { path: 'b', content: 'other' }, ctx);
    expect(handler.requests).toHaveLength(1);
    expect(second.trace.approval).toEqual({ decision: 'approved', decidedBy: 'carol', scope: 'tool', remembered: true, waitedMs: 0 });

    await runtime.execute('files.write', { path: 'a' }, runtime.createPlan({ policy: asksForWrites }));
    expect(handler.requests).toHaveLength(2);

    // The source widens the tool's schema: what was approved is not what runs now.
    source.add(
      new TestTool({
        name: 'files.write',
        capability: { writes: true, checkpointable: false, destructive: true, openWorld: false },
        inputSchema: { ...pathSchema, properties: { ...pathSchema.properties, mode: { type: 'string' } } },
      }),
    );
    await runtime.execute('files.write', { path: 'a' }, ctx);
    expect(handler.requests).toHaveLength(3);
    expect(handler.requests[2]?.fingerprint).not.toBe(handler.requests[0]?.fingerprint);
  });

  it('approve the call: the same arguments in any key order are not asked again; a changed argument asks again', async () => {
    const handler = new ScriptedApprovals(() => ({ decision: 'approve', scope: 'call' }));
    const { runtime } = setup([writer()], { approvalHandler: handler });
    const ctx = runtime.createPlan({ policy: asksForWrites });
    await runtime.execute('files.write', { path: 'a', content: 'x' }, ctx);
    const same = await runtime.execute('files.write', { content: 'x', path: 'a' }, ctx);
    expect(handler.requests).toHaveLength(1);
    expect(same.trace.approval).toMatchObject({ decision: 'approved', scope: 'call', remembered: true });
    await runtime.execute('files.write', { path: 'a', content: 'y' }, ctx);
    expect(handler.requests).toHaveLength(2);
    expect(handler.requests[1]?.arguments).toEqual({ path: 'a', content: 'y' });
  });

  it('with no handler, a call that needs approval fails closed, saying how to get one', async () => {
    const tool = writer();
    const { runtime } = setup([tool]);
    const ctx = runtime.createPlan({ planId: 'unattended', policy: asksForWrites });
    const error = await rejection(runtime.execute('files.write', { path: 'a' }, ctx));
    expect(error).toMatchObject({ code: 'TOOL_APPROVAL_DENIED', denial: 'no-handler' });
    expect(error.message).toContain("Tool 'files.write' in plan 'unattended' needs approval (the plan asks before tools that write), but nobody can be asked");
    expect(error.message).toContain('ApprovalHandler');
    expect(tool.count('execute')).toBe(0);
    expect(ctx.traces[0]?.approval).toEqual({ decision: 'denied', decidedBy: 'runtime', waitedMs: 0 });
  });

  it('cancelling the plan while a request is pending ends the wait, aborts the handler signal and runs nothing', async () => {
    const tool = writer();
    const handler = new PendingApprovals();
    const { runtime } = setup([tool], { approvalHandler: handler });
    const ctx = runtime.createPlan({ policy: asksForWrites });
    const running = rejection(runtime.execute('files.write', { path: 'a' }, ctx));
    await handler.until(1);
    const signal = handler.pending[0]!.context.signal;
    expect(signal.aborted).toBe(false);
    ctx.cancellationToken.cancel('stop everything');
    const error = await running;
    expect(ToolCancelledError.isInstance(error)).toBe(true);
    expect((error as ToolCancelledError).reason).toBe('stop everything');
    expect(signal.aborted).toBe(true);
    // A late answer changes nothing.
    handler.pending[0]!.answer({ decision: 'approve' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(tool.count('execute')).toBe(0);
    expect(ctx.traces[0]?.approval).toMatchObject({ decision: 'withdrawn', decidedBy: 'runtime', requestId: '1' });
  });

  it('ending the plan withdraws the requests still pending', async () => {
    const handler = new PendingApprovals();
    const { runtime } = setup([writer()], { approvalHandler: handler });
    const ctx = runtime.createPlan({ policy: asksForWrites });
    const running = rejection(runtime.execute('files.write', { path: 'a' }, ctx));
    await handler.until(1);
    await runtime.endPlan(ctx);
    expect(ToolPlanEndedError.isInstance(await running)).toBe(true);
    expect(handler.pending[0]!.context.signal.aborted).toBe(true);
  });

  it('refuses the call when no answer comes within approvalTimeoutMs', async () => {
    const handler = new PendingApprovals();
    const { runtime } = setup([writer()], { approvalHandler: handler }, { approvalTimeoutMs: 30 });
    const ctx = runtime.createPlan({ policy: asksForWrites });
    const error = await rejection(runtime.execute('files.write', { path: 'a' }, ctx));
    expect(error).toMatchObject({ code: 'TOOL_APPROVAL_DENIED', denial: 'timed-out' });
    expect(error.message).toContain('no answer came within 30 ms (approvalTimeoutMs)');
    // The signal read after the wait ended is already aborted.
    expect(handler.pending[0]!.context.signal.aborted).toBe(true);
  });

  it.each([
    ['throws', () => Promise.reject(new Error('the dialog crashed'))],
    ['answers a decision that is not one', () => ({ decision: 'yes' })],
    ['answers an unknown scope', () => ({ decision: 'approve', scope: 'forever' })],
    ['answers nothing', () => undefined],
  ])('a handler that %s refuses the call', async (_label, answer) => {
    const tool = writer();
    const handler = new ScriptedApprovals(answer as () => ApprovalDecision);
    const { runtime } = setup([tool], { approvalHandler: handler });
    const error = await rejection(runtime.execute('files.write', { path: 'a' }, runtime.createPlan({ policy: asksForWrites })));
    expect(error).toMatchObject({ code: 'TOOL_APPROVAL_DENIED', denial: 'handler-failed' });
    expect(error.cause).toBeInstanceOf(Error);
    expect(tool.count('execute')).toBe(0);
  });

  it('a handler may answer at once with the decision itself (no promise); one that throws at once refuses the call', async () => {
    const tool = writer();
    let answer: ApprovalDecision = { decision: 'approve', scope: 'tool', decidedBy: 'policy engine' };
    const handler: ApprovalHandler = { requestApproval: () => answer };
    const { runtime } = setup([tool], { approvalHandler: handler });
    const ctx = runtime.createPlan({ policy: asksForWrites });
    const approved = await runtime.execute('files.write', { path: 'a' }, ctx);
    expect(approved.trace.approval).toMatchObject({ decision: 'approved', decidedBy: 'policy engine', scope: 'tool', requestId: '1' });
    answer = { decision: 'deny', reason: 'no', decidedBy: 'policy engine' };
    const other = runtime.createPlan({ policy: asksForWrites });
    await expect(runtime.execute('files.write', { path: 'a' }, other)).rejects.toMatchObject({ denial: 'denied', reason: 'no' });
    const throwing = setup([writer()], {
      approvalHandler: {
        requestApproval: () => {
          throw new Error('the policy engine is down');
        },
      },
    });
    const error = await rejection(throwing.runtime.execute('files.write', { path: 'a' }, throwing.runtime.createPlan({ policy: asksForWrites })));
    expect(error).toMatchObject({ code: 'TOOL_APPROVAL_DENIED', denial: 'handler-failed' });
    expect((error.cause as Error).message).toBe('the policy engine is down');
    expect(tool.count('execute')).toBe(1);
  });

  it('concurrent requests have their own ids and are answered each on its own', async () => {
    const tool = writer();
    const handler = new PendingApprovals();
    const { runtime } = setup([tool], { approvalHandler: handler });
    const ctx = runtime.createPlan({ policy: asksForWrites });
    const first = runtime.execute('files.write', { path: 'one' }, ctx);
    const second = rejection(runtime.execute('files.write', { path: 'two' }, ctx));
    await handler.until(2);
    expect(handler.pending.map((entry) => entry.request.id).sort()).toEqual(['1', '2']);
    const byPath = (wanted: string) => handler.pending.find((entry) => (entry.request.arguments as { path: string }).path === wanted)!;
    byPath('two').answer({ decision: 'deny' });
    byPath('one').answer({ decision: 'approve' });
    expect((await first).ok).toBe(true);
    expect((await second).code).toBe('TOOL_APPROVAL_DENIED');
    expect(tool.events.filter((event) => event.type === 'execute').map((event) => event.input)).toEqual([{ path: 'one' }]);
  });

  it('takes its handler from the container', async () => {
    const services = container.createChildContainer();
    const handler = new ScriptedApprovals(() => ({ decision: 'deny', reason: 'registered handler' }));
    services.register(APPROVAL_HANDLER, { useValue: handler });
    services.register(TOOL_SOURCE, { useValue: new InMemoryToolSource([writer()]) });
    registerToolRuntime(services, {});
    const runtime = services.resolve(TOOL_RUNTIME);
    const error = await rejection(runtime.execute('files.write', { path: 'a' }, runtime.createPlan({ policy: asksForWrites })));
    expect(error).toMatchObject({ denial: 'denied', reason: 'registered handler' });
  });
});

describe('rules of the service', () => {
  const rules: ToolRuntimeOptions['rules'] = [
    { name: 'no-secrets', decision: 'deny', tools: 'files.*', arguments: { '/path': { glob: '*.env' } }, reason: 'secrets stay put' },
    { name: 'docs-are-fine', decision: 'allow', tools: ['files.write'], arguments: { '/path': { glob: 'docs/*' } } },
    { name: 'ask-about-config', decision: 'ask', tools: 'files.read', arguments: { '/path': { regex: '^config/' } }, reason: 'config may hold passwords' },
  ];

  it('a deny rule refuses the call without asking, even when the handler would approve', async () => {
    const tool = writer();
    const handler = new ScriptedApprovals(() => ({ decision: 'approve' }));
    const { runtime } = setup([tool], { approvalHandler: handler }, { rules });
    const ctx = runtime.createPlan({ planId: 'p' });
    const error = await rejection(runtime.execute('files.write', { path: 'prod.env' }, ctx));
    expect(error).toMatchObject({ code: 'TOOL_APPROVAL_DENIED', denial: 'rule', rule: 'no-secrets', reason: 'secrets stay put' });
    expect(error.message).toBe(
      "Tool 'files.write' in plan 'p' is refused by rule 'no-secrets': secrets stay put. The tool did not run. Change the call, or the rule in the service's configuration.",
    );
    expect(handler.requests).toHaveLength(0);
    expect(tool.count('execute')).toBe(0);
    expect(ctx.traces[0]?.approval).toEqual({ decision: 'denied', decidedBy: 'rule:no-secrets', waitedMs: 0, reason: 'secrets stay put' });
  });

  it('an allow rule lets a call run that the plan would ask about; deny wins over allow', async () => {
    const handler = new ScriptedApprovals(() => ({ decision: 'deny' }));
    const { runtime } = setup([writer()], { approvalHandler: handler }, { rules });
    const ctx = runtime.createPlan({ policy: { approval: { always: true } } });
    const allowed = await runtime.execute('files.write', { path: 'docs/readme.md' }, ctx);
    expect(allowed.ok).toBe(true);
    expect(allowed.trace.approval).toEqual({ decision: 'approved', decidedBy: 'rule:docs-are-fine', scope: 'once', waitedMs: 0 });
    // Both rules match docs/.env: the deny decides.
    const error = await rejection(runtime.execute('files.write', { path: 'docs/.env' }, ctx));
    expect(error).toMatchObject({ denial: 'rule', rule: 'no-secrets' });
    expect(handler.requests).toHaveLength(0);
  });

  it('an ask rule asks in a plan whose policy asks for nothing, with the rule as the reason', async () => {
    const handler = new ScriptedApprovals(() => ({ decision: 'approve' }));
    const { runtime } = setup([reader()], { approvalHandler: handler }, { rules });
    const ctx = runtime.createPlan();
    await runtime.execute('files.read', { path: 'config/db.yaml' }, ctx);
    await runtime.execute('files.read', { path: 'src/db.ts' }, ctx);
    expect(handler.requests.map((request) => request.reason)).toEqual([{ source: 'rule', match: 'ask-about-config', text: 'config may hold passwords' }]);
  });

  it('a broken rule stops the runtime from being built', () => {
    expect(() => setup([], {}, { rules: [{ name: 'typo', decision: 'deny', tools: 'x', examples: { match: [{ tool: 'y' }] } }] })).toThrow(
      /Rule 'typo' \(rules\[0\]\) is invalid at examples.match\[0\]: the rule does not match its own example y \{\}/,
    );
  });
});

/** An approval store backed by a JSON Lines file, as a service might write one. */
class JsonLinesApprovalStore implements ApprovalStore {
  constructor(readonly folder: string) {}

  file(planId: string): string {
    return path.join(this.folder, `${planId}.jsonl`);
  }

  async load(planId: string): Promise<readonly unknown[]> {
    if (!fs.existsSync(this.file(planId))) return [];
    return fs
      .readFileSync(this.file(planId), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as unknown);
  }

  async save(record: ApprovalRecord): Promise<void> {
    fs.appendFileSync(this.file(record.planId), `${JSON.stringify(record)}\n`);
  }

  async forget(planId: string): Promise<void> {
    fs.rmSync(this.file(planId), { force: true });
  }
}

describe('approvals bound to the call and kept across restarts', () => {
  let folder: string;
  beforeEach(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-approvals-'));
  });
  afterEach(() => fs.rmSync(folder, { recursive: true, force: true }));

  /** One "process": a fresh runtime on the same store and key, running one call in plan `id`. */
  async function runOnce(store: ApprovalStore, answer: ApprovalDecision, input: unknown, key = KEY) {
    const handler = new ScriptedApprovals(() => answer);
    const tool = writer();
    const { runtime, logger } = setup([tool], { approvalHandler: handler, approvalStore: store, approvalKey: key });
    let ctx: PlanContext | undefined;
    await runtime.runPlan({ planId: 'restartable', policy: asksForWrites }, async (plan) => {
      ctx = plan;
      await runtime.execute('files.write', input, plan);
    });
    return { handler, tool, logger, trace: ctx!.traces[0]! };
  }

  it('an approval for the call survives a restart with the same plan id; other arguments are asked about', async () => {
    const store = new JsonLinesApprovalStore(folder);
    const first = await runOnce(store, { decision: 'approve', scope: 'call', decidedBy: 'dana' }, { path: 'a', content: 'x' });
    expect(first.handler.requests).toHaveLength(1);
    const records = await store.load('restartable');
    expect(records).toEqual([
      {
        version: 1,
        planId: 'restartable',
        toolName: 'files.write',
        fingerprint: fingerprintTool(first.tool.descriptor),
        scope: 'call',
        argumentsHash: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        decidedBy: 'dana',
        decidedAt: expect.any(String),
        signature: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      },
    ]);

    const restarted = await runOnce(store, { decision: 'deny' }, { content: 'x', path: 'a' });
    expect(restarted.handler.requests).toHaveLength(0);
    expect(restarted.tool.count('execute')).toBe(1);
    expect(restarted.trace.approval).toEqual({ decision: 'approved', decidedBy: 'dana', scope: 'call', remembered: true, waitedMs: 0 });

    const changed = await runOnce(store, { decision: 'approve' }, { path: 'a', content: 'y' });
    expect(changed.handler.requests).toHaveLength(1);
  });

  it('a tool approval survives in a shared memory store too', async () => {
    const store = new MemoryApprovalStore();
    await runOnce(store, { decision: 'approve', scope: 'tool' }, { path: 'a' });
    const restarted = await runOnce(store, { decision: 'deny' }, { path: 'b' });
    expect(restarted.handler.requests).toHaveLength(0);
    expect(restarted.trace.approval).toMatchObject({ scope: 'tool', remembered: true });
  });

  it.each([
    ['another tool', (record: Record<string, unknown>) => ({ ...record, toolName: 'files.delete' })],
    ['other arguments', (record: Record<string, unknown>) => ({ ...record, argumentsHash: 'A'.repeat(43) })],
    ['a wider scope', (record: Record<string, unknown>) => ({ ...record, scope: 'tool', argumentsHash: undefined })],
    ['a forged signature', (record: Record<string, unknown>) => ({ ...record, signature: 'B'.repeat(43) })],
  ])('an edited store entry (%s) is refused: the call is asked about again and a warning says why', async (_label, edit) => {
    const store = new JsonLinesApprovalStore(folder);
    await runOnce(store, { decision: 'approve', scope: 'call' }, { path: 'a' });
    const [record] = (await store.load('restartable')) as Record<string, unknown>[];
    fs.writeFileSync(store.file('restartable'), `${JSON.stringify(edit(record!))}\n`);
    const restarted = await runOnce(store, { decision: 'approve' }, { path: 'a' });
    expect(restarted.handler.requests).toHaveLength(1);
    const warnings = restarted.logger.at('warn').map((entry) => entry.message);
    expect(warnings.some((message) => /^Approval record 1 of plan 'restartable' .*was refused: /.test(message))).toBe(true);
  });

  it('records signed with another key are refused', async () => {
    const store = new JsonLinesApprovalStore(folder);
    await runOnce(store, { decision: 'approve', scope: 'tool' }, { path: 'a' });
    const restarted = await runOnce(store, { decision: 'approve' }, { path: 'a' }, 'another key that is also at least 32 bytes');
    expect(restarted.handler.requests).toHaveLength(1);
    expect(
      restarted.logger
        .at('warn')
        .map((entry) => entry.message)
        .join('\n'),
    ).toContain('its signature does not match its fields');
  });

  it('a record of another plan in the plan file is refused', async () => {
    const store = new JsonLinesApprovalStore(folder);
    await runOnce(store, { decision: 'approve', scope: 'tool' }, { path: 'a' });
    fs.renameSync(store.file('restartable'), store.file('other'));
    fs.copyFileSync(store.file('other'), store.file('restartable'));
    const records = (await store.load('restartable')) as Record<string, unknown>[];
    fs.writeFileSync(store.file('restartable'), `${JSON.stringify({ ...records[0], planId: 'other' })}\n`);
    const restarted = await runOnce(store, { decision: 'approve' }, { path: 'a' });
    expect(restarted.handler.requests).toHaveLength(1);
    expect(
      restarted.logger
        .at('warn')
        .map((entry) => entry.message)
        .join('\n'),
    ).toContain("it belongs to plan 'other'");
  });

  it('a store needs a key of at least 32 bytes', () => {
    const attempt = (approvalKey?: string) => () =>
      new ToolRuntime({ approvalStore: new MemoryApprovalStore(), ...(approvalKey === undefined ? {} : { approvalKey }) });
    expect(attempt()).toThrow(ToolInvalidArgumentError);
    expect(attempt()).toThrow(/approvalKey must be a secret of at least 32 bytes when an approvalStore is given/);
    expect(attempt('short')).toThrow(/approvalKey must be a secret of at least 32 bytes \(a string or a Uint8Array\); got '5-byte string'/);
    expect(attempt('short')).not.toThrow(/short/);
    expect(attempt(KEY)).not.toThrow();
  });
});
