import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { loopbackCommand } from '@ca/plan-restate/testing';

// A real restate-server, a forwarder in front of two `agents worker` processes, and the `agents` command in
// other processes, all in a loopback-only network namespace (the server looks up its release on the internet
// at every start): src/__fixtures__/durable/scenario.js prints what happened as JSON.
interface Run {
  readonly code: number | string;
  readonly stdout: string;
  readonly stderr: string;
}
interface Report {
  readonly error?: string;
  readonly debug?: unknown;
  readonly listed: { host: string; state: string; resumes: number; pending: string[] };
  readonly listTable: string;
  readonly journal: { entries: number; stateRows: number; found: string[]; steps: string[] };
  readonly approve: Run;
  readonly run: Run;
  readonly file: string;
  readonly counts: string[];
  readonly gateStarts: string[];
  readonly pids: { a: number; b: number };
  readonly cancel: Run;
  readonly cancelled: Run & { toolSawSignal: boolean };
  readonly cancelAgain: Run;
  readonly drain: Run;
}

describe('agents worker and agents plan run --durable, with a worker killed mid-plan', () => {
  let report: Report;

  beforeAll(() => {
    const { command, args } = loopbackCommand(process.execPath, [path.join(__dirname, '__fixtures__', 'durable', 'scenario.js')]);
    const run = spawnSync(command, args, { encoding: 'utf8', timeout: 240_000, maxBuffer: 16 * 1024 * 1024 });
    const last = run.stdout.trim().split('\n').pop() ?? '';
    report = JSON.parse(last.startsWith('{') ? last : JSON.stringify({ error: `no report: ${run.stderr.slice(-2_000)}` })) as Report;
  }, 300_000);

  it('ran the scenario to its end', () => {
    expect(report.error).toBeUndefined();
  });

  it('the plan killed with its worker is resumed by the other worker and ends as a plain run would (exit 0, its steps)', () => {
    expect(report.run.code).toBe(0);
    expect(report.run.stdout).toMatch(/Durable plan resumed succeeded; it ended on worker-b/);
    expect(report.run.stderr).toMatch(/on worker-b \(resumed \d+ times?\)/);
    // The gate (idempotent) was in flight when worker a died: run again on worker b with the same key.
    expect(report.gateStarts).toEqual([String(report.pids.a), String(report.pids.b)]);
  });

  it('no step ran twice: the non-idempotent counter counted once, on the worker that was killed', () => {
    expect(report.counts).toEqual([String(report.pids.a)]);
  });

  it('rollback after the resume restores the file changed before the kill (undo data from the journal, not the dead host)', () => {
    expect(report.file).toBe('original');
    expect(report.run.stdout).toMatch(/undo\s+rollback start\s+ok/);
  });

  it('agents plan list in another process shows the durable plan, its host, its state and how many times it was resumed', () => {
    expect(report.listed).toEqual({ host: 'worker-b', state: 'waiting for approval', resumes: 1, pending: ['approval/ask/call/1'] });
    expect(report.listTable).toMatch(/resumed\s+worker-b\s+waiting for approval\s+1\s+/);
    expect(report.run.stderr).toContain('agents plan approve resumed approval/ask/call/1');
  });

  it('agents plan approve in another process answers the durable plan', () => {
    expect(report.approve).toMatchObject({ code: 0, stdout: 'Approved request approval/ask/call/1 of durable plan resumed.' });
  });

  it('agents plan cancel in another process reaches the running tool; the command that follows the plan exits 130', () => {
    expect(report.cancel.code).toBe(0);
    expect(report.cancelled.toolSawSignal).toBe(true);
    expect(report.cancelled.code).toBe(130);
    expect(report.cancelled.stdout).toMatch(/Durable plan cancelled was cancelled/);
    // Once it has ended, it is no running plan any more: exit 4.
    expect(report.cancelAgain.code).toBe(4);
  });

  it('with a journal key, Restate holds neither the arguments nor the outputs nor the undo data in clear', () => {
    expect(report.journal.entries).toBeGreaterThan(10);
    expect(report.journal.found).toEqual([]);
  });

  it('journals a call that may not run again silently in two entries, one the resume rules would run again in one', () => {
    // test.count is not idempotent: its entry comes before the call, so that a resumed plan knows it was in flight.
    expect(report.journal.steps).toEqual(expect.arrayContaining(['call write', 'decide count', 'call count', 'call secret', 'call gate']));
    // test.echo and test.gate (and builtin.fs.write) are idempotent: one entry each, with their key and outcome.
    expect(report.journal.steps).not.toContain('decide secret');
    expect(report.journal.steps).not.toContain('decide gate');
  });

  it('SIGTERM drains the worker: it says so and exits 0', () => {
    expect(report.drain.code).toBe(0);
    expect(report.drain.stderr).toMatch(/draining \(\d+ running/);
    expect(report.drain.stderr).toMatch(/agents worker worker-b: stopped/);
  });
});
