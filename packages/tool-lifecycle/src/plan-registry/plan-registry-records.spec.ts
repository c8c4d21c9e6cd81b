import {
  PlanRegistryError,
  checkPlanControlMessage,
  checkPlanProgress,
  checkPlanRegistration,
  createApprovalMessage,
  createCancelMessage,
  parsePlanControlMessage,
  parseRegisteredPlan,
  planControlMessageKey,
  planIdProblem,
  type PlanRegistration,
} from '../index';

const registration: PlanRegistration = {
  planId: 'plan-1',
  policy: { readOnly: true, requireCheckpoint: false, network: 'deny' },
  startedAt: '2026-05-01T10:00:00.000Z',
  tools: ['builtin.fs.read'],
  stepsDone: 2,
  labels: { file: 'tidy.yaml' },
};
const record = { ...registration, host: 'host-a', pid: 4242, heartbeatAt: '2026-05-01T10:00:05.000Z' };

function invalid(fn: () => unknown): PlanRegistryError {
  try {
    fn();
  } catch (error) {
    if (PlanRegistryError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a PlanRegistryError');
}

describe('plan registry records', () => {
  it('keeps only the known fields of a registration, frozen', () => {
    const checked = checkPlanRegistration({ ...registration, secret: 'x' } as PlanRegistration, 'memory');
    expect(checked).toEqual(registration);
    expect(Object.isFrozen(checked)).toBe(true);
    expect(Object.isFrozen(checked.labels)).toBe(true);
  });

  it.each([
    [{ planId: '' }, 'planId must not be empty'],
    [{ planId: 'a\nb' }, 'planId must not contain control characters'],
    [{ planId: 'x'.repeat(201) }, 'planId must be at most 200 characters; got 201'],
    [{ policy: { readOnly: { nested: true } } }, 'policy.readOnly must be a string'],
    [{ tools: Array.from({ length: 101 }, (_, index) => `t${index}`) }, 'tools must list at most 100 names; got 101'],
    [{ stepsDone: -1 }, 'stepsDone must be a whole number ≥ 0'],
    [{ labels: Object.fromEntries(Array.from({ length: 21 }, (_, index) => [`k${index}`, 'v'])) }, 'at most 20 labels are allowed; got 21'],
    [{ labels: { file: '\u001b[2J' } }, "label 'file' must not contain control characters"],
    [{ startedAt: 'yesterday' }, "startedAt must be an ISO-8601 time; got 'yesterday'"],
  ])('refuses a registration with %j', (change, reason) => {
    const error = invalid(() => checkPlanRegistration({ ...registration, ...change } as PlanRegistration, 'redis://127.0.0.1:6379'));
    expect(error.code).toBe('PLAN_REGISTRY_INVALID_ARGUMENT');
    expect(error.message).toContain(`Plan registry redis://127.0.0.1:6379`);
    expect(error.message).toContain(reason);
  });

  it('reads a record written by another process, and skips one that is malformed', () => {
    expect(parseRegisteredPlan(record)).toEqual(record);
    for (const bad of [
      null,
      'text',
      [],
      { ...record, pid: 0 },
      { ...record, host: '' },
      { ...record, heartbeatAt: 7 },
      { ...record, tools: 'all' },
      { ...record, planId: undefined },
    ]) {
      expect(parseRegisteredPlan(bad)).toBeUndefined();
    }
  });

  it('checks a control message before it is sent, and reads one that came over the wire', () => {
    const message = createCancelMessage('plan-1', 'stop', 'ops pid 1');
    expect(checkPlanControlMessage(message, 'memory')).toEqual(message);
    expect(parsePlanControlMessage({ ...message, extra: 1 })).toEqual(message);
    expect(planControlMessageKey(message)).toBe('cancel');
    expect(invalid(() => checkPlanControlMessage({ ...message, reason: 'r'.repeat(1_001) }, 'memory')).message).toContain(
      'reason must be at most 1000 characters',
    );
    expect(invalid(() => checkPlanControlMessage({ ...message, kind: 'approve' } as never, 'memory')).message).toContain("kind must be 'cancel' or 'approval'");
    // A cancel's fields do not make an answer to an approval request.
    expect(parsePlanControlMessage({ ...message, kind: 'approval' })).toBeUndefined();
    expect(parsePlanControlMessage({ ...message, kind: 'pause' })).toBeUndefined();
    expect(parsePlanControlMessage({ ...message, sentAt: 'never' })).toBeUndefined();
    expect(parsePlanControlMessage('{"kind":"cancel"}')).toBeUndefined();
  });

  it('checks an answer to an approval request, keys it by its request, and reads it back with only its known fields', () => {
    const approve = createApprovalMessage({ planId: 'plan-1', requestId: '3', decision: 'approve', scope: 'call', sentBy: 'bob' });
    expect(approve).toEqual({
      kind: 'approval',
      planId: 'plan-1',
      requestId: '3',
      decision: 'approve',
      scope: 'call',
      sentAt: expect.any(String),
      sentBy: 'bob',
    });
    expect(Date.parse(approve.sentAt)).not.toBeNaN();
    expect(checkPlanControlMessage(approve, 'memory')).toEqual(approve);
    expect(Object.isFrozen(checkPlanControlMessage(approve, 'memory'))).toBe(true);
    expect(parsePlanControlMessage({ ...approve, extra: 'dropped' })).toEqual(approve);
    expect(planControlMessageKey(approve)).toBe('approval:3');
    const deny = createApprovalMessage({ planId: 'plan-1', requestId: '4', decision: 'deny', reason: 'not now' });
    expect(parsePlanControlMessage(JSON.parse(JSON.stringify(deny)))).toEqual(deny);
    expect(planControlMessageKey(deny)).toBe('approval:4');
    for (const [bad, problem] of [
      [{ ...approve, requestId: '' }, 'requestId must not be empty'],
      [{ ...approve, requestId: 'r'.repeat(65) }, 'requestId must be at most 64 characters'],
      [{ ...approve, requestId: 'one\nmore' }, 'requestId must not contain control characters'],
      [{ ...approve, decision: 'maybe' }, "decision must be 'approve' or 'deny'"],
      [{ ...approve, scope: 'forever' }, "scope must be 'once', 'tool' or 'call'"],
      [{ ...deny, scope: 'tool' }, 'scope is for an approval only'],
      [{ ...approve, reason: 'because' }, 'reason is for a denial only'],
      [{ ...deny, reason: 'r'.repeat(1_001) }, 'reason must be at most 1000 characters'],
      [{ ...approve, sentBy: 7 }, 'sentBy must be a string'],
    ] as const) {
      expect(invalid(() => checkPlanControlMessage(bad as never, 'memory')).message).toContain(problem);
      expect(parsePlanControlMessage(bad)).toBeUndefined();
    }
  });

  it('keeps the waiting approval requests of a registration and a heartbeat, within their limits', () => {
    const pendingApprovals = [{ requestId: '1', toolName: 'files.write', askedAt: '2026-05-01T10:00:00.000Z' }];
    expect(checkPlanRegistration({ ...registration, pendingApprovals }, 'memory').pendingApprovals).toEqual(pendingApprovals);
    expect(checkPlanRegistration({ ...registration, pendingApprovals: [] }, 'memory')).not.toHaveProperty('pendingApprovals');
    expect(parseRegisteredPlan({ ...record, pendingApprovals })?.pendingApprovals).toEqual(pendingApprovals);
    expect(checkPlanProgress({ tools: ['a'], stepsDone: 2, pendingApprovals }, 'memory', 'plan-1')).toEqual({ tools: ['a'], stepsDone: 2, pendingApprovals });
    expect(checkPlanProgress({ tools: [], stepsDone: 0, pendingApprovals: [] }, 'memory', 'plan-1')).toEqual({ tools: [], stepsDone: 0 });
    const many = Array.from({ length: 21 }, (_, index) => ({ ...pendingApprovals[0]!, requestId: String(index) }));
    expect(invalid(() => checkPlanProgress({ tools: [], stepsDone: 0, pendingApprovals: many }, 'memory', 'plan-1')).message).toContain('at most 20 requests');
    expect(invalid(() => checkPlanProgress({ tools: [], stepsDone: -1 }, 'memory', 'plan-1')).message).toContain('stepsDone must be a whole number');
    for (const bad of [{ requestId: 1 }, { ...pendingApprovals[0], askedAt: 'later' }, { ...pendingApprovals[0], toolName: 'x'.repeat(257) }]) {
      expect(parseRegisteredPlan({ ...record, pendingApprovals: [bad] })).toBeUndefined();
    }
  });

  it('says why a plan id cannot name a plan', () => {
    expect(planIdProblem('plan-1')).toBeUndefined();
    expect(planIdProblem(42)).toBe('planId must be a string; got number 42');
  });

  it('builds every message from its fields, with advice', () => {
    expect(new PlanRegistryError({ code: 'PLAN_REGISTRY_PLAN_NOT_FOUND', registry: 'memory', planId: 'p' }).message).toBe(
      "No running plan has id 'p' in plan registry memory. List the running plans to see their ids; a plan that has ended, or whose process died, is no longer listed.",
    );
    const unavailable = new PlanRegistryError({
      code: 'PLAN_REGISTRY_UNAVAILABLE',
      registry: 'redis://h:6379',
      reason: 'connect ECONNREFUSED',
      advice: 'Start it.',
    });
    expect(unavailable.message).toBe('Plan registry redis://h:6379 cannot be reached: connect ECONNREFUSED. Start it.');
    expect(unavailable.toJSON()).toEqual({ name: 'PlanRegistryError', code: 'PLAN_REGISTRY_UNAVAILABLE', message: unavailable.message });
  });
});
