import fs from 'node:fs';
import path from 'node:path';
import { captureIo, removeTemporaryFolders, temporaryFolder } from './cli.test-helper';
import { EXIT_CODES, main } from './index';

jest.setTimeout(60_000);

afterEach(() => removeTemporaryFolders());

function setup() {
  const workspace = temporaryFolder();
  const stateDir = temporaryFolder('ca-cli-state-');
  fs.writeFileSync(path.join(workspace, 'hello.txt'), 'hello world\n');
  const io = captureIo({ TEST_WORKSPACE: workspace });
  return { workspace, stateDir, io };
}

describe('agents tools', () => {
  it('lists every configured source as a table and as JSON', async () => {
    const { io } = setup();
    expect(await main(['tools', 'list'], io)).toBe(EXIT_CODES.ok);
    const table = io.out();
    expect(table).toMatch(/^name\s+source\s+writes\s+checkpointable\s+description/m);
    expect(table).toMatch(/^builtin\.fs\.write\s+builtin\s+yes\s+yes/m);
    expect(table).toMatch(/^test\.unsafe-write\s+custom\s+yes\s+no/m);
    expect(table).toMatch(/^test\.hello\s+wrapped/m);
    const json = captureIo(io.env as Record<string, string>);
    expect(await main(['tools', 'list', '--json'], json)).toBe(0);
    const parsed = JSON.parse(json.out()) as { tools: { name: string }[] };
    expect(parsed.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['builtin.fs.read', 'test.echo', 'test.wait-for-cancel', 'test.hello']));
  });

  it("says once, with the reason, that 'auto' runs commands without the kernel sandbox: in tools list and plan check", async () => {
    // Each command is a process of its own, which says it once: here one process runs both, so each looks for another bwrap.
    const configure = (name: string) => {
      const folder = temporaryFolder();
      const bwrap = path.join(folder, name);
      fs.writeFileSync(
        path.join(folder, 'agents.config.json'),
        JSON.stringify({ builtin: { tools: ['builtin.command.run', 'builtin.fs.read'] }, sandbox: { mode: 'auto', bwrapPath: bwrap } }),
      );
      fs.writeFileSync(path.join(folder, 'plan.yaml'), 'steps:\n  - tool: builtin.fs.read\n    input: { path: x }\n    expect: failure\n');
      const warning = new RegExp(
        `^warning \\[SANDBOX_OFF\\]: The kernel sandbox is off: command\\.sandbox is 'auto' and the sandbox does not work here \\(${bwrap.replace(/[/.]/g, '\\$&')} does not exist\\)\\. Programs run unconfined.*apt-get install bubblewrap`,
        'm',
      );
      return { folder, warning };
    };
    const listed = configure('no-bwrap-for-list');
    const list = captureIo({}, listed.folder);
    expect(await main(['tools', 'list'], list)).toBe(EXIT_CODES.ok);
    expect(list.err()).toMatch(listed.warning);
    expect(list.err().match(/SANDBOX_OFF/g)).toHaveLength(1);
    expect(list.out()).toMatch(/^builtin\.command\.run\s+builtin\s+yes\s+no/m);
    const checked = configure('no-bwrap-for-check');
    const check = captureIo({}, checked.folder);
    expect(await main(['plan', 'check', 'plan.yaml'], check)).toBe(EXIT_CODES.ok);
    expect(check.err()).toMatch(checked.warning);
    // Said once per process: a second command of the same process stays quiet.
    const again = captureIo({}, checked.folder);
    expect(await main(['tools', 'list'], again)).toBe(EXIT_CODES.ok);
    expect(again.err()).not.toMatch(/SANDBOX_OFF/);
  });

  it('shows a sandboxed tool as following the plan, and its capability in each plan', async () => {
    const folder = temporaryFolder();
    fs.writeFileSync(path.join(folder, 'agents.config.json'), JSON.stringify({ builtin: { tools: ['builtin.command.run'] }, sandbox: 'required' }));
    const list = captureIo({}, folder);
    expect(await main(['tools', 'list'], list)).toBe(EXIT_CODES.ok);
    expect(list.out()).toMatch(/^builtin\.command\.run\s+builtin\s+by plan\s+by plan/m);
    expect(list.out()).toMatch(/^by plan: the tool's programs run in the kernel sandbox/m);
    const describe = captureIo({}, folder);
    expect(await main(['tools', 'describe', 'builtin.command.run'], describe)).toBe(EXIT_CODES.ok);
    expect(describe.out()).toContain(
      [
        'capability (the kernel sandbox: it follows the plan):',
        '  plain plan:       writes=true checkpointable=false idempotent=false destructive=true openWorld=true',
        '  read-only plan:   writes=false checkpointable=true idempotent=false destructive=false openWorld=true',
        '  checkpoint plan:  writes=true checkpointable=true idempotent=false destructive=true openWorld=true',
        '  network denied:   openWorld=false',
      ].join('\n'),
    );
  });

  it('describes a tool with its schemas and capabilities', async () => {
    const { io } = setup();
    expect(await main(['tools', 'describe', 'test.echo'], io)).toBe(0);
    expect(io.out()).toContain('capability: writes=false checkpointable=true idempotent=true');
    expect(io.out()).toContain('"required": [\n    "text"\n  ]');
    const missing = captureIo(io.env as Record<string, string>);
    expect(await main(['tools', 'describe', 'nope'], missing)).toBe(EXIT_CODES.notFound);
    expect(missing.err()).toMatch(/^TOOL_NOT_FOUND: /);
  });

  it('runs one tool in a one-step plan, with input from JSON or a file', async () => {
    const { io, workspace } = setup();
    expect(await main(['tools', 'run', 'test.echo', '--input', '{"text":"hi"}', '--json'], io)).toBe(0);
    expect(JSON.parse(io.out())).toMatchObject({ ok: true, output: { text: 'hi' }, trace: { toolName: 'test.echo', success: true } });
    const inputFile = path.join(workspace, 'input.json');
    fs.writeFileSync(inputFile, JSON.stringify({ resource: 'work', path: 'hello.txt' }));
    const read = captureIo(io.env as Record<string, string>);
    expect(await main(['tools', 'run', 'builtin.fs.read', '--input', `@${inputFile}`], read)).toBe(0);
    expect(read.out()).toContain('hello world');
  });

  it('refuses a writing tool with --read-only and a non-checkpointable one with --require-checkpoint', async () => {
    const { io, workspace } = setup();
    const input = JSON.stringify({ resource: 'work', path: 'new.txt', content: 'x' });
    expect(await main(['tools', 'run', 'builtin.fs.write', '--input', input, '--read-only'], io)).toBe(EXIT_CODES.refused);
    expect(io.err()).toMatch(/^TOOL_ACCESS_DENIED: Tool 'builtin\.fs\.write' writes, but plan '.+' is read-only/);
    expect(fs.existsSync(path.join(workspace, 'new.txt'))).toBe(false);
    const checkpoint = captureIo(io.env as Record<string, string>);
    expect(await main(['tools', 'run', 'test.unsafe-write', '--require-checkpoint'], checkpoint)).toBe(EXIT_CODES.refused);
    expect(checkpoint.err()).toMatch(/^TOOL_CHECKPOINT_REQUIRED: /);
  });

  it('reports bad input with a code and a hint', async () => {
    const { io } = setup();
    expect(await main(['tools', 'run', 'test.echo', '--input', '{not json'], io)).toBe(EXIT_CODES.usage);
    expect(io.err()).toMatch(/^CLI_INPUT_INVALID: --input is not valid JSON/);
    const invalid = captureIo(io.env as Record<string, string>);
    expect(await main(['tools', 'run', 'test.echo', '--input', '{"text":3}'], invalid)).toBe(EXIT_CODES.usage);
    expect(invalid.err()).toMatch(/^TOOL_SCHEMA_VALIDATION_FAILED: --input does not match the input schema of 'test\.echo':\n {2}\/text: must be string\n/);
    const unknown = captureIo(io.env as Record<string, string>);
    expect(await main(['tools', 'frobnicate'], unknown)).toBe(EXIT_CODES.usage);
  });
});

describe('agents plan run', () => {
  it('runs a plan file with a progress line per step, a summary, traces as JSON Lines, and deactivates everything', async () => {
    const { io, workspace, stateDir } = setup();
    const traces = path.join(workspace, 'traces', 'run.jsonl');
    const code = await main(['--state-dir', stateDir, 'plan', 'run', 'plan.yaml', '--traces', traces], io);
    expect(io.err()).toBe('');
    expect(code).toBe(0);
    const out = io.out();
    expect(out).toContain('Plan cli-test-plan (read-write) — 3 steps');
    expect(out).toMatch(/\[1\/3\] write builtin\.fs\.write … ok/);
    expect(out).toMatch(/\[2\/3\] read builtin\.fs\.read … ok \(\d+ ms\) \{"path":/);
    expect(out).toMatch(/^step\s+tool\s+outcome\s+expected\s+ms\s+detail/m);
    expect(out).toContain('Plan cli-test-plan succeeded; 3 tool(s) deactivated; 3 trace(s)');
    const lines = fs
      .readFileSync(traces, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { toolName: string; planId: string; success: boolean });
    expect(lines.map((line) => line.toolName)).toEqual(['builtin.fs.write', 'builtin.fs.read', 'test.echo']);
    expect(lines.every((line) => line.planId === 'cli-test-plan' && line.success)).toBe(true);
    expect(fs.readFileSync(path.join(workspace, 'out.txt'), 'utf8')).toBe('from the plan\n');
    expect(fs.readdirSync(path.join(stateDir, 'plans'))).toEqual([]);
  });

  it('prints JSON with --json and overrides the plan id with --plan-id', async () => {
    const { io, stateDir } = setup();
    expect(await main(['--state-dir', stateDir, 'plan', 'run', 'plan.yaml', '--json', '--plan-id', 'custom-id'], io)).toBe(0);
    const report = JSON.parse(io.out()) as { planId: string; steps: { outcome: string }[]; end: { deactivated: string[] } };
    expect(report.planId).toBe('custom-id');
    expect(report.steps.map((step) => step.outcome)).toEqual(['ok', 'ok', 'ok']);
    expect(report.end.deactivated).toHaveLength(3);
  });

  it('is cancelled by `agents plan cancel` through the state directory, deactivating what it activated', async () => {
    const { workspace, stateDir } = setup();
    const marker = path.join(workspace, 'cancel-marker');
    const planIo = captureIo({ TEST_WORKSPACE: workspace, TEST_MARKER: marker });
    const running = main(['--state-dir', stateDir, 'plan', 'run', 'slow-plan.yaml', '--plan-id', 'to-cancel'], planIo);
    await waitFor(() => fs.existsSync(`${marker}.started`));
    const list = captureIo();
    expect(await main(['--state-dir', stateDir, 'plan', 'list', '--json'], list)).toBe(0);
    expect(JSON.parse(list.out())).toEqual([expect.objectContaining({ planId: 'to-cancel', pid: process.pid })]);
    const cancel = captureIo();
    expect(await main(['--state-dir', stateDir, 'plan', 'cancel', 'to-cancel'], cancel)).toBe(0);
    expect(await running).toBe(EXIT_CODES.cancelled);
    expect(fs.readFileSync(marker, 'utf8')).toBe("cancelled by 'agents plan cancel to-cancel'");
    expect(planIo.out()).toMatch(/\[1\/2\] wait test\.wait-for-cancel … cancelled/);
    expect(planIo.out()).toMatch(/^never\s+test\.echo\s+skipped/m);
    expect(planIo.out()).toContain('Plan to-cancel was cancelled; 1 tool(s) deactivated');
    const after = captureIo();
    await main(['--state-dir', stateDir, 'plan', 'list'], after);
    expect(after.out()).toBe('No plan is running.\n');
    const again = captureIo();
    expect(await main(['--state-dir', stateDir, 'plan', 'cancel', 'to-cancel'], again)).toBe(EXIT_CODES.notFound);
    expect(again.err()).toMatch(/^CLI_PLAN_NOT_FOUND: No running plan has id 'to-cancel'/);
  });

  it('reports a plan file that does not match its schema at the offending key', async () => {
    const { io, workspace } = setup();
    const bad = path.join(workspace, 'bad.yaml');
    fs.writeFileSync(bad, 'policy: { readOnly: "yes" }\nsteps:\n  - tool: test.echo\n    inpt: {}\n');
    expect(await main(['plan', 'run', bad], io)).toBe(EXIT_CODES.usage);
    expect(io.err()).toContain(`CLI_PLAN_INVALID: Plan file ${bad} is invalid:`);
    expect(io.err()).toContain('/policy/readOnly: must be boolean');
    expect(io.err()).toContain('/steps/0/inpt: is not a known key here');
    const missing = captureIo();
    expect(await main(['plan', 'run', 'nowhere.yaml'], missing)).toBe(EXIT_CODES.usage);
    expect(missing.err()).toMatch(/^CLI_PLAN_NOT_FOUND: Plan file .*nowhere\.yaml does not exist/);
  });
});

describe('agents.config validation', () => {
  it('points at the offending key and says what to do', async () => {
    const folder = temporaryFolder();
    fs.writeFileSync(
      path.join(folder, 'agents.config.json'),
      JSON.stringify({ builtin: { files: { readMaxBytes: -1 } }, skills: { rootz: ['x'] }, mcpServers: { broken: { args: [] } } }),
    );
    const io = captureIo({}, folder);
    expect(await main(['tools', 'list'], io)).toBe(EXIT_CODES.usage);
    const err = io.err();
    expect(err).toMatch(/^CLI_CONFIG_INVALID: Configuration .*agents\.config\.json is invalid:/);
    expect(err).toContain('/builtin/files/readMaxBytes: must be >= 1');
    expect(err).toContain('/skills/rootz: is not a known key here');
    expect(err).toMatch(/\/mcpServers\/broken\/(command|url): is required/);
  });

  it('reads YAML, expands ${VAR} with fallbacks, and refuses an unset variable', async () => {
    const folder = temporaryFolder();
    fs.writeFileSync(
      path.join(folder, 'agents.config.yaml'),
      'resources:\n  - { id: w, path: "${WORK:-.}", access: read }\nbuiltin: { tools: [builtin.fs.list] }\n',
    );
    const io = captureIo({}, folder);
    expect(await main(['tools', 'run', 'builtin.fs.list', '--input', '{"resource":"w","path":"."}'], io)).toBe(0);
    expect(io.out()).toContain('agents.config.yaml');
    fs.writeFileSync(path.join(folder, 'agents.config.yaml'), 'resources:\n  - { id: w, path: "${UNSET_FOR_TEST}", access: read }\n');
    const unset = captureIo({}, folder);
    expect(await main(['tools', 'list'], unset)).toBe(EXIT_CODES.usage);
    expect(unset.err()).toContain('/resources/0/path uses ${UNSET_FOR_TEST}, which is not set');
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
