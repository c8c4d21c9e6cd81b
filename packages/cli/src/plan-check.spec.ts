import fs from 'node:fs';
import path from 'node:path';
import { captureIo, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import { EXIT_CODES, main } from './index';

jest.setTimeout(60_000);
afterEach(() => removeTemporaryFolders());

// Runs against the fixture configuration: built-ins read/write/list bound to
// $TEST_WORKSPACE as `work`, the custom tools of slow-tools.js, and test.hello.
function setup() {
  const workspace = temporaryFolder();
  const io = () => captureIo({ TEST_WORKSPACE: workspace });
  return { workspace, io };
}

const PLAN_WITH_PROBLEMS = `
id: with-problems
policy: { readOnly: true }
steps:
  - id: first-write
    tool: builtin.fs.write
    input: { resource: work, path: early.txt, content: "x" }
    expect: refused
  - id: typo
    tool: builtin.fs.raed
    input: { resource: work, path: early.txt }
  - id: bad-input
    tool: test.echo
    input: { txt: "hi" }
  - id: refused
    tool: test.unsafe-write
    input: {}
  - id: not-refused
    tool: builtin.fs.read
    input: { resource: work, path: x.txt }
    expect: refused
  - id: unbound
    tool: builtin.fs.list
    input: { resource: notes, path: . }
  - id: fine
    tool: test.echo
    input: { text: "fine" }
`;

describe('agents plan check', () => {
  it('finds nothing wrong with a plan that can run, and runs nothing', async () => {
    const { workspace, io } = setup();
    const check = io();
    expect(await main(['plan', 'check', 'plan.yaml'], check)).toBe(EXIT_CODES.ok);
    expect(check.out()).toBe('Plan plan.yaml: 3 step(s), no problem found.\n');
    expect(check.err()).toBe('');
    expect(fs.existsSync(path.join(workspace, 'out.txt'))).toBe(false);
  });

  it('lists every problem with its step number and exits 2', async () => {
    const { workspace, io } = setup();
    const file = writeFixture(workspace, 'plan.yaml', PLAN_WITH_PROBLEMS);
    const check = io();
    expect(await main(['plan', 'check', file], check)).toBe(EXIT_CODES.usage);
    const out = check.out();
    expect(out).toContain(`Plan ${file}: 7 step(s), 5 problem(s):`);
    expect(out).toMatch(
      /^ {2}step 2 \(typo\) builtin\.fs\.raed: TOOL_NOT_FOUND: No configured source offers a tool named 'builtin\.fs\.raed'\. Did you mean 'builtin\.fs\.read'\?/m,
    );
    expect(out).toMatch(
      /^ {2}step 3 \(bad-input\) test\.echo: TOOL_SCHEMA_VALIDATION_FAILED: The step's input does not match the input schema of 'test\.echo':/m,
    );
    expect(out).toContain("/txt: is not a known property. Did you mean 'text'?");
    expect(out).toContain('/text: is required');
    expect(out).toMatch(
      /^ {2}step 4 \(refused\) test\.unsafe-write: TOOL_ACCESS_DENIED: Tool 'test\.unsafe-write' writes, but the plan is read-only\. Set "policy": \{ "readOnly": false \}/m,
    );
    expect(out).toMatch(
      /^ {2}step 5 \(not-refused\) builtin\.fs\.read: STEP_NOT_REFUSED: The step expects to be refused, but the plan's policy \(read-only, no checkpoints required, network allowed\) lets 'builtin\.fs\.read' run/m,
    );
    expect(out).toMatch(
      /^ {2}step 6 \(unbound\) builtin\.fs\.list: BUILTIN_NO_RESOURCE: The input names resource 'notes', which the plan does not bind \(bound: 'work'\)/m,
    );
    // Step 1 is refused, as it expects; step 7 is fine.
    expect(out).not.toMatch(/step 1 |step 7 /);
    expect(fs.readdirSync(workspace)).toEqual(['plan.yaml']);

    const json = io();
    expect(await main(['plan', 'check', file, '--json'], json)).toBe(EXIT_CODES.usage);
    const report = JSON.parse(json.out()) as { ok: boolean; problems: { step: number; code: string; blocking: boolean }[] };
    expect(report.ok).toBe(false);
    expect(report.problems.map((problem) => [problem.step, problem.code, problem.blocking])).toEqual([
      [2, 'TOOL_NOT_FOUND', true],
      [3, 'TOOL_SCHEMA_VALIDATION_FAILED', true],
      [4, 'TOOL_ACCESS_DENIED', true],
      [5, 'STEP_NOT_REFUSED', true],
      [6, 'BUILTIN_NO_RESOURCE', true],
    ]);
  });

  it('checks checkpoint policy, and lets a step that expects failure have invalid input', async () => {
    const { workspace, io } = setup();
    const file = writeFixture(
      workspace,
      'plan.yaml',
      'policy: { requireCheckpoint: true }\nsteps:\n  - { tool: test.unsafe-write, input: {} }\n  - { tool: test.echo, input: { text: 3 }, expect: failure }\n',
    );
    const check = io();
    expect(await main(['plan', 'check', file], check)).toBe(EXIT_CODES.usage);
    expect(check.out()).toMatch(
      /step 1 \(step-1\) test\.unsafe-write: TOOL_CHECKPOINT_REQUIRED: Tool 'test\.unsafe-write' is not checkpointable, but the plan requires checkpoints/,
    );
    expect(check.out()).not.toMatch(/step 2/);
  });

  it('checks the network policy: an open-world tool in a plan that denies the network', async () => {
    const { workspace, io } = setup();
    const file = writeFixture(workspace, 'plan.yaml', 'policy: { network: deny }\nsteps:\n  - { tool: test.echo, input: { text: "x" } }\n');
    const check = io();
    expect(await main(['plan', 'check', file], check)).toBe(EXIT_CODES.usage);
    expect(check.out()).toMatch(
      /step 1 \(step-1\) test\.echo: TOOL_ACCESS_DENIED: Tool 'test\.echo' reaches the network \(open world\), but the plan denies it\. Set "policy": \{ "network": "allow" \}/,
    );
    const typo = writeFixture(workspace, 'typo.yaml', 'policy: { network: off }\nsteps:\n  - { tool: test.echo, input: { text: "x" } }\n');
    const invalid = io();
    expect(await main(['plan', 'check', typo], invalid)).toBe(EXIT_CODES.usage);
    expect(invalid.err()).toMatch(/policy\/network/);
  });
});

describe('agents plan run checks the whole plan before its first step', () => {
  it('runs nothing when a later step names a tool that does not exist (exit 2, every problem listed)', async () => {
    const { workspace, io } = setup();
    const file = writeFixture(
      workspace,
      'plan.yaml',
      'steps:\n  - { id: write, tool: builtin.fs.write, input: { resource: work, path: written.txt, content: "x" } }\n  - { id: read, tool: builtin.fs.reed, input: { resource: work, path: written.txt } }\n',
    );
    const run = io();
    expect(await main(['--state-dir', temporaryFolder(), 'plan', 'run', file], run)).toBe(EXIT_CODES.usage);
    expect(run.err()).toMatch(
      new RegExp(
        `^CLI_PLAN_CHECK_FAILED: Plan ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} cannot run as written; no step was run:\\n {2}step 2 \\(read\\) builtin\\.fs\\.reed: TOOL_NOT_FOUND: .*Did you mean 'builtin\\.fs\\.read'\\?`,
      ),
    );
    expect(run.out()).toBe('');
    expect(fs.existsSync(path.join(workspace, 'written.txt'))).toBe(false);
  });

  it('warns about a step that may fail (continueOnError) and runs the plan', async () => {
    const { workspace, io } = setup();
    const file = writeFixture(
      workspace,
      'plan.yaml',
      'steps:\n  - { id: maybe, tool: test.missing, input: {}, continueOnError: true }\n  - { id: write, tool: builtin.fs.write, input: { resource: work, path: written.txt, content: "x" } }\n',
    );
    const run = io();
    expect(await main(['--state-dir', temporaryFolder(), 'plan', 'run', file], run)).toBe(EXIT_CODES.notFound);
    expect(run.err()).toMatch(/^warning: step 1 \(maybe\) test\.missing: TOOL_NOT_FOUND: /m);
    expect(fs.readFileSync(path.join(workspace, 'written.txt'), 'utf8')).toBe('x');
  });
});
