import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fixtures, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import { startRedisServer, type TestRedisServer } from '@ca/plan-registry-redis/testing';

// The built `agents` binary against a real redis-server: a plan run by one
// process is listed and cancelled by others that share only the server, as
// an operator's shell on another machine would.
const bin = path.resolve(__dirname, '..', 'dist', 'bin.js');

jest.setTimeout(120_000);

let server: TestRedisServer;

// A server per test: a test that fails half-way leaves nothing for the next.
beforeEach(async () => {
  server = await startRedisServer();
});
afterEach(async () => {
  await server.stop();
  removeTemporaryFolders();
});

function run(args: string[], env: Record<string, string> = {}, cwd = fixtures) {
  return spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
  });
}

function startPlan(args: string[], env: Record<string, string>, cwd = fixtures): { child: ChildProcess; exit: Promise<number | null>; output: () => string } {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, exit: new Promise((resolve) => child.on('exit', (code) => resolve(code))), output: () => output };
}

async function waitFor(condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('agents with a Redis plan registry', () => {
  it('lists and cancels, from other processes, a plan run with --registry; nothing is left in Redis', async () => {
    const workspace = temporaryFolder();
    const marker = path.join(workspace, 'marker');
    const plan = startPlan(['--registry', server.url, 'plan', 'run', 'slow-plan.yaml', '--plan-id', 'shared-1'], {
      TEST_WORKSPACE: workspace,
      TEST_MARKER: marker,
    });
    try {
      await waitFor(() => fs.existsSync(`${marker}.started`));
      // An operator's shell: no TEST_WORKSPACE, no state folder — only the registry.
      const list = run(['--registry', server.url, 'plan', 'list']);
      expect(list.status).toBe(0);
      expect(list.stdout).toMatch(new RegExp(`^plan\\s+pid\\s+host\\s+started\\s+steps\\s+policy\\s+tools\\s+waits for\\s+file\n`));
      expect(list.stdout).toMatch(new RegExp(`^shared-1\\s+${plan.child.pid}\\s+\\S+\\s+\\S+\\s+0\\s+read-only\\s+.*slow-plan\\.yaml$`, 'm'));
      const json = run(['--registry', server.url, 'plan', 'list', '--json']);
      expect(JSON.parse(json.stdout)).toEqual([
        expect.objectContaining({
          planId: 'shared-1',
          pid: plan.child.pid,
          policy: { readOnly: true, requireCheckpoint: false, network: 'allow' },
          labels: { file: path.join(fixtures, 'slow-plan.yaml') },
        }),
      ]);
      const cancel = run(['--registry', server.url, 'plan', 'cancel', 'shared-1']);
      expect([cancel.status, cancel.stdout, cancel.stderr]).toEqual([0, 'Cancellation of plan shared-1 requested.\n', '']);
      expect(await plan.exit).toBe(130);
      expect(fs.readFileSync(marker, 'utf8')).toBe("cancelled by 'agents plan cancel shared-1'");
      expect(plan.output()).toContain('Plan shared-1 was cancelled; 1 tool(s) deactivated');
      expect(await server.keys()).toEqual([]);
      const again = run(['--registry', server.url, 'plan', 'cancel', 'shared-1']);
      expect(again.status).toBe(4);
      expect(again.stderr).toBe(
        `CLI_PLAN_NOT_FOUND: No running plan has id 'shared-1' in redis://127.0.0.1:${server.port}. 'agents plan list' shows the running plans.\n`,
      );
    } finally {
      plan.child.kill('SIGKILL');
    }
  });

  it('carries approval: a plan waiting for it is listed on every host, and `plan approve` from another process answers it through Redis', async () => {
    const folder = temporaryFolder();
    const workspace = path.join(folder, 'work');
    fs.mkdirSync(workspace);
    writeFixture(
      folder,
      'agents.config.json',
      JSON.stringify({ resources: [{ id: 'work', path: './work', access: 'write' }], builtin: { tools: ['builtin.fs.write'] } }),
    );
    writeFixture(
      folder,
      'guarded.yaml',
      [
        'id: guarded',
        'policy: { approval: { capabilities: [writes] } }',
        'steps:',
        '  - { tool: builtin.fs.write, input: { resource: work, path: out.txt, content: "approved via redis" } }',
      ].join('\n'),
    );
    const stateDir = path.join(temporaryFolder(), 'state');
    const plan = startPlan(['--registry', server.url, '--state-dir', stateDir, 'plan', 'run', 'guarded.yaml', '--await-approval'], {}, folder);
    try {
      await waitFor(() => plan.output().includes('approval needed: request 1 of plan guarded'));
      // An operator's shell elsewhere: only the registry, no configuration, no state folder of the plan's.
      const listed = () =>
        JSON.parse(run(['--registry', server.url, 'plan', 'list', '--json']).stdout) as { planId: string; pendingApprovals?: unknown[]; policy: unknown }[];
      await waitFor(() => listed()[0]?.pendingApprovals?.length === 1);
      expect(listed()[0]).toMatchObject({
        planId: 'guarded',
        policy: { approval: 'writes' },
        pendingApprovals: [{ requestId: '1', toolName: 'builtin.fs.write' }],
      });
      expect(run(['--registry', server.url, 'plan', 'list']).stdout).toMatch(/^guarded\s.*approval 1 \(builtin\.fs\.write\)/m);
      const approve = run(['--registry', server.url, 'plan', 'approve', 'guarded']);
      expect([approve.status, approve.stdout, approve.stderr]).toEqual([0, 'Approved request 1 (builtin.fs.write) of plan guarded.\n', '']);
      expect(await plan.exit).toBe(0);
      expect(fs.readFileSync(path.join(workspace, 'out.txt'), 'utf8')).toBe('approved via redis');
      expect(plan.output()).not.toContain('warning');
      expect(await server.keys()).toEqual([]);
    } finally {
      plan.child.kill('SIGKILL');
    }
  });

  it('takes the registry from the configuration; plan list and cancel read only its "registry" key', async () => {
    const folder = temporaryFolder();
    const workspace = temporaryFolder();
    const marker = path.join(workspace, 'marker');
    writeFixture(
      folder,
      'agents.config.json',
      JSON.stringify({
        registry: { url: '${REGISTRY_URL}', keyPrefix: 'cli-test:', ttlMs: 5_000, heartbeatIntervalMs: 100 },
        resources: [{ id: 'work', path: '${TEST_WORKSPACE}', access: 'write' }],
        custom: { modules: [path.join(fixtures, 'slow-tools.js')] },
      }),
    );
    fs.copyFileSync(path.join(fixtures, 'slow-plan.yaml'), path.join(folder, 'slow-plan.yaml'));
    const plan = startPlan(
      ['plan', 'run', 'slow-plan.yaml', '--plan-id', 'from-config'],
      { REGISTRY_URL: server.url, TEST_WORKSPACE: workspace, TEST_MARKER: marker },
      folder,
    );
    try {
      await waitFor(() => fs.existsSync(`${marker}.started`));
      expect(await server.keys()).toEqual(['cli-test:index', 'cli-test:plan:from-config']);
      // TEST_WORKSPACE is not set here: the resources are not read for a list.
      // Heartbeats bring the tools activated since the plan was registered.
      const listed = () => JSON.parse(run(['plan', 'list', '--json'], { REGISTRY_URL: server.url }, folder).stdout) as { planId: string; tools: string[] }[];
      await waitFor(() => listed()[0]?.tools.length === 1);
      expect(listed().map((entry) => [entry.planId, entry.tools])).toEqual([['from-config', ['test.wait-for-cancel']]]);
      expect(run(['plan', 'list'], { REGISTRY_URL: server.url }, folder).stderr).toBe('');
      // Another prefix is another registry.
      expect(run(['--registry', server.url, 'plan', 'list']).stdout).toBe('No plan is running.\n');
      expect(run(['plan', 'cancel', 'from-config'], { REGISTRY_URL: server.url }, folder).status).toBe(0);
      expect(await plan.exit).toBe(130);
      expect(await server.keys()).toEqual([]);
    } finally {
      plan.child.kill('SIGKILL');
    }
  });

  it('refuses a second plan with an id a running plan holds, before any step runs', async () => {
    const workspace = temporaryFolder();
    const marker = path.join(workspace, 'marker');
    const first = startPlan(['--registry', server.url, 'plan', 'run', 'slow-plan.yaml', '--plan-id', 'taken'], {
      TEST_WORKSPACE: workspace,
      TEST_MARKER: marker,
    });
    try {
      await waitFor(() => fs.existsSync(`${marker}.started`));
      const second = run(['--registry', server.url, 'plan', 'run', 'plan.yaml', '--plan-id', 'taken'], { TEST_WORKSPACE: workspace });
      expect(second.status).toBe(2);
      expect(second.stderr).toMatch(
        new RegExp(
          `^PLAN_REGISTRY_DUPLICATE_PLAN: A running plan already has id 'taken' in plan registry redis://127\\.0\\.0\\.1:${server.port}: it runs on host \\S+, pid ${first.child.pid}`,
        ),
      );
      expect(fs.existsSync(path.join(workspace, 'out.txt'))).toBe(false);
      expect(run(['--registry', server.url, 'plan', 'cancel', 'taken']).status).toBe(0);
      expect(await first.exit).toBe(130);
    } finally {
      first.child.kill('SIGKILL');
    }
  });

  it('says when the registry cannot be reached, without the password, and refuses a --registry that is not one', () => {
    const unreachable = run(['--registry', 'redis://ops:url-secret@127.0.0.1:1/0', 'plan', 'list'], { REDIS_PASSWORD: 'env-secret-value' });
    expect(unreachable.status).toBe(1);
    expect(unreachable.stderr).toMatch(/^PLAN_REGISTRY_UNAVAILABLE: Plan registry redis:\/\/127\.0\.0\.1:1\/0 cannot be reached: .*ECONNREFUSED/);
    expect(unreachable.stderr + unreachable.stdout).not.toMatch(/url-secret|env-secret-value|ops:/);
    const invalid = run(['--registry', 'mysql://db', 'plan', 'list']);
    expect(invalid.status).toBe(2);
    expect(invalid.stderr).toBe("CLI_USAGE: --registry mysql://db: expected 'local' or a Redis URL such as redis://127.0.0.1:6379/0 (rediss:// for TLS).\n");
  });
});
