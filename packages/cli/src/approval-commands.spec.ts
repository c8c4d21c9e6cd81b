import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { captureIo, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import type { CliIo } from './cli-io';
import { EXIT_CODES, main } from './index';

jest.setTimeout(60_000);

afterEach(() => removeTemporaryFolders());

/** A folder with a configuration whose plans ask before tools that write, a state directory and a workspace. */
function setup(approval: Record<string, unknown> = { policy: { capabilities: ['writes'] } }) {
  const folder = temporaryFolder();
  const workspace = path.join(folder, 'work');
  fs.mkdirSync(workspace);
  const stateDir = path.join(folder, 'state');
  writeFixture(
    folder,
    'agents.config.json',
    JSON.stringify({ resources: [{ id: 'work', path: './work', access: 'write' }], builtin: { tools: ['builtin.fs.read', 'builtin.fs.write'] }, approval }),
  );
  const io = () => captureIo({}, folder);
  return { folder, workspace, stateDir, io };
}

/** An io whose "terminal" is a stream the test types into. */
function terminalIo(base: ReturnType<typeof captureIo>): ReturnType<typeof captureIo> & { type: (line: string) => void } {
  const input = new PassThrough();
  return { ...base, terminalInput: input, type: (line: string) => void input.write(`${line}\n`) } as CliIo &
    ReturnType<typeof captureIo> & { type: (line: string) => void };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const write = (content = 'x') => JSON.stringify({ resource: 'work', path: 'out.txt', content });

describe('agents tools run: approval', () => {
  it('off a terminal, a call that needs approval is refused (exit 3), saying what would let it run; the tool does not run', async () => {
    const { io, workspace, stateDir } = setup();
    const run = io();
    expect(await main(['--state-dir', stateDir, 'tools', 'run', 'builtin.fs.write', '--input', write()], run)).toBe(EXIT_CODES.refused);
    expect(run.err()).toMatch(
      /^TOOL_APPROVAL_DENIED: Tool 'builtin\.fs\.write' in plan '.+' needs approval \(the plan asks before tools that write\), but nobody can be asked \(the command is not on a terminal\)/,
    );
    expect(run.err()).toContain("pass --approve 'builtin.fs.write' (a glob), or add an allow rule (approval.rules in agents.config.json, or --rules <file>)");
    expect(fs.existsSync(path.join(workspace, 'out.txt'))).toBe(false);
  });

  it('--approve <pattern> approves matching calls without asking, and the trace says so', async () => {
    const { io, workspace, stateDir } = setup();
    const run = io();
    expect(await main(['--state-dir', stateDir, 'tools', 'run', 'builtin.fs.write', '--input', write(), '--approve', 'builtin.fs.*', '--json'], run)).toBe(
      EXIT_CODES.ok,
    );
    expect(JSON.parse(run.out()).trace.approval).toMatchObject({ decision: 'approved', decidedBy: '--approve builtin.fs.*', scope: 'once' });
    expect(fs.readFileSync(path.join(workspace, 'out.txt'), 'utf8')).toBe('x');
    const other = io();
    expect(await main(['--state-dir', stateDir, 'tools', 'run', 'builtin.fs.write', '--input', write(), '--approve', 'builtin.http.*'], other)).toBe(
      EXIT_CODES.refused,
    );
    expect(other.err()).toMatch(/no --approve pattern matches 'builtin\.fs\.write' and there is no terminal to ask/);
  });

  it('on a terminal, asks with the tool, what it may do and the arguments (control characters shown, not acted on)', async () => {
    const { io, workspace, stateDir } = setup();
    const run = terminalIo(io());
    const done = main(['--state-dir', stateDir, 'tools', 'run', 'builtin.fs.write', '--input', write('line\u001b[2J\u202e'), '--json'], run);
    await until(() => run.err().includes('Approve?'), 'the question');
    const asked = run.err();
    expect(asked).toContain('Approval needed — request 1 of plan ');
    expect(asked).toContain('the plan asks before tools that write');
    expect(asked).toMatch(/tool {7}builtin\.fs\.write \(builtin\): writes, may destroy data, undoable/);
    expect(asked).toContain('arguments  {"resource":"work","path":"out.txt","content":"line\\u001b[2J\\u{202e}"}');
    expect(asked).not.toContain('\u001b');
    expect(asked).not.toContain('\u202e');
    run.type('y');
    expect(await done).toBe(EXIT_CODES.ok);
    expect(JSON.parse(run.out()).trace.approval).toMatchObject({ decision: 'approved', scope: 'once', decidedBy: expect.stringMatching(/ \(terminal\)$/) });
    expect(fs.existsSync(path.join(workspace, 'out.txt'))).toBe(true);
  });

  it('on a terminal, "n" with a reason denies: exit 3, the reason in the error, nothing written', async () => {
    const { io, workspace, stateDir } = setup();
    const run = terminalIo(io());
    const done = main(['--state-dir', stateDir, 'tools', 'run', 'builtin.fs.write', '--input', write()], run);
    await until(() => run.err().includes('Approve?'), 'the question');
    run.type('maybe');
    await until(() => run.err().includes("'maybe' is not an answer."), 'the second question');
    run.type('n not before the review');
    expect(await done).toBe(EXIT_CODES.refused);
    expect(run.err()).toMatch(
      /TOOL_APPROVAL_DENIED: Tool 'builtin\.fs\.write' in plan '.+' was denied by .+ \(terminal\): not before the review\. The tool did not run\./,
    );
    expect(fs.existsSync(path.join(workspace, 'out.txt'))).toBe(false);
  });
});

describe('rules from the configuration and rules files', () => {
  const rules = {
    rules: [
      {
        name: 'no-env-files',
        decision: 'deny',
        tools: 'builtin.fs.*',
        arguments: { '/path': { glob: '*.env' } },
        reason: 'secrets stay where they are',
        examples: {
          match: [{ tool: 'builtin.fs.read', arguments: { path: 'prod.env' } }],
          notMatch: [{ tool: 'builtin.fs.read', arguments: { path: 'env.md' } }],
        },
      },
      { name: 'notes-are-fine', decision: 'allow', tools: 'builtin.fs.write', arguments: { '/path': { glob: 'notes/*' } } },
    ],
  };

  it('a deny rule refuses the call even with --approve; an allow rule lets a call run that the policy would ask about', async () => {
    const { io, folder, workspace, stateDir } = setup({ policy: { capabilities: ['writes'] }, rulesFiles: ['./rules.json'] });
    writeFixture(folder, 'rules.json', JSON.stringify(rules));
    const denied = io();
    const input = JSON.stringify({ resource: 'work', path: 'prod.env', content: 'TOKEN=1' });
    expect(await main(['--state-dir', stateDir, 'tools', 'run', 'builtin.fs.write', '--input', input, '--approve', '*'], denied)).toBe(EXIT_CODES.refused);
    expect(denied.err()).toContain(
      "is refused by rule 'no-env-files': secrets stay where they are. The tool did not run. Change the call, or the rule (approval.rules or a rules file of agents.config.json).",
    );
    expect(fs.existsSync(path.join(workspace, 'prod.env'))).toBe(false);

    fs.mkdirSync(path.join(workspace, 'notes'));
    const allowed = io();
    expect(
      await main(
        [
          '--state-dir',
          stateDir,
          'tools',
          'run',
          'builtin.fs.write',
          '--input',
          JSON.stringify({ resource: 'work', path: 'notes/a.md', content: 'ok' }),
          '--json',
        ],
        allowed,
      ),
    ).toBe(EXIT_CODES.ok);
    expect(JSON.parse(allowed.out()).trace.approval).toMatchObject({ decision: 'approved', decidedBy: 'rule:notes-are-fine' });
  });

  it('a rule that fails its own example stops the command before anything runs, naming the file, the rule and the example', async () => {
    const { io, folder, stateDir } = setup();
    const broken = { rules: [{ ...rules.rules[0], examples: { match: [{ tool: 'builtin.fs.read', arguments: { path: 'prod.env.bak' } }] } }] };
    const file = writeFixture(folder, 'broken-rules.yaml', JSON.stringify(broken));
    const run = io();
    expect(
      await main(
        ['--state-dir', stateDir, 'tools', 'run', 'builtin.fs.read', '--input', '{"resource":"work","path":"x"}', '--rules', 'broken-rules.yaml'],
        run,
      ),
    ).toBe(EXIT_CODES.usage);
    expect(run.err()).toContain(
      `CLI_CONFIG_INVALID: Rules file ${file}: Rule 'no-env-files' (rules[0]) is invalid at examples.match[0]: the rule does not match its own example builtin.fs.read {"path":"prod.env.bak"}, which it must match.`,
    );
  });

  it('a rules file with a misspelt key is refused with the key it resembles', async () => {
    const { io, folder, stateDir } = setup();
    writeFixture(folder, 'typo.json', JSON.stringify({ rules: [{ name: 'x', decision: 'deny', tools: 'a', reasn: 'typo' }] }));
    writeFixture(folder, 'plan.yaml', 'steps:\n  - { tool: builtin.fs.read, input: { resource: work, path: a } }\n');
    const run = io();
    expect(await main(['--state-dir', stateDir, 'plan', 'check', 'plan.yaml', '--rules', 'typo.json'], run)).toBe(EXIT_CODES.usage);
    expect(run.err()).toMatch(
      /^CLI_CONFIG_INVALID: Rules file .*typo\.json is invalid:\n {2}\/rules\/0\/reasn: is not a known key here\. Did you mean 'reason'\?/,
    );
  });

  it('plan check reports a step a deny rule refuses, and accepts it when the step expects to be refused', async () => {
    const { io, folder, stateDir } = setup({ rules: rules.rules });
    writeFixture(
      folder,
      'plan.yaml',
      [
        'steps:',
        '  - { id: secret, tool: builtin.fs.read, input: { resource: work, path: app.env } }',
        '  - { id: refused, tool: builtin.fs.read, input: { resource: work, path: app.env }, expect: refused }',
      ].join('\n'),
    );
    const run = io();
    expect(await main(['--state-dir', stateDir, 'plan', 'check', 'plan.yaml'], run)).toBe(EXIT_CODES.usage);
    expect(run.out()).toContain("step 1 (secret) builtin.fs.read: TOOL_APPROVAL_DENIED: Rule 'no-env-files' refuses this call: secrets stay where they are.");
    expect(run.out()).not.toContain('step 2');
  });
});

describe('agents plan approve / deny from another terminal', () => {
  const planFile = (folder: string, id: string) =>
    writeFixture(
      folder,
      `${id}.yaml`,
      [
        `id: ${id}`,
        'policy: { approval: { capabilities: [writes] } }',
        'steps:',
        '  - { id: write, tool: builtin.fs.write, input: { resource: work, path: out.txt, content: "approved\\n" } }',
        '  - { id: read, tool: builtin.fs.read, input: { resource: work, path: out.txt } }',
      ].join('\n'),
    );

  it('--await-approval off a terminal: the plan waits, says how to answer, and `plan approve` answers it', async () => {
    const { io, folder, workspace, stateDir } = setup({});
    planFile(folder, 'waits');
    const run = io();
    const done = main(['--state-dir', stateDir, 'plan', 'run', 'waits.yaml', '--await-approval', '--json'], run);
    await until(() => run.err().includes('approval needed: request 1 of plan waits'), 'the request');
    expect(run.err()).toContain("Answer with 'agents plan approve waits 1 [--for tool|call]' or 'agents plan deny waits 1 [--reason …]'.");
    // The request is listed where plans are listed.
    const list = io();
    expect(await main(['--state-dir', stateDir, 'plan', 'list'], list)).toBe(EXIT_CODES.ok);
    expect(list.out()).toMatch(/^plan\s+pid\s+host\s+started\s+steps\s+policy\s+tools\s+waits for\s+file\n/);
    expect(list.out()).toMatch(/^waits\s+\d+\s+.*approval: writes\s+builtin\.fs\.write\s+approval 1 \(builtin\.fs\.write\)\s+.*waits\.yaml$/m);
    const wrong = io();
    expect(await main(['--state-dir', stateDir, 'plan', 'approve', 'waits', '7'], wrong)).toBe(EXIT_CODES.notFound);
    expect(wrong.err()).toBe("CLI_APPROVAL_NOT_FOUND: Plan 'waits' waits for no approval request '7'; it waits for 1 (builtin.fs.write).\n");
    const approve = io();
    expect(await main(['--state-dir', stateDir, 'plan', 'approve', 'waits'], approve)).toBe(EXIT_CODES.ok);
    expect(approve.out()).toBe('Approved request 1 (builtin.fs.write) of plan waits.\n');
    expect(await done).toBe(EXIT_CODES.ok);
    const report = JSON.parse(run.out()) as { traces: { approval?: { decidedBy: string; requestId: string } }[] };
    expect(report.traces[0]?.approval).toMatchObject({
      decision: 'approved',
      requestId: '1',
      decidedBy: expect.stringMatching(/ \(agents plan approve on .+\)$/),
    });
    expect(fs.readFileSync(path.join(workspace, 'out.txt'), 'utf8')).toBe('approved\n');
  });

  it('an answer to a request that no longer waits is refused with the requests that do (exit 4)', async () => {
    const { io, folder, stateDir } = setup({});
    writeFixture(
      folder,
      'two.yaml',
      [
        'id: two',
        'policy: { approval: { capabilities: [writes] } }',
        'steps:',
        '  - { id: first, tool: builtin.fs.write, input: { resource: work, path: a.txt, content: "a" } }',
        '  - { id: second, tool: builtin.fs.write, input: { resource: work, path: b.txt, content: "b" } }',
      ].join('\n'),
    );
    const run = io();
    const done = main(['--state-dir', stateDir, 'plan', 'run', 'two.yaml', '--await-approval'], run);
    await until(() => run.err().includes('approval needed: request 1 of plan two'), 'the first request');
    expect(await main(['--state-dir', stateDir, 'plan', 'approve', 'two', '1'], io())).toBe(EXIT_CODES.ok);
    await until(() => run.err().includes('approval needed: request 2 of plan two'), 'the second request');
    const stale = io();
    expect(await main(['--state-dir', stateDir, 'plan', 'approve', 'two', '1'], stale)).toBe(EXIT_CODES.notFound);
    expect(stale.err()).toBe("CLI_APPROVAL_NOT_FOUND: Plan 'two' waits for no approval request '1'; it waits for 2 (builtin.fs.write).\n");
    expect(await main(['--state-dir', stateDir, 'plan', 'deny', 'two'], io())).toBe(EXIT_CODES.ok);
    expect(await done).toBe(EXIT_CODES.refused);
  });

  it('`plan deny` with a reason refuses the step (exit 3); a plan that is not running is not found (exit 4)', async () => {
    const { io, folder, workspace, stateDir } = setup({});
    planFile(folder, 'denied');
    const run = io();
    const done = main(['--state-dir', stateDir, 'plan', 'run', 'denied.yaml', '--await-approval'], run);
    await until(() => run.err().includes('approval needed: request 1 of plan denied'), 'the request');
    const deny = io();
    expect(await main(['--state-dir', stateDir, 'plan', 'deny', 'denied', '1', '--reason', 'wrong file'], deny)).toBe(EXIT_CODES.ok);
    expect(deny.out()).toBe('Denied request 1 (builtin.fs.write) of plan denied.\n');
    expect(await done).toBe(EXIT_CODES.refused);
    expect(run.out()).toMatch(
      /write builtin\.fs\.write … refused .*TOOL_APPROVAL_DENIED: Tool 'builtin\.fs\.write' in plan 'denied' was denied by .+ \(agents plan deny on .+\): wrong file\./,
    );
    expect(fs.existsSync(path.join(workspace, 'out.txt'))).toBe(false);
    const gone = io();
    expect(await main(['--state-dir', stateDir, 'plan', 'approve', 'denied'], gone)).toBe(EXIT_CODES.notFound);
    expect(gone.err()).toMatch(/^CLI_PLAN_NOT_FOUND: No running plan has id 'denied'/);
  });

  it('on a terminal, the plan asks there and takes an answer from another terminal too: the first answer wins', async () => {
    const { io, folder, workspace, stateDir } = setup({});
    planFile(folder, 'both');
    const run = terminalIo(io());
    const done = main(['--state-dir', stateDir, 'plan', 'run', 'both.yaml', '--json'], run);
    await until(() => run.err().includes('Approve?'), 'the question');
    expect(run.err()).toContain('(or from another terminal: agents plan approve both 1)');
    expect(await main(['--state-dir', stateDir, 'plan', 'approve', 'both', '--for', 'tool'], io())).toBe(EXIT_CODES.ok);
    expect(await done).toBe(EXIT_CODES.ok);
    expect(run.err()).toMatch(/\(withdrawn: approval request 1 was answered through plan registry state folder .+ by .+ \(agents plan approve on .+\)\)\n/);
    // A line typed now answers nothing.
    run.type('y');
    const report = JSON.parse(run.out()) as { traces: { approval?: unknown }[] };
    expect(report.traces[0]?.approval).toMatchObject({ decision: 'approved', scope: 'tool' });
    expect(fs.readFileSync(path.join(workspace, 'out.txt'), 'utf8')).toBe('approved\n');
  });

  it('with approval.answersFromRegistry: false, a plan takes no answer through the registry: --await-approval is refused, nothing is listed', async () => {
    const { io, folder, stateDir } = setup({ answersFromRegistry: false });
    planFile(folder, 'closed');
    const waiting = io();
    expect(await main(['--state-dir', stateDir, 'plan', 'run', 'closed.yaml', '--await-approval'], waiting)).toBe(EXIT_CODES.usage);
    expect(waiting.err()).toBe(
      'CLI_USAGE: --await-approval waits for answers through the plan registry, but the configuration turns them off (approval.answersFromRegistry: false).\n',
    );
    const run = terminalIo(io());
    const done = main(['--state-dir', stateDir, 'plan', 'run', 'closed.yaml', '--json'], run);
    await until(() => run.err().includes('Approve?'), 'the question');
    expect(run.err()).not.toContain('agents plan approve');
    const answer = io();
    expect(await main(['--state-dir', stateDir, 'plan', 'approve', 'closed'], answer)).toBe(EXIT_CODES.notFound);
    expect(answer.err()).toMatch(
      /^CLI_APPROVAL_NOT_FOUND: Plan 'closed' waits for no approval request: none is pending, or it takes no answers through the plan registry/,
    );
    run.type('n');
    expect(await done).toBe(EXIT_CODES.refused);
  });

  it('an approval for the call is kept for a plan run again with the same id, until the plan succeeds', async () => {
    const { io, folder, workspace, stateDir } = setup({});
    writeFixture(
      folder,
      'twice.yaml',
      [
        'id: twice',
        'policy: { approval: { capabilities: [writes] } }',
        'steps:',
        '  - { id: write, tool: builtin.fs.write, input: { resource: work, path: out.txt, content: "x" } }',
        '  - { id: needs-input, tool: builtin.fs.read, input: { resource: work, path: input.txt } }',
      ].join('\n'),
    );
    const first = io();
    const done = main(['--state-dir', stateDir, 'plan', 'run', 'twice.yaml', '--await-approval'], first);
    await until(() => first.err().includes('approval needed: request 1 of plan twice'), 'the request');
    expect(await main(['--state-dir', stateDir, 'plan', 'approve', 'twice', '1', '--for', 'call'], io())).toBe(EXIT_CODES.ok);
    expect(await done).toBe(EXIT_CODES.failed);
    expect(fs.readFileSync(path.join(stateDir, 'approvals', 'twice.jsonl'), 'utf8')).toContain('"scope":"call"');

    // Run again with nobody to ask: the write step is approved by what was kept.
    fs.writeFileSync(path.join(workspace, 'input.txt'), 'now here');
    const again = io();
    expect(await main(['--state-dir', stateDir, 'plan', 'run', 'twice.yaml', '--json'], again)).toBe(EXIT_CODES.ok);
    const report = JSON.parse(again.out()) as { traces: { approval?: unknown }[] };
    expect(report.traces[0]?.approval).toMatchObject({ decision: 'approved', scope: 'call', remembered: true });
    expect(fs.existsSync(path.join(stateDir, 'approvals', 'twice.jsonl'))).toBe(false);
  });
});
