import { normalizeCapability } from '@ca/domain';
import type { ApprovalRequest } from '@ca/tool-lifecycle';
import { RemoteApprovals } from './remote-approvals';

function request(id: string, toolName = 'files.write'): ApprovalRequest {
  return {
    id,
    planId: 'p',
    executionId: `e${id}`,
    toolName,
    description: '',
    source: 'custom',
    capability: normalizeCapability({}),
    arguments: {},
    fingerprint: 'f',
    reason: { source: 'policy', match: 'always', text: 'always' },
  };
}

describe('RemoteApprovals', () => {
  it('answers the only pending request when no id is given, with who answered', async () => {
    const remote = new RemoteApprovals();
    const waiting = remote.wait(request('1'), new AbortController().signal);
    expect(remote.answer(JSON.stringify({ decision: 'approve', scope: 'tool', by: 'bob' }))).toBe('ok 1 files.write');
    expect(await waiting).toEqual({ decision: 'approve', scope: 'tool', decidedBy: 'bob (agents plan approve)' });
    expect(remote.pending()).toEqual([]);
  });

  it('needs an id when several are pending, and names them; an unknown id names the pending ones', async () => {
    const remote = new RemoteApprovals();
    const one = remote.wait(request('1'), new AbortController().signal);
    const two = remote.wait(request('2', 'mail.send'), new AbortController().signal);
    expect(remote.answer('{"decision":"approve"}')).toBe('error 2 requests are pending; name one: 1 (files.write), 2 (mail.send)');
    expect(remote.answer('{"decision":"approve","requestId":"9"}')).toBe('error no pending request has id "9"; pending: 1 (files.write), 2 (mail.send)');
    expect(remote.answer(JSON.stringify({ decision: 'deny', requestId: '2', reason: `  ${'r'.repeat(600)}  `, by: ' eve ' }))).toBe('ok 2 mail.send');
    expect(await two).toEqual({ decision: 'deny', reason: 'r'.repeat(500), decidedBy: 'eve (agents plan deny)' });
    expect(remote.answer('{"decision":"approve","requestId":"1"}')).toBe('ok 1 files.write');
    expect(await one).toEqual({ decision: 'approve', scope: 'once', decidedBy: 'someone (agents plan approve)' });
  });

  it.each([
    ['not json', 'error the answer is not JSON'],
    ['{"decision":"maybe"}', "error the answer's decision must be approve or deny"],
    ['{"decision":"approve","scope":"forever"}', 'error the scope must be once, tool or call'],
    ['{"decision":"approve","requestId":3}', 'error the request id must be a string'],
    ['{"decision":"approve"}', 'error no approval request is pending'],
  ])('refuses %s', (payload, reply) => {
    expect(new RemoteApprovals().answer(payload)).toBe(reply);
  });

  it('a withdrawn request is no longer pending and resolves with no answer', async () => {
    const remote = new RemoteApprovals();
    const controller = new AbortController();
    const waiting = remote.wait(request('1'), controller.signal);
    controller.abort();
    expect(await waiting).toBeUndefined();
    expect(remote.answer('{"decision":"approve","requestId":"1"}')).toBe('error no pending request has id "1"; none is pending');
  });
});
