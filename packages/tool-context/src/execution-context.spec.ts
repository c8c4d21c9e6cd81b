import { getEventListeners } from 'node:events';
import type { BoundResource } from './bound-resource';
import { CancellationToken, getCancellationListenerCounts } from './cancellation-token';
import type { Change } from './change';
import { ContextValidationError } from './context-validation-error';
import { createExecutionContext, type ToolExecutionContextOptions } from './execution-context';
import type { ToolExecutionTrace } from './tool-execution-trace';

const workspace: BoundResource = { id: 'workspace', kind: 'filesystem', uri: 'file:///tmp/project', access: 'write' };
const docs: BoundResource = { id: 'docs', kind: 'http', uri: 'https://example.com/docs/', access: 'read', metadata: { owner: 'team' } };

function change(overrides: Partial<Change> = {}): Change {
  return {
    kind: 'modify',
    target: '/tmp/project/a.txt',
    resourceId: 'workspace',
    toolName: 'builtin.fs.write',
    executionId: 'exec-1',
    at: '2025-01-02T03:04:05.678Z',
    ...overrides,
  };
}

function trace(overrides: Partial<ToolExecutionTrace> = {}): ToolExecutionTrace {
  return {
    executionId: 'exec-1',
    planId: 'plan-1',
    toolName: 'builtin.fs.write',
    startedAt: '2025-01-02T03:04:05.000Z',
    endedAt: '2025-01-02T03:04:05.012Z',
    durationMs: 12.5,
    resultSizeBytes: 42,
    success: true,
    ...overrides,
  };
}

function validationError(action: () => unknown): ContextValidationError {
  try {
    action();
  } catch (error) {
    if (ContextValidationError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a ContextValidationError');
}

describe('createExecutionContext', () => {
  it('fills in a random UUID plan id, the permissive default policy, no resources and a new token', () => {
    const first = createExecutionContext();
    const second = createExecutionContext({});
    expect(first.planId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(second.planId).not.toBe(first.planId);
    expect(first.policy).toEqual({ readOnly: false, requireCheckpoint: false, network: 'allow' });
    expect(first.resources).toEqual([]);
    expect(first.metadata).toEqual({});
    expect(first.cancellationToken).toBeInstanceOf(CancellationToken);
    expect(first.cancellationToken).not.toBe(second.cancellationToken);
    expect(first.executionId).toBeUndefined();
    expect(first.toolName).toBeUndefined();
    expect(first.changes).toEqual([]);
    expect(first.traces).toEqual([]);
  });

  it('keeps what it is given, as frozen copies', () => {
    const token = new CancellationToken();
    const metadata = { requestedBy: 'alice' };
    const ctx = createExecutionContext({
      planId: 'plan-1',
      policy: { readOnly: true },
      resources: [workspace, docs],
      cancellationToken: token,
      metadata,
    });
    metadata.requestedBy = 'mallory';
    expect(ctx.planId).toBe('plan-1');
    expect(ctx.policy).toEqual({ readOnly: true, requireCheckpoint: false, network: 'allow' });
    expect(ctx.resources).toEqual([workspace, docs]);
    expect(ctx.resources[0]).not.toBe(workspace);
    expect(ctx.cancellationToken).toBe(token);
    expect(ctx.metadata).toEqual({ requestedBy: 'alice' });
    for (const frozen of [ctx.policy, ctx.resources, ctx.resources[0], ctx.resources[1].metadata, ctx.metadata]) {
      expect(Object.isFrozen(frozen)).toBe(true);
    }
    expect(() => (ctx.resources as BoundResource[]).push(workspace)).toThrow(TypeError);
  });

  it('finds resources by id', () => {
    const ctx = createExecutionContext({ resources: [workspace, docs] });
    expect(ctx.getResource('docs')).toEqual(docs);
    expect(ctx.getResource('nope')).toBeUndefined();
  });

  it('follows an outside signal through a token it makes', () => {
    const controller = new AbortController();
    const ctx = createExecutionContext({ signal: controller.signal });
    controller.abort('client went away');
    expect(ctx.cancellationToken.isCancelled).toBe(true);
    expect(ctx.cancellationToken.reason).toBe('client went away');
  });

  it('with both a token and a signal, makes a child of the token that also follows the signal', () => {
    const controller = new AbortController();
    const token = new CancellationToken();
    const ctx = createExecutionContext({ cancellationToken: token, signal: controller.signal });
    expect(ctx.cancellationToken).not.toBe(token);
    token.cancel('from token');
    expect(ctx.cancellationToken.reason).toBe('from token');

    const other = createExecutionContext({ cancellationToken: new CancellationToken(), signal: controller.signal });
    controller.abort('from signal');
    expect(other.cancellationToken.reason).toBe('from signal');
  });

  it('lets the plan token be disposed so a long-lived signal keeps no listener', () => {
    const controller = new AbortController();
    for (let index = 0; index < 20; index++) createExecutionContext({ signal: controller.signal }).cancellationToken.dispose();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  describe('validation', () => {
    it.each([
      ['an empty string', ''],
      ['blank', '   '],
      ['a number', 42],
      ['null', null],
    ])('refuses a plan id that is %s', (_label, planId) => {
      const error = validationError(() => createExecutionContext({ planId: planId as string }));
      expect(error.field).toBe('planId');
      expect(error.message).toMatch(/^Invalid planId: expected a non-empty string such as "plan-42", got .*; leave it out to get a random UUID\.$/);
    });

    it('refuses options that are not an object', () => {
      expect(validationError(() => createExecutionContext('plan-1' as never)).field).toBe('options');
    });

    it.each([
      [{ readOnly: 'yes' }, 'policy.readOnly', /expected true or false .*got the string "yes"/],
      [{ requireCheckpoint: 1 }, 'policy.requireCheckpoint', /expected true or false .*got number 1/],
      [{ readonly: true }, 'policy.readonly', /unknown policy field; a policy has only readOnly, requireCheckpoint, network and approval/],
      ['strict', 'policy', /expected an object like/],
    ])('refuses the policy %p', (policy, field, message) => {
      const error = validationError(() => createExecutionContext({ planId: 'plan-9', policy: policy as never }));
      expect(error.field).toBe(field);
      expect(error.planId).toBe('plan-9');
      expect(error.message).toContain(`Invalid ${field} (plan "plan-9")`);
      expect(error.message).toMatch(message);
    });

    it.each<[string, unknown, string, RegExp]>([
      ['not an array', workspace, 'resources', /expected an array/],
      ['not an object', ['file:///tmp'], 'resources[0]', /expected an object like \{ id, kind, uri, access \}/],
      ['without id', [{ ...workspace, id: undefined }], 'resources[0].id', /non-empty string naming the resource/],
      ['with an empty id', [{ ...workspace, id: ' ' }], 'resources[0].id', /non-empty string/],
      ['without kind', [{ ...workspace, kind: undefined }], 'resources[0].kind', /resource "workspace" needs a non-empty kind/],
      [
        'with a relative path as URI',
        [{ ...workspace, uri: 'tmp/project' }],
        'resources[0].uri',
        /not an absolute URI with a scheme; use e\.g\. "file:\/\/\/tmp\/project"/,
      ],
      ['with an absolute path as URI', [{ ...workspace, uri: '/tmp/project' }], 'resources[0].uri', /resourceFromPath\(\) makes one from a path/],
      ['with a Windows path as URI', [{ ...workspace, uri: 'C:\\work' }], 'resources[0].uri', /looks like a Windows path/],
      ['without URI', [{ ...workspace, uri: undefined }], 'resources[0].uri', /needs an absolute URI/],
      ['with a bad access mode', [{ ...workspace, access: 'readwrite' }], 'resources[0].access', /needs access "read" or "write", got the string "readwrite"/],
      ['with metadata that is not an object', [{ ...workspace, metadata: 'x' }], 'resources[0].metadata', /metadata that is not an object/],
      [
        'with a duplicate id',
        [workspace, docs, { ...docs, uri: 'https://example.org/' }],
        'resources[2].id',
        /the id "docs" is already used by another resource; give every bound resource its own id/,
      ],
    ])('refuses resources %s', (_label, resources, field, message) => {
      const error = validationError(() => createExecutionContext({ planId: 'plan-9', resources: resources as BoundResource[] }));
      expect(error.field).toBe(field);
      expect(error.message).toContain(`Invalid ${field} (plan "plan-9")`);
      expect(error.message).toMatch(message);
    });

    it('accepts any absolute URI with a scheme', () => {
      const resources: BoundResource[] = ['file:///tmp/x', 'https://example.com', 'postgres://db/main', 'urn:isbn:0451450523'].map((uri, index) => ({
        id: `r${index}`,
        kind: 'any',
        uri,
        access: 'read',
      }));
      expect(createExecutionContext({ resources }).resources).toHaveLength(4);
    });

    it.each<[string, ToolExecutionContextOptions, string]>([
      ['metadata that is not an object', { metadata: [] as never }, 'metadata'],
      ['a token that is not a token', { cancellationToken: { cancel: () => undefined } as never }, 'cancellationToken'],
      ['a signal that is not a signal', { signal: 'abort' as never }, 'signal'],
    ])('refuses %s', (_label, options, field) => {
      const error = validationError(() => createExecutionContext({ planId: 'plan-9', ...options }));
      expect(error.field).toBe(field);
      expect(error.planId).toBe('plan-9');
    });
  });
});

describe('ToolExecutionContext records', () => {
  it('records changes and traces in order, as frozen copies of their known fields', () => {
    const ctx = createExecutionContext({ planId: 'plan-1', resources: [workspace] });
    const undo = { previousContent: 'old' };
    ctx.recordChange(change({ kind: 'create', target: '/tmp/project/new.txt', undo }));
    ctx.recordChange({ ...change({ kind: 'delete' }), extra: 'dropped' } as Change);
    ctx.recordTrace(trace({ executionId: 'exec-1' }));
    ctx.recordTrace(trace({ executionId: 'exec-2', success: false, error: { name: 'Error', code: 'UNKNOWN', message: 'x' } }));
    expect(ctx.changes.map((recorded) => recorded.kind)).toEqual(['create', 'delete']);
    expect(ctx.changes[0].undo).toBe(undo);
    expect(ctx.changes[1]).not.toHaveProperty('extra');
    expect(ctx.traces.map((recorded) => recorded.executionId)).toEqual(['exec-1', 'exec-2']);
    expect(ctx.traces[1].error).toEqual({ name: 'Error', code: 'UNKNOWN', message: 'x' });
    expect(Object.isFrozen(ctx.changes[0])).toBe(true);
    expect(Object.isFrozen(ctx.traces[1])).toBe(true);
    expect(Object.isFrozen(ctx.traces[1].error)).toBe(true);
  });

  it('hands out live read-only views that refuse every write', () => {
    const ctx = createExecutionContext({ planId: 'plan-1' });
    const changes = ctx.changes as Change[];
    const traces = ctx.traces as ToolExecutionTrace[];
    ctx.recordChange(change());
    ctx.recordTrace(trace());

    expect(() => changes.push(change())).toThrow(/ctx\.changes is a read-only view of the plan's records; record through ctx\.recordChange\(\)/);
    expect(() => traces.push(trace())).toThrow(/record through ctx\.recordTrace\(\)/);
    expect(() => {
      changes[0] = change({ target: 'forged' });
    }).toThrow(TypeError);
    expect(() => {
      changes.length = 0;
    }).toThrow(TypeError);
    expect(() => changes.splice(0, 1)).toThrow(TypeError);
    expect(() => traces.pop()).toThrow(TypeError);
    expect(() => changes.fill(change())).toThrow(TypeError);
    expect(() => delete changes[0]).toThrow(TypeError);
    expect(() => Object.defineProperty(changes, '1', { value: change() })).toThrow(TypeError);
    expect(() => {
      (changes[0] as { target: string }).target = 'forged';
    }).toThrow(TypeError);

    expect(ctx.changes).toHaveLength(1);
    expect(ctx.changes[0].target).toBe('/tmp/project/a.txt');
    expect(ctx.traces).toHaveLength(1);
    ctx.recordChange(change({ kind: 'rename' }));
    expect(changes).toHaveLength(2);
  });

  it('gives views that read like arrays', () => {
    const ctx = createExecutionContext({ planId: 'plan-1' });
    ctx.recordChange(change({ target: 'a' }));
    ctx.recordChange(change({ target: 'b' }));
    expect(Array.isArray(ctx.changes)).toBe(true);
    expect([...ctx.changes].map((recorded) => recorded.target)).toEqual(['a', 'b']);
    expect(ctx.changes.filter((recorded) => recorded.target === 'b')).toHaveLength(1);
    expect(JSON.parse(JSON.stringify(ctx.changes))).toEqual([change({ target: 'a' }), change({ target: 'b' })]);
    expect(structuredClone([...ctx.changes])).toHaveLength(2);
  });

  it.each<[string, Partial<Change> | string, string, RegExp]>([
    ['an unknown kind', { kind: 'update' as never }, 'change.kind', /expected one of "create", "modify", "delete", "rename", "other", got the string "update"/],
    ['an empty target', { target: '' }, 'change.target', /non-empty string naming what changed/],
    ['no tool name', { toolName: undefined }, 'change.toolName', /name of the tool that made the change/],
    ['no execution id', { executionId: 42 as never }, 'change.executionId', /id of the execution/],
    ['a timestamp that is not ISO-8601', { at: 'yesterday' }, 'change.at', /ISO-8601 timestamp/],
    ['an out-of-range timestamp', { at: '2025-13-01T00:00:00Z' }, 'change.at', /ISO-8601 timestamp/],
    ['a resource id that is not a string', { resourceId: 7 as never }, 'change.resourceId', /id of a bound resource/],
    ['a summary that is not a string', { summary: {} as never }, 'change.summary', /a string or nothing/],
    ['something that is not a change', 'modify', 'change', /recordChange expects/],
  ])('refuses a change with %s', (_label, overrides, field, message) => {
    const ctx = createExecutionContext({ planId: 'plan-3' });
    const given = typeof overrides === 'string' ? overrides : change(overrides);
    const error = validationError(() => ctx.recordChange(given as Change));
    expect(error.field).toBe(field);
    expect(error.message).toContain(`Invalid ${field} (plan "plan-3")`);
    expect(error.message).toMatch(message);
    expect(ctx.changes).toHaveLength(0);
  });

  it.each<[string, Partial<ToolExecutionTrace>, string]>([
    ['another plan', { planId: 'plan-other' }, 'trace.planId'],
    ['no execution id', { executionId: '' }, 'trace.executionId'],
    ['no tool name', { toolName: undefined }, 'trace.toolName'],
    ['a bad start', { startedAt: 'now' }, 'trace.startedAt'],
    ['a bad end', { endedAt: '2025-01-02' }, 'trace.endedAt'],
    ['a negative duration', { durationMs: -1 }, 'trace.durationMs'],
    ['an infinite duration', { durationMs: Infinity }, 'trace.durationMs'],
    ['a fractional size', { resultSizeBytes: 1.5 }, 'trace.resultSizeBytes'],
    ['a success that is not a boolean', { success: 'yes' as never }, 'trace.success'],
    ['an error that is not { name, code, message }', { error: new Error('x') as never }, 'trace.error'],
    ['an approval that is not an object', { approval: 'yes' as never }, 'trace.approval'],
    ['an approval with an unknown decision', { approval: { decision: 'maybe', decidedBy: 'a', waitedMs: 0 } as never }, 'trace.approval.decision'],
    ['an approval nobody decided', { approval: { decision: 'approved', decidedBy: '', waitedMs: 0 } }, 'trace.approval.decidedBy'],
    [
      'an approval with an unknown scope',
      { approval: { decision: 'approved', decidedBy: 'a', waitedMs: 0, scope: 'forever' as never } },
      'trace.approval.scope',
    ],
    ['an approval with a negative wait', { approval: { decision: 'approved', decidedBy: 'a', waitedMs: -1 } }, 'trace.approval.waitedMs'],
    [
      'an approval with a reason that is not a string',
      { approval: { decision: 'denied', decidedBy: 'a', waitedMs: 0, reason: 5 as never } },
      'trace.approval.reason',
    ],
    [
      'an approval remembered as "yes"',
      { approval: { decision: 'approved', decidedBy: 'a', waitedMs: 0, remembered: 'yes' as never } },
      'trace.approval.remembered',
    ],
    ['zero attempts', { attempts: 0 }, 'trace.attempts'],
    ['an empty replayedFrom', { replayedFrom: '' }, 'trace.replayedFrom'],
    ['an idempotency key that is not a string', { idempotencyKey: 42 as never }, 'trace.idempotencyKey'],
    ['an idempotency key of 201 characters', { idempotencyKey: 'k'.repeat(201) }, 'trace.idempotencyKey'],
  ])('refuses a trace with %s', (_label, overrides, field) => {
    const ctx = createExecutionContext({ planId: 'plan-1' });
    const error = validationError(() => ctx.recordTrace(trace(overrides)));
    expect(error.field).toBe(field);
    expect(error.planId).toBe('plan-1');
    expect(ctx.traces).toHaveLength(0);
  });

  it('keeps the approval, attempts and replay of a trace; copies and makes safe an approval that is not frozen', () => {
    const ctx = createExecutionContext({ planId: 'plan-1' });
    const approval = {
      decision: 'denied' as const,
      decidedBy: 'alice',
      waitedMs: 12.5,
      requestId: '3',
      reason: 'see https://bob:hunter2@example.com/x',
      extra: 'dropped',
    };
    ctx.recordTrace(trace({ approval, attempts: 2, replayedFrom: 'exec-0', idempotencyKey: 'k'.repeat(43) }));
    const recorded = ctx.traces[0]!;
    expect(recorded.approval).toEqual({ decision: 'denied', decidedBy: 'alice', waitedMs: 12.5, requestId: '3', reason: 'see https://***@example.com/x' });
    expect(Object.isFrozen(recorded.approval)).toBe(true);
    expect(recorded).toMatchObject({ attempts: 2, replayedFrom: 'exec-0', idempotencyKey: 'k'.repeat(43) });

    // A frozen trace with a frozen approval (what the runtime records) is kept as it is.
    const frozen = Object.freeze({
      ...trace({ executionId: 'exec-2' }),
      approval: Object.freeze({ decision: 'approved' as const, decidedBy: 'rule:docs', scope: 'once' as const, waitedMs: 0 }),
    });
    ctx.recordTrace(frozen);
    expect(ctx.traces[1]).toBe(frozen);
  });

  it('accepts timestamps with an offset and without fractions', () => {
    const ctx = createExecutionContext({ planId: 'plan-1' });
    ctx.recordTrace(trace({ startedAt: '2025-01-02T03:04:05+02:00', endedAt: '2025-01-02T03:04Z' }));
    expect(ctx.traces).toHaveLength(1);
  });
});

describe('PlanContext.forExecution', () => {
  it('shares the plan and its records, with its own execution id, tool name and token', () => {
    const ctx = createExecutionContext({ planId: 'plan-1', policy: { requireCheckpoint: true }, resources: [workspace], metadata: { a: 1 } });
    const token = ctx.cancellationToken.child({ timeoutMs: 1000 });
    const view = ctx.forExecution({ executionId: 'exec-1', toolName: 'builtin.fs.write', cancellationToken: token });
    expect(view.planId).toBe('plan-1');
    expect(view.policy).toBe(ctx.policy);
    expect(view.resources).toBe(ctx.resources);
    expect(view.metadata).toBe(ctx.metadata);
    expect(view.getResource('workspace')).toBe(ctx.getResource('workspace'));
    expect(view.executionId).toBe('exec-1');
    expect(view.toolName).toBe('builtin.fs.write');
    expect(view.cancellationToken).toBe(token);
    expect(view.signal).toBe(token.signal);
    expect(ctx.executionId).toBeUndefined();
    expect(view.changes).toBe(ctx.changes);
    token.dispose();
  });

  it("gives a tool a narrow view: no traces, no recording in another's name, no further views", () => {
    const ctx = createExecutionContext({ planId: 'plan-1' });
    const view = ctx.forExecution({ executionId: 'exec-1', toolName: 'echo' }) as unknown as Record<string, unknown>;
    for (const member of ['traces', 'recordTrace', 'recordChange', 'forExecution']) expect(view[member]).toBeUndefined();
    expect(Object.keys(view)).not.toContain('records');
  });

  it("attributes a reported change to the view's tool and execution, whatever the change says", () => {
    const ctx = createExecutionContext({ planId: 'plan-1' });
    const view = ctx.forExecution({ executionId: 'exec-1', toolName: 'builtin.fs.write' });
    view.reportChange({ kind: 'create', target: '/tmp/a', toolName: 'someone.else', executionId: 'forged' } as never);
    view.reportChange({ kind: 'modify', target: '/tmp/b', at: '2026-01-01T00:00:00.000Z' });
    expect(ctx.changes.map(({ kind, toolName, executionId }) => ({ kind, toolName, executionId }))).toEqual([
      { kind: 'create', toolName: 'builtin.fs.write', executionId: 'exec-1' },
      { kind: 'modify', toolName: 'builtin.fs.write', executionId: 'exec-1' },
    ]);
    expect(ctx.changes[1]?.at).toBe('2026-01-01T00:00:00.000Z');
    expect(Number.isNaN(Date.parse(ctx.changes[0]?.at ?? ''))).toBe(false);
    expect(() => view.reportChange({ kind: 'explode', target: '/tmp/c' } as never)).toThrow(/kind/);
    expect(() => view.reportChange(null as never)).toThrow(/reportChange expects/);
  });

  it('refuses a change reported outside an execution, and requires attribution on the plan context', () => {
    const ctx = createExecutionContext({ planId: 'plan-1' });
    const activation = ctx.forExecution({ toolName: 'echo' });
    expect(activation.executionId).toBeUndefined();
    expect(validationError(() => activation.reportChange({ kind: 'other', target: 'x' })).field).toBe('executionId');
    expect(validationError(() => ctx.reportChange({ kind: 'other', target: 'x' })).field).toBe('change.toolName');
    ctx.reportChange({ kind: 'other', target: 'x', toolName: 'echo', executionId: 'exec-9' });
    expect(ctx.changes).toHaveLength(1);
  });

  it("uses the plan's token when given none", () => {
    const ctx = createExecutionContext();
    const view = ctx.forExecution({ executionId: 'exec-1', toolName: 'echo' });
    expect(view.cancellationToken).toBe(ctx.cancellationToken);
  });

  it("cancels an execution's token, not the plan's, on a per-execution deadline", async () => {
    const ctx = createExecutionContext();
    const view = ctx.forExecution({ executionId: 'exec-1', toolName: 'slow', cancellationToken: ctx.cancellationToken.child({ timeoutMs: 5 }) });
    await new Promise((resolve) => view.cancellationToken.onCancel(resolve));
    expect(() => view.cancellationToken.check({ toolName: view.toolName, planId: view.planId })).toThrow(
      /Tool "slow" in plan ".*" was cancelled: timed out after 5 ms/,
    );
    expect(ctx.cancellationToken.isCancelled).toBe(false);
    expect(getCancellationListenerCounts(ctx.cancellationToken).children).toBe(0);
  });

  it.each<[string, unknown, string]>([
    ['an empty execution id', { executionId: '', toolName: 'echo' }, 'executionId'],
    ['an empty tool name', { executionId: 'exec-1', toolName: '' }, 'toolName'],
    ['a token that is not a token', { executionId: 'exec-1', toolName: 'echo', cancellationToken: 5 }, 'cancellationToken'],
    ['an idempotency key that is neither a string nor a function', { executionId: 'exec-1', toolName: 'echo', idempotencyKey: 5 }, 'idempotencyKey'],
    ['an empty idempotency key', { executionId: 'exec-1', toolName: 'echo', idempotencyKey: '' }, 'idempotencyKey'],
    ['an idempotency key without an execution', { toolName: 'echo', idempotencyKey: 'k' }, 'idempotencyKey'],
    ['no options', undefined, 'options'],
  ])('refuses %s', (_label, options, field) => {
    const ctx = createExecutionContext({ planId: 'plan-1' });
    const error = validationError(() => ctx.forExecution(options as never));
    expect(error.field).toBe(field);
    expect(error.planId).toBe('plan-1');
  });

  it("gives an execution's view its idempotency key, computed on first read and kept", () => {
    const ctx = createExecutionContext({ planId: 'plan-1' });
    let computed = 0;
    const view = ctx.forExecution({ executionId: 'exec-1', toolName: 'echo', idempotencyKey: () => `key-${++computed}` });
    expect(computed).toBe(0);
    expect(view.idempotencyKey).toBe('key-1');
    expect(view.idempotencyKey).toBe('key-1');
    expect(computed).toBe(1);
    expect(ctx.forExecution({ executionId: 'exec-2', toolName: 'echo', idempotencyKey: 'given' }).idempotencyKey).toBe('given');
    expect(ctx.forExecution({ executionId: 'exec-3', toolName: 'echo' }).idempotencyKey).toBeUndefined();
    expect(ctx.idempotencyKey).toBeUndefined();
  });

  it("copies nothing per execution: 100,000 views with child tokens share the plan's records and leave no child behind", () => {
    // What a view costs is measured by tools/bench/context.bench.js; here, what it does.
    const ctx = createExecutionContext({ policy: { readOnly: true }, metadata: { requestedBy: 'alice' } });
    const plan = ctx.cancellationToken;
    let shared = 0;
    for (let index = 0; index < 100_000; index++) {
      const token = plan.child();
      const view = ctx.forExecution({ executionId: `exec-${index}`, toolName: 'echo', cancellationToken: token });
      view.cancellationToken.check();
      if (
        view.policy === ctx.policy &&
        view.resources === ctx.resources &&
        view.metadata === ctx.metadata &&
        view.changes === ctx.changes &&
        !('traces' in view) &&
        view.cancellationToken === token &&
        view.executionId === `exec-${index}`
      ) {
        shared++;
      }
      token.dispose();
    }
    expect(shared).toBe(100_000);
    expect(getCancellationListenerCounts(plan).children).toBe(0);
  });
});

describe('recordTrace storage', () => {
  const base = {
    executionId: 'exec-1',
    planId: 'p-store',
    toolName: 'tool',
    startedAt: '2026-12-02T10:00:00.000Z',
    endedAt: '2026-12-02T10:00:00.001Z',
    durationMs: 1,
    resultSizeBytes: 2,
    success: true,
  };

  it('keeps a frozen trace as given, after validating it', () => {
    const ctx = createExecutionContext({ planId: 'p-store' });
    const frozen = Object.freeze({ ...base });
    ctx.recordTrace(frozen);
    expect(ctx.traces[0]).toBe(frozen);
    expect(() => ctx.recordTrace(Object.freeze({ ...base, durationMs: -1 }))).toThrow(/durationMs/);
    expect(() => ctx.recordTrace(Object.freeze({ ...base, error: Object.freeze({ name: 'E' }) }) as never)).toThrow(/error/);
  });

  it('copies and freezes a trace that is not frozen, keeping only the known fields', () => {
    const ctx = createExecutionContext({ planId: 'p-store' });
    const mutable = { ...base, extra: 'dropped' };
    ctx.recordTrace(mutable);
    const stored = ctx.traces[0] as unknown as Record<string, unknown>;
    expect(stored).not.toBe(mutable);
    expect(Object.isFrozen(stored)).toBe(true);
    expect(stored['extra']).toBeUndefined();
    mutable.durationMs = 99;
    expect(stored['durationMs']).toBe(1);
  });
});
