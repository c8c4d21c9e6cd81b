import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { loopbackCommand } from './testing/index';

// A real restate-server, an effects server, three hosts behind one forwarder, all in a loopback-only
// network namespace (the server looks up its release on the internet at every start): the scenario
// SIGKILLs the host of a durable plan inside a non-idempotent call, then the host an approval was
// asked on, answers from elsewhere, and cancels the last step. It prints what happened as JSON.
interface Report {
  readonly error?: string;
  readonly outcomeUnknown: { requestId: string; toolName: string; step: string; outcomeUnknown: { host: string }; killed: string; reason: string };
  readonly statusWhileAsking: { host: string; state: string; resumes: number };
  readonly listed: { planId: string; host: string; state: string; resumes: number; pending: number }[];
  readonly approval: { requestId: string; askedOn: string };
  readonly slowHost: string;
  readonly cancelToToolMs: number;
  readonly mailHost: string;
  readonly output: { error?: string; message?: string };
  readonly effects: { kind: string; host: string; applied: boolean }[];
}

describe('durable plans across hosts that are killed', () => {
  let report: Report;

  beforeAll(() => {
    const { command, args } = loopbackCommand(process.execPath, [join(__dirname, '__fixtures__', 'scenario.js')]);
    const run = spawnSync(command, args, { encoding: 'utf8', timeout: 240_000, maxBuffer: 16 * 1024 * 1024 });
    const last = run.stdout.trim().split('\n').pop() ?? '';
    report = JSON.parse(last.startsWith('{') ? last : JSON.stringify({ error: `no report: ${run.stderr.slice(-2_000)}` })) as Report;
  }, 300_000);

  it('ran the scenario to its end', () => {
    expect(report.error).toBeUndefined();
  });

  it('a call in flight in a non-idempotent tool when its host died is not run again: a person is asked, with the call, its key and its host', () => {
    expect(report.outcomeUnknown).toMatchObject({ toolName: 'counter.add', step: 'add', outcomeUnknown: { host: report.outcomeUnknown.killed } });
    expect(report.outcomeUnknown.reason).toMatch(/^outcome unknown: the call was in flight on host-/);
    // Denied: the effect happened once, on the host that died.
    expect(report.effects.filter((effect) => effect.kind === 'add')).toEqual([{ kind: 'add', host: report.outcomeUnknown.killed, applied: true }]);
  });

  it('lists the plan with its host, its state and how many times it was resumed', () => {
    expect(report.statusWhileAsking).toMatchObject({ state: 'waiting for approval', resumes: 1 });
    expect(report.statusWhileAsking.host).not.toBe(report.outcomeUnknown.killed);
    expect(report.listed).toEqual([{ planId: 'p1', host: report.statusWhileAsking.host, state: 'waiting for approval', resumes: 1, pending: 1 }]);
  });

  it('an approval asked on a host that was then killed, answered from elsewhere: the plan goes on on another host', () => {
    expect(report.approval.requestId).toBe('approval/mail/call/1');
    expect(report.mailHost).toBeDefined();
    expect(report.mailHost).not.toBe(report.approval.askedOn);
    expect(report.effects.filter((effect) => effect.kind === 'mail')).toHaveLength(1);
  });

  it('no effect happened twice: the idempotent put applied once', () => {
    expect(report.effects.filter((effect) => effect.kind === 'put' && effect.applied)).toHaveLength(1);
  });

  it('a cancel from another process reaches the running tool of a resumed plan (well within 500 ms here; bound generous)', () => {
    expect(report.cancelToToolMs).toBeLessThan(5_000);
    expect(report.output).toMatchObject({ error: 'DURABLE_PLAN_FAILED', message: expect.stringContaining("plan 'p1' was cancelled") });
  });
});
