import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';

// The built `agents` binary as separate processes: a plan run, stopped, and
// run again by a new process with the same plan id, as after a crash or a fix.
const bin = path.resolve(__dirname, '..', 'dist', 'bin.js');

jest.setTimeout(120_000);
afterEach(() => removeTemporaryFolders());

function setup() {
  const folder = temporaryFolder();
  fs.mkdirSync(path.join(folder, 'work'));
  const stateDir = path.join(folder, 'state');
  writeFixture(
    folder,
    'agents.config.json',
    JSON.stringify({ resources: [{ id: 'work', path: './work', access: 'write' }], builtin: { tools: ['builtin.fs.read', 'builtin.fs.write'] } }),
  );
  writeFixture(
    folder,
    'resume.yaml',
    [
      'id: resume-me',
      'policy: { approval: { capabilities: [writes] } }',
      'steps:',
      '  - { id: write, tool: builtin.fs.write, input: { resource: work, path: out.txt, content: "done\\n" } }',
      '  - { id: needs-input, tool: builtin.fs.read, input: { resource: work, path: input.txt } }',
    ].join('\n'),
  );
  const agents = (args: string[]) =>
    spawnSync(process.execPath, [bin, '--state-dir', stateDir, ...args], { cwd: folder, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return { folder, stateDir, agents };
}

/** First process: waits for approval, is approved for the call from another process, then fails at step 2 (its input is missing). */
async function firstRun(folder: string, stateDir: string, agents: ReturnType<typeof setup>['agents']): Promise<void> {
  const child = spawn(process.execPath, [bin, '--state-dir', stateDir, 'plan', 'run', 'resume.yaml', '--await-approval'], {
    cwd: folder,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const deadline = Date.now() + 60_000;
  while (!stderr.includes('approval needed: request 1 of plan resume-me')) {
    if (Date.now() > deadline) throw new Error(`the plan never asked:\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const approve = agents(['plan', 'approve', 'resume-me', '1', '--for', 'call']);
  expect(approve.stdout).toBe('Approved request 1 (builtin.fs.write) of plan resume-me for the rest of the plan (call).\n');
  expect(await exit).toBe(1);
}

describe('approvals across processes', () => {
  it('a plan restarted by a new process with the same id does not ask again for what was approved', async () => {
    const { folder, stateDir, agents } = setup();
    await firstRun(folder, stateDir, agents);
    fs.writeFileSync(path.join(folder, 'work', 'input.txt'), 'here now');
    // Off a terminal and without --await-approval: had it asked, the call would be refused.
    const again = agents(['plan', 'run', 'resume.yaml', '--json']);
    expect(again.status).toBe(0);
    const report = JSON.parse(again.stdout) as { traces: { toolName: string; approval?: unknown }[] };
    expect(report.traces[0]).toMatchObject({ toolName: 'builtin.fs.write', approval: { decision: 'approved', scope: 'call', remembered: true } });
  });

  it('an edited approval entry is refused: the call is asked about again (and, with nobody to ask, refused)', async () => {
    const { folder, stateDir, agents } = setup();
    await firstRun(folder, stateDir, agents);
    const file = path.join(stateDir, 'approvals', 'resume-me.jsonl');
    const [line] = fs.readFileSync(file, 'utf8').trim().split('\n');
    const entry = JSON.parse(line as string) as Record<string, unknown>;
    // Widen the approval to the whole tool, as someone editing the file might.
    const widened: Record<string, unknown> = { ...entry, scope: 'tool' };
    delete widened['argumentsHash'];
    fs.writeFileSync(file, `${JSON.stringify(widened)}\n`);
    fs.writeFileSync(path.join(folder, 'work', 'input.txt'), 'here now');
    const again = agents(['plan', 'run', 'resume.yaml']);
    expect(again.status).toBe(3);
    expect(again.stderr).toContain(
      "warning: Approval record 1 of plan 'resume-me' (tool 'builtin.fs.write') was refused: its signature does not match its fields (it was edited, or signed with another key).",
    );
    expect(again.stdout).toMatch(/write builtin\.fs\.write … refused .*TOOL_APPROVAL_DENIED/);
  });
});
