import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

// examples/durable-agent-loop.mjs: the AI SDK's tool loop (a scripted model) as a durable plan on a real
// restate-server, its host SIGKILLed in the middle of a turn and the loop resumed on a second host. The
// example checks what happened and exits 0 only when every check holds; this runs it as a user would.
const example = path.resolve(__dirname, '..', '..', '..', 'examples', 'durable-agent-loop.mjs');

describe('examples/durable-agent-loop.mjs', () => {
  let run: { status: number | null; stdout: string; stderr: string };

  beforeAll(() => {
    // The example needs the built packages and the restate-server binary (a devDependency).
    expect(existsSync(require.resolve('@restatedev/restate-server-linux-x64/bin/restate-server'))).toBe(true);
    expect(existsSync(path.resolve(__dirname, '..', '..', '..', 'packages', 'plan-restate', 'dist', 'index.js'))).toBe(true);
    const result = spawnSync(process.execPath, [example], { encoding: 'utf8', timeout: 170_000 });
    run = { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }, 180_000);

  it('runs to its end and every check holds (exit 0)', () => {
    expect({ status: run.status, failed: run.stdout.split('\n').filter((line) => line.includes('FAIL')) }).toEqual({ status: 0, failed: [] });
  });

  it('the host was killed mid-turn and another host finished the loop', () => {
    expect(run.stdout).toContain('host-a SIGKILLed in the middle of turn 2, inside build.wait');
    expect(run.stdout).toContain('the loop ended on host-b: "Done: notes drafted and the build is green."');
  });

  it('no tool ran twice: the non-idempotent append ran once, its result replayed from the journal', () => {
    expect(run.stdout).toContain('ok   notes.append ran once (1 line(s) in the notes)');
    expect(run.stdout).toContain('ok   the resumed loop got notes.append’s result from the journal');
  });

  it('the idempotent tool in flight when the host died ran again on the next host', () => {
    expect(run.stdout).toContain('ok   build.wait, idempotent, in flight when host-a died, ran again on host-b (host-a, host-b)');
  });
});
