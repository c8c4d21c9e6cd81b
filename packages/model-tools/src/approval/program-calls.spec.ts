import { ProgramCalls, inputKeyOf, type PendingProgramCall } from './program-calls';

const pending = (step: string): PendingProgramCall => ({ toolName: 'issues.create', input: { title: step }, step, resumeStep: `${step}#resume-1` });
const done = { ok: true };

describe('ProgramCalls: what a framework adapter keeps between asking about a program call and running it', () => {
  it('hands each entry out once, by plan and call id', () => {
    const calls = new ProgramCalls();
    calls.set('p1', 'c1', { kind: 'pending', inputKey: 'k', pending: pending('c1/1') });
    calls.set('p2', 'c1', { kind: 'done', inputKey: 'k', outcome: done });
    expect(calls.get('p1', 'c1')?.kind).toBe('pending');
    expect(calls.take('p1', 'c1')?.kind).toBe('pending');
    expect(calls.take('p1', 'c1')).toBeUndefined();
    expect(calls.take('p2', 'c1')?.kind).toBe('done');
    calls.setContinuation('p1', 'program', pending('c1/2'));
    expect(calls.takeContinuation('p1', 'program')?.step).toBe('c1/2');
    expect(calls.takeContinuation('p1', 'program')).toBeUndefined();
  });

  it('keeps at most 256 calls a plan and 1,000 plans: a framework that never runs what it asked about cannot grow it', () => {
    const calls = new ProgramCalls();
    for (let index = 0; index < 300; index++) calls.set('p', `c${index}`, { kind: 'done', inputKey: 'k', outcome: done });
    // The 44 oldest are gone, the 256 newest kept.
    expect(calls.get('p', 'c0')).toBeUndefined();
    expect(calls.get('p', 'c43')).toBeUndefined();
    expect(calls.get('p', 'c44')?.kind).toBe('done');
    expect(calls.get('p', 'c299')?.kind).toBe('done');
    for (let index = 0; index < 1_001; index++) calls.setContinuation(`plan-${index}`, 'program', pending(`s${index}`));
    expect(calls.takeContinuation('plan-0', 'program')).toBeUndefined();
    expect(calls.takeContinuation('plan-1000', 'program')?.step).toBe('s1000');
    calls.forgetPlan('plan-999');
    expect(calls.takeContinuation('plan-999', 'program')).toBeUndefined();
  });

  it('keys a program by its canonical arguments, whatever the order of their keys', () => {
    expect(inputKeyOf({ code: 'x', b: 1 })).toBe(inputKeyOf({ b: 1, code: 'x' }));
    expect(inputKeyOf(10n)).toBe('<not JSON>');
  });
});
