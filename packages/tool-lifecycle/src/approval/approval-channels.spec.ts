import { InMemoryPlanRegistry, InMemoryToolSource, RecordingLogger, TestTool } from '../testing/index';
// The package entry first: it loads reflect-metadata, which tsyringe needs.
import {
  APPROVAL_HANDLER,
  INTERACTION_HANDLER,
  TOOL_RUNTIME,
  TOOL_SOURCE,
  ToolAccessDeniedError,
  ToolApprovalDeniedError,
  ToolInvalidArgumentError,
  ToolRuntime,
  approvalThroughInteraction,
  createApprovalMessage,
  createCancelMessage,
  registerToolRuntime,
  type ApprovalContext,
  type ApprovalDecision,
  type ApprovalHandler,
  type ApprovalRequest,
  type InteractionContext,
  type InteractionHandler,
  type InteractionRequest,
  type InteractionResponse,
  type ToolRuntimeOptions,
} from '../index';
import { container } from 'tsyringe';

const pathSchema = {
  type: 'object',
  properties: { path: { type: 'string' } },
  required: ['path'],
  additionalProperties: false,
} as const;

function writer(name = 'files.write'): TestTool {
  return new TestTool({ name, capability: { writes: true, checkpointable: false, openWorld: false }, inputSchema: pathSchema });
}

function fetcher(name = 'web.fetch'): TestTool {
  return new TestTool({ name, capability: { writes: false, openWorld: true }, inputSchema: pathSchema });
}

/** A handler that leaves every request waiting (as a person who has not answered yet), keeping each context. */
class WaitingApprovals implements ApprovalHandler {
  readonly asked: { request: ApprovalRequest; context: ApprovalContext }[] = [];
  private waiters: (() => void)[] = [];

  requestApproval(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalDecision> {
    this.asked.push({ request, context });
    for (const wake of this.waiters.splice(0)) wake();
    // Never answers by itself: the answer comes through the registry, or the wait is ended.
    return new Promise(() => undefined);
  }

  async until(count: number): Promise<void> {
    while (this.asked.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; denial?: string; reason?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the promise to reject');
}

/** Waits until `condition` holds, checking after each turn of the event loop (at most 2 s). */
async function eventually(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let turn = 0; turn < 400; turn++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('the condition never held');
}

const asksForWrites = { approval: { capabilities: ['writes'] as const } };

function withRegistry(tools: TestTool[], handler: ApprovalHandler | undefined, options: ToolRuntimeOptions = { registryApprovals: true }) {
  const registry = new InMemoryPlanRegistry({ heartbeatIntervalMs: 60_000 });
  const logger = new RecordingLogger();
  const runtime = new ToolRuntime({
    sources: [new InMemoryToolSource(tools)],
    logger,
    planRegistry: registry,
    options,
    ...(handler === undefined ? {} : { approvalHandler: handler }),
  });
  return { registry, logger, runtime };
}

describe('answers through the plan registry (registryApprovals)', () => {
  it('lists the waiting request in the registration at once, and an approval sent there runs the call and withdraws the question', async () => {
    const tool = writer();
    const handler = new WaitingApprovals();
    const { registry, runtime } = withRegistry([tool], handler);
    const ctx = runtime.createPlan({ planId: 'nightly', policy: asksForWrites });
    await runtime.whenRegistered(ctx);
    expect((await registry.list())[0]).not.toHaveProperty('pendingApprovals');
    const running = runtime.execute('files.write', { path: 'notes.md' }, ctx);
    await handler.until(1);
    // Not at the next heartbeat a minute later: the registration is refreshed when a request starts waiting.
    await eventually(async () => (await registry.list())[0]?.pendingApprovals?.length === 1);
    const listed = (await registry.list())[0]!;
    expect(listed.pendingApprovals).toEqual([{ requestId: '1', toolName: 'files.write', askedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
    expect(listed.policy).toMatchObject({ approval: 'writes' });

    const delivery = await registry.send(
      createApprovalMessage({ planId: 'nightly', requestId: '1', decision: 'approve', scope: 'tool', sentBy: 'bob (agents plan approve)' }),
    );
    expect(delivery.delivery).toBe('delivered');
    const result = await running;
    expect(result.ok).toBe(true);
    expect(tool.count('execute')).toBe(1);
    expect(result.trace.approval).toMatchObject({ decision: 'approved', decidedBy: 'bob (agents plan approve)', scope: 'tool', requestId: '1' });
    // The handler's question is withdrawn, saying why.
    const signal = handler.asked[0]!.context.signal;
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('approval request 1 was answered through plan registry memory by bob (agents plan approve)');
    await eventually(async () => (await registry.list())[0]?.pendingApprovals === undefined);
    // A tool approval holds for the rest of the plan: the next call is not asked.
    expect((await runtime.execute('files.write', { path: 'other.md' }, ctx)).trace.approval).toMatchObject({ decision: 'approved', remembered: true });
    expect(handler.asked).toHaveLength(1);
    await runtime.endPlan(ctx);
  });

  it('a denial sent there refuses the call with its reason; the tool never runs', async () => {
    const tool = writer();
    const handler = new WaitingApprovals();
    const { registry, runtime } = withRegistry([tool], handler);
    const ctx = runtime.createPlan({ planId: 'careful', policy: asksForWrites });
    await runtime.whenRegistered(ctx);
    const running = rejection(runtime.execute('files.write', { path: 'prod.env' }, ctx));
    await handler.until(1);
    await registry.send(createApprovalMessage({ planId: 'careful', requestId: '1', decision: 'deny', reason: 'not on production', sentBy: 'carol' }));
    const error = await running;
    expect(ToolApprovalDeniedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ denial: 'denied', reason: 'not on production' });
    expect(error.message).toContain('carol');
    expect(tool.count('execute')).toBe(0);
    await runtime.endPlan(ctx);
  });

  it('the first answer wins: a late answer from the handler or a second one from the registry changes nothing', async () => {
    const tool = writer();
    let answerByHandler: ((decision: ApprovalDecision) => void) | undefined;
    const handler: ApprovalHandler = { requestApproval: () => new Promise((resolve) => (answerByHandler = resolve)) };
    const { registry, logger, runtime } = withRegistry([tool], handler);
    const ctx = runtime.createPlan({ planId: 'race', policy: asksForWrites });
    await runtime.whenRegistered(ctx);
    const running = runtime.execute('files.write', { path: 'a' }, ctx);
    await eventually(() => answerByHandler !== undefined);
    answerByHandler!({ decision: 'approve', decidedBy: 'alice (terminal)' });
    expect((await running).trace.approval).toMatchObject({ decidedBy: 'alice (terminal)' });
    await registry.send(createApprovalMessage({ planId: 'race', requestId: '1', decision: 'deny' }));
    await eventually(() => logger.at('warn').length > 0);
    expect(logger.at('warn').map((entry) => entry.message)).toEqual([
      "Plan 'race' received an answer to approval request '1' through plan registry memory, but no request with that id waits (answered already, withdrawn, or never asked); it was ignored.",
    ]);
    expect(tool.count('execute')).toBe(1);
    await runtime.endPlan(ctx);
  });

  it('cancelling through the registry ends the wait as cancelling the plan does', async () => {
    const handler = new WaitingApprovals();
    const { registry, runtime } = withRegistry([writer()], handler);
    const ctx = runtime.createPlan({ planId: 'stopped', policy: asksForWrites });
    await runtime.whenRegistered(ctx);
    const running = rejection(runtime.execute('files.write', { path: 'a' }, ctx));
    await handler.until(1);
    await registry.send(createCancelMessage('stopped', 'stopped by ops'));
    expect((await running).code).toBe('TOOL_CANCELLED');
    expect(handler.asked[0]!.context.signal.aborted).toBe(true);
    await runtime.endPlan(ctx);
  });

  it('without registryApprovals, nothing is listed and an answer sent there is ignored with a warning', async () => {
    const tool = writer();
    const handler = new WaitingApprovals();
    const { registry, logger, runtime } = withRegistry([tool], handler, {});
    const ctx = runtime.createPlan({ planId: 'closed', policy: asksForWrites });
    await runtime.whenRegistered(ctx);
    const running = rejection(runtime.execute('files.write', { path: 'a' }, ctx));
    await handler.until(1);
    await registry.send(createApprovalMessage({ planId: 'closed', requestId: '1', decision: 'approve' }));
    await eventually(() => logger.at('warn').length > 0);
    expect(logger.at('warn')[0]!.message).toBe(
      "Plan 'closed' received an answer to an approval request through plan registry memory; this runtime does not take answers from its registry (option registryApprovals), so it was ignored.",
    );
    expect(handler.asked[0]!.context.signal.aborted).toBe(false);
    expect((await registry.list())[0]?.pendingApprovals).toBeUndefined();
    await runtime.endPlan(ctx);
    expect((await running).code).toBe('TOOL_PLAN_ENDED');
    expect(tool.count('execute')).toBe(0);
  });

  it('refuses a registryApprovals that is not a boolean', () => {
    expect(() => new ToolRuntime({ options: { registryApprovals: 'yes' as never } })).toThrow(ToolInvalidArgumentError);
  });
});

/** An interaction handler as a service writes one: answers forms with `answer`, records what it was asked. */
class FormAnswers implements InteractionHandler {
  readonly asked: { request: InteractionRequest; context: InteractionContext }[] = [];

  constructor(private readonly answer: (request: InteractionRequest) => InteractionResponse) {}

  async interact(request: InteractionRequest, context: InteractionContext): Promise<InteractionResponse> {
    this.asked.push({ request, context });
    return this.answer(request);
  }
}

describe('approval through an InteractionHandler', () => {
  function run(handler: InteractionHandler, decidedBy?: string) {
    const tool = writer();
    const runtime = new ToolRuntime({
      sources: [new InMemoryToolSource([tool])],
      logger: new RecordingLogger(),
      approvalHandler: approvalThroughInteraction(handler, decidedBy === undefined ? {} : { decidedBy }),
    });
    const ctx = runtime.createPlan({ planId: 'form-plan', policy: asksForWrites });
    return { tool, runtime, ctx, execute: (path: string) => runtime.execute('files.write', { path }, ctx) };
  }

  it('asks a form that names the call and carries the request, and approves for the scope chosen', async () => {
    const handler = new FormAnswers(() => ({ action: 'accept', content: { answer: 'call' } }));
    const { tool, execute } = run(handler, 'dana (web)');
    const result = await execute('todo.md');
    expect(result.trace.approval).toMatchObject({ decision: 'approved', scope: 'call', decidedBy: 'dana (web)' });
    const { request, context } = handler.asked[0]!;
    expect(request.kind).toBe('form');
    if (request.kind !== 'form') throw new Error('a form was expected');
    expect(request.message).toContain("Approval request 1 of plan 'form-plan': the plan asks before tools that write.");
    expect(request.message).toContain('Tool files.write (custom): writes, may destroy data, cannot be undone.');
    expect(request.message).toContain('Arguments: {"path":"todo.md"}');
    expect(request.schema).toMatchObject({ required: ['answer'], properties: { answer: { type: 'string' }, reason: { type: 'string' } } });
    expect(request.approval).toMatchObject({ id: '1', toolName: 'files.write', arguments: { path: 'todo.md' } });
    expect(context).toMatchObject({ source: 'runtime', origin: 'approval', planId: 'form-plan', toolName: 'files.write' });
    expect(context.signal).toBeInstanceOf(AbortSignal);
    // Approved for these arguments: the same call is not asked again, another is.
    await execute('todo.md');
    await execute('other.md');
    expect(handler.asked).toHaveLength(2);
    expect(tool.count('execute')).toBe(3);
  });

  it.each<[string, InteractionResponse, string | undefined]>([
    ['deny, with the reason typed', { action: 'accept', content: { answer: 'deny', reason: 'not today' } }, 'not today'],
    ['decline', { action: 'decline' }, 'declined'],
    ['cancel', { action: 'cancel' }, 'the question was dismissed without an answer'],
    ['an accepted form without an answer', { action: 'accept' }, 'the answer undefined is not one of once, tool, call and deny'],
    [
      'an answer that is not one of the four',
      { action: 'accept', content: { answer: 'always' } },
      "the answer 'always' is not one of once, tool, call and deny",
    ],
  ])('%s denies the call', async (_label, response, reason) => {
    const { tool, execute } = run(new FormAnswers(() => response));
    const error = await rejection(execute('a'));
    expect(error).toMatchObject({ code: 'TOOL_APPROVAL_DENIED', denial: 'denied', reason });
    expect(tool.count('execute')).toBe(0);
  });

  it('refuses something that is not an InteractionHandler', () => {
    expect(() => approvalThroughInteraction({} as never)).toThrow(ToolInvalidArgumentError);
    expect(() => approvalThroughInteraction(new FormAnswers(() => ({ action: 'decline' })), { decidedBy: ' ' })).toThrow(ToolInvalidArgumentError);
  });

  it('registerToolRuntime asks approvals through the INTERACTION_HANDLER when no APPROVAL_HANDLER is registered', async () => {
    const services = container.createChildContainer();
    const interactions = new FormAnswers(() => ({ action: 'accept', content: { answer: 'once' } }));
    services.register(INTERACTION_HANDLER, { useValue: interactions });
    services.register(TOOL_SOURCE, { useValue: new InMemoryToolSource([writer()]) });
    registerToolRuntime(services, {});
    const runtime = services.resolve(TOOL_RUNTIME);
    const result = await runtime.execute('files.write', { path: 'a' }, runtime.createPlan({ policy: asksForWrites }));
    expect(result.trace.approval).toMatchObject({ decision: 'approved', decidedBy: 'interaction handler' });
    expect(interactions.asked).toHaveLength(1);
  });

  it('an APPROVAL_HANDLER the service registered wins over the INTERACTION_HANDLER', async () => {
    const services = container.createChildContainer();
    const interactions = new FormAnswers(() => ({ action: 'accept', content: { answer: 'once' } }));
    services.register(INTERACTION_HANDLER, { useValue: interactions });
    services.register(APPROVAL_HANDLER, { useValue: { requestApproval: () => ({ decision: 'deny', reason: 'policy engine says no' }) } });
    services.register(TOOL_SOURCE, { useValue: new InMemoryToolSource([writer()]) });
    registerToolRuntime(services, {});
    const runtime = services.resolve(TOOL_RUNTIME);
    const error = await rejection(runtime.execute('files.write', { path: 'a' }, runtime.createPlan({ policy: asksForWrites })));
    expect(error).toMatchObject({ reason: 'policy engine says no' });
    expect(interactions.asked).toHaveLength(0);
  });
});

describe('approval and the network policy', () => {
  it('a plan that denies the network refuses an open-world tool before any rule or question, even an allow rule', async () => {
    const tool = fetcher();
    const asked: ApprovalRequest[] = [];
    const runtime = new ToolRuntime({
      sources: [new InMemoryToolSource([tool])],
      logger: new RecordingLogger(),
      approvalHandler: { requestApproval: (request) => (asked.push(request), { decision: 'approve' }) },
      options: { rules: [{ name: 'fetch-is-fine', decision: 'allow', tools: 'web.*' }] },
    });
    const ctx = runtime.createPlan({ policy: { network: 'deny', approval: { capabilities: ['openWorld'] } } });
    const error = await rejection(runtime.execute('web.fetch', { path: 'https://example.org' }, ctx));
    expect(ToolAccessDeniedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ rule: 'network' });
    expect(asked).toHaveLength(0);
    expect(tool.count('execute')).toBe(0);
    expect(ctx.traces[0]?.approval).toBeUndefined();
  });

  it('with the network allowed, approval by the openWorld capability asks before exactly the tools the network policy would refuse', async () => {
    const asked: string[] = [];
    const tools = [
      fetcher('web.fetch'),
      writer('files.write'),
      new TestTool({ name: 'files.read', capability: { writes: false, openWorld: false }, inputSchema: pathSchema }),
    ];
    const runtime = new ToolRuntime({
      sources: [new InMemoryToolSource(tools)],
      logger: new RecordingLogger(),
      approvalHandler: { requestApproval: (request) => (asked.push(request.toolName), { decision: 'approve' }) },
    });
    const denying = runtime.createPlan({ policy: { network: 'deny' } });
    const asking = runtime.createPlan({ policy: { network: 'allow', approval: { capabilities: ['openWorld'] } } });
    const refusedWithoutNetwork: string[] = [];
    for (const tool of tools) {
      const name = tool.descriptor.name;
      await runtime.execute(name, { path: 'x' }, denying).catch((error: unknown) => {
        if (ToolAccessDeniedError.isInstance(error)) refusedWithoutNetwork.push(name);
      });
      const result = await runtime.execute(name, { path: 'x' }, asking);
      if (result.trace.approval !== undefined) expect(result.trace.approval.decision).toBe('approved');
    }
    expect(asked).toEqual(['web.fetch']);
    expect(refusedWithoutNetwork).toEqual(asked);
  });
});
