import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createExecutionContext, ToolCancelledError } from '@ca/tool-context';
import { capabilityInPlan, ToolAccessDeniedError, ToolActivationError, type ApprovalRequest } from '@ca/tool-lifecycle';
import { isProcessAlive, processesWithArgument, sandboxAvailableForTests } from '@ca/sandbox/testing';
import { createCheckpoint, rollback } from './checkpoint';
import { UNDO_FORMAT } from './undo-store';
import { codeOf, folderResource, makeTemporaryFolder, removeTemporaryFolders, snapshotTree, strictRuntime } from './workspace.test-helper';

const describeSandboxed = sandboxAvailableForTests('builtin.command.run in the kernel sandbox (bubblewrap)') ? describe : describe.skip;
const execFileAsync = promisify(execFile);
const node = process.execPath;
const GIT_IDENTITY = ['-c', 'user.name=Sandbox Test', '-c', 'user.email=sandbox@example.com', '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main'];

describe('builtin.command.run: the sandbox setting', () => {
  afterEach(removeTemporaryFolders);

  it('says what the command can do in each plan: a plain plan writes (destructive, open world), read-only and checkpoint plans as the kernel holds them', async () => {
    const { runtime: sandboxed } = strictRuntime({ command: { sandbox: 'required' } });
    const { runtime: plain } = strictRuntime({ command: { sandbox: 'off' } });
    const { runtime: offline } = strictRuntime({ command: { sandbox: { mode: 'required', network: false } } });
    const under = await sandboxed.describe('builtin.command.run');
    const without = await plain.describe('builtin.command.run');
    const writing = { writes: true, destructive: true, checkpointable: false, openWorld: true, idempotent: false };
    expect(under.capability).toEqual(writing);
    expect(under.sandboxed).toEqual({ overlay: true });
    expect(under.description).toMatch(/in a sandbox/);
    expect(without.capability).toEqual(writing);
    expect(without.sandboxed).toBeUndefined();
    const policy = (readOnly: boolean, requireCheckpoint: boolean, network: 'allow' | 'deny' = 'allow') => ({ readOnly, requireCheckpoint, network });
    expect(capabilityInPlan(under, policy(false, false))).toEqual(writing);
    expect(capabilityInPlan(under, policy(true, false))).toEqual({ ...writing, writes: false, destructive: false, checkpointable: true });
    expect(capabilityInPlan(under, policy(false, true))).toEqual({ ...writing, checkpointable: true });
    expect(capabilityInPlan(under, policy(false, false, 'deny'))).toEqual({ ...writing, openWorld: false });
    expect(capabilityInPlan(without, policy(true, false))).toEqual(writing);
    expect((await offline.describe('builtin.command.run')).capability).toEqual({ ...writing, openWorld: false });
  });

  it('required without a working bwrap: activation fails with SANDBOX_UNAVAILABLE, naming the install command, and nothing runs', async () => {
    const work = await makeTemporaryFolder();
    const { runtime } = strictRuntime({ command: { sandbox: { mode: 'required', bwrapPath: '/nonexistent/ca-bwrap' } } });
    const ctx = createExecutionContext({ planId: 'plan-required', resources: [folderResource('work', work)] });
    const error = await runtime.execute('builtin.command.run', { command: ['sh', '-c', 'echo ran > ran.txt'] }, ctx).catch((caught: unknown) => caught);
    expect(ToolActivationError.isInstance(error)).toBe(true);
    expect((error as Error).cause).toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    expect((error as Error).message).toMatch(
      /^Tool 'builtin\.command\.run' could not be activated in plan 'plan-required': the sandbox is required \(command\.sandbox\) but does not work on this machine: .*Install bubblewrap \(apt-get install bubblewrap\)/,
    );
    expect(await snapshotTree(work)).toEqual({});
  });

  it('auto without a working bwrap says so once, with the reason; the command writes, and a read-only plan refuses it', async () => {
    const work = await makeTemporaryFolder();
    const { runtime, logger } = strictRuntime({ command: { sandbox: { mode: 'auto', bwrapPath: '/nonexistent/ca-bwrap' } } });
    expect((await runtime.describe('builtin.command.run')).capability).toMatchObject({ writes: true, checkpointable: false });
    expect((await runtime.describe('builtin.command.run')).sandboxed).toBeUndefined();
    const warnings = () => logger.entries.filter((entry) => entry.level === 'warn' && entry.message.startsWith('The kernel sandbox is off'));
    expect(warnings()).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(
          /^The kernel sandbox is off: command\.sandbox is 'auto' and the sandbox does not work here \(\/nonexistent\/ca-bwrap does not exist\)\. Programs run unconfined/,
        ),
        fields: { code: 'SANDBOX_OFF', setting: 'command.sandbox' },
      }),
    ]);
    const readOnly = createExecutionContext({ policy: { readOnly: true }, resources: [folderResource('work', work)] });
    const refused = await runtime.execute('builtin.command.run', { command: ['true'] }, readOnly).catch((caught: unknown) => caught);
    expect(ToolAccessDeniedError.isInstance(refused)).toBe(true);
    const ctx = createExecutionContext({ resources: [folderResource('work', work)] });
    expect(await runtime.execute<any>('builtin.command.run', { command: ['true'] }, ctx)).toMatchObject({ ok: true, output: { sandbox: 'off' } });
    // Said once, however many calls ran without the sandbox.
    expect(warnings()).toHaveLength(1);
  });

  it('refuses a sandbox setting of the wrong shape with BUILTIN_INVALID_SETTINGS', () => {
    expect(() => strictRuntime({ command: { sandbox: 'sometimes' as never } })).toThrow(
      /Invalid built-in adapter setting command\.sandbox: must be 'required', 'auto' or 'off'/,
    );
    expect(() => strictRuntime({ command: { sandbox: { mode: 'auto', network: 'no' } as never } })).toThrow(/command\.sandbox\.network: must be true or false/);
  });
});

describeSandboxed('builtin.command.run in the kernel sandbox (real bwrap)', () => {
  let work: string;

  beforeEach(async () => {
    work = await makeTemporaryFolder();
    await writeFile(join(work, 'README.md'), '# project\n');
    await mkdir(join(work, 'src'));
    await writeFile(join(work, 'src', 'main.c'), 'int main(void) { return 0; }\n');
  });

  afterEach(removeTemporaryFolders);

  it('runs in a read-only plan instead of being refused: it reads the workspace, fails to write it, and zero bytes change on disk', async () => {
    const { runtime } = strictRuntime({ command: { sandbox: 'required' } });
    const before = await snapshotTree(work);
    const ctx = runtime.createPlan({ policy: { readOnly: true }, resources: [folderResource('work', work)] });
    const result = await runtime.execute<any>(
      'builtin.command.run',
      { command: ['sh', '-c', 'cat README.md; wc -l < src/main.c; echo changed > README.md; rm -rf src; touch new.txt; echo "last exit $?"'] },
      ctx,
    );
    expect(result).toMatchObject({ ok: true, output: { exitCode: 0, sandbox: 'read-only', stdout: '# project\n1\nlast exit 1\n' } });
    expect(result.output.stderr).toMatch(/README\.md: Read-only file system/);
    expect(result.output.stderr).toMatch(/rm: cannot remove 'src\/main\.c': Read-only file system/);
    expect(await snapshotTree(work)).toEqual(before);
    expect(ctx.changes).toHaveLength(0);
    await runtime.endPlan(ctx);
  });

  it("asks before rm in a plan whose approval policy names 'destructive', as before builtin.fs.delete; a read-only plan runs it on a read-only mount without asking", async () => {
    await writeFile(join(work, 'keep.txt'), 'kept\n');
    const asked: ApprovalRequest[] = [];
    const { runtime } = strictRuntime(
      { command: { sandbox: 'required' } },
      {
        approvalHandler: {
          requestApproval: (request) => {
            asked.push(request);
            return { decision: 'deny', reason: 'not this file', decidedBy: 'test' };
          },
        },
      },
    );
    const resources = [folderResource('work', work)];
    const approval = { capabilities: ['destructive' as const] };
    const plain = createExecutionContext({ planId: 'plain-plan', policy: { approval }, resources });
    const refused = await runtime.execute('builtin.command.run', { command: ['rm', 'keep.txt'] }, plain).catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ code: 'TOOL_APPROVAL_DENIED' });
    const deleteRefused = await runtime.execute('builtin.fs.delete', { path: 'keep.txt' }, plain).catch((caught: unknown) => caught);
    expect(deleteRefused).toMatchObject({ code: 'TOOL_APPROVAL_DENIED' });
    expect(asked.map((request) => [request.toolName, request.reason.match, request.capability.writes, request.capability.destructive])).toEqual([
      ['builtin.command.run', 'destructive', true, true],
      ['builtin.fs.delete', 'destructive', true, true],
    ]);
    expect(await readFile(join(work, 'keep.txt'), 'utf8')).toBe('kept\n');

    const readOnly = createExecutionContext({ planId: 'read-only-plan', policy: { readOnly: true, approval }, resources });
    const result = await runtime.execute<any>('builtin.command.run', { command: ['rm', 'keep.txt'] }, readOnly);
    expect(asked).toHaveLength(2);
    expect(result).toMatchObject({ ok: true, output: { sandbox: 'read-only', exitCode: 1 } });
    expect(result.output.stderr).toMatch(/Read-only file system/);
    expect(await readFile(join(work, 'keep.txt'), 'utf8')).toBe('kept\n');
    await runtime.endPlan(plain);
    await runtime.endPlan(readOnly);
  });

  it('reports a write outside the bound resources as the kernel refused it, and keeps the write inside', async () => {
    const { runtime } = strictRuntime({ command: { sandbox: 'required' } });
    const ctx = createExecutionContext({ resources: [folderResource('work', work)] });
    const result = await runtime.execute<any>(
      'builtin.command.run',
      { command: [node, '-e', "const fs = require('fs'); fs.writeFileSync('kept.txt', 'x'); fs.writeFileSync('/usr/ca-escape', 'x')"] },
      ctx,
    );
    expect(result).toMatchObject({ ok: true, output: { exitCode: 1, sandbox: 'in-place' } });
    expect(result.output.stderr).toMatch(/EROFS: read-only file system, open '\/usr\/ca-escape'/);
    expect(await readFile(join(work, 'kept.txt'), 'utf8')).toBe('x');
  });

  it("rolls back sed -i, a heredoc write, rm -rf sub/ and git commit in one checkpoint plan: every file's sha256 and mode as before", async () => {
    await writeFile(join(work, 'config.ini'), 'mode = old\nlevel = 1\n');
    // Larger than the inline limit of undo data: its previous content goes to the plan's backup folder.
    await writeFile(join(work, 'big.txt'), `${'old line\n'.repeat(20_000)}`);
    await mkdir(join(work, 'notes'));
    await mkdir(join(work, 'sub', 'deep'), { recursive: true });
    await writeFile(join(work, 'sub', 'a.txt'), 'a\n');
    await writeFile(join(work, 'sub', 'deep', 'secret.key'), 'k\n');
    await chmod(join(work, 'sub', 'deep', 'secret.key'), 0o600);
    await writeFile(join(work, 'sub', 'run.sh'), '#!/bin/sh\necho run\n');
    await chmod(join(work, 'sub', 'run.sh'), 0o755);
    await chmod(join(work, 'sub', 'deep'), 0o750);
    await execFileAsync('git', [...GIT_IDENTITY, 'init', '-q'], { cwd: work });
    await execFileAsync('git', [...GIT_IDENTITY, 'add', '-A'], { cwd: work });
    await execFileAsync('git', [...GIT_IDENTITY, 'commit', '-q', '-m', 'before'], { cwd: work });
    const before = await snapshotTree(work);

    const { runtime } = strictRuntime({ command: { sandbox: 'required' } });
    const ctx = runtime.createPlan({ policy: { requireCheckpoint: true }, resources: [folderResource('work', work)] });
    const mark = createCheckpoint(ctx);
    const commands = [
      ['sed', '-i', 's/old/new/', 'config.ini', 'big.txt'],
      ['sh', '-c', "cat > notes/plan.md <<'EOF'\n# Plan\nwritten by a heredoc\nEOF"],
      ['rm', '-rf', 'sub/'],
      ['git', ...GIT_IDENTITY, 'commit', '-q', '-am', 'made in the sandbox'],
    ];
    for (const command of commands) {
      const result = await runtime.execute<any>('builtin.command.run', { command }, ctx);
      expect([command[0], result.ok, result.output?.exitCode, result.output?.sandbox, result.output?.stderr]).toEqual([command[0], true, 0, 'overlay', '']);
    }
    expect(await readFile(join(work, 'config.ini'), 'utf8')).toBe('mode = new\nlevel = 1\n');
    expect((await readFile(join(work, 'big.txt'), 'utf8')).startsWith('new line\n')).toBe(true);
    expect(await readFile(join(work, 'notes', 'plan.md'), 'utf8')).toBe('# Plan\nwritten by a heredoc\n');
    expect(Object.keys(await snapshotTree(work)).some((path) => path.startsWith('sub'))).toBe(false);
    expect((await execFileAsync('git', ['log', '--format=%s'], { cwd: work })).stdout).toBe('made in the sandbox\nbefore\n');
    expect(ctx.changes.length).toBeGreaterThan(10);
    for (const change of ctx.changes) {
      expect(change).toMatchObject({ toolName: 'builtin.command.run', resourceId: 'work', undo: { format: UNDO_FORMAT, path: change.target } });
    }
    expect(ctx.changes.filter((change) => change.target.startsWith(join(work, 'sub'))).map((change) => change.kind)).toEqual([
      'delete',
      'delete',
      'delete',
      'delete',
      'delete',
    ]);

    const report = await rollback(ctx, mark);
    expect(report.skipped).toEqual([]);
    expect(await snapshotTree(work)).toEqual(before);
    await runtime.endPlan(ctx);
  }, 60_000);

  it('applies nothing of a command that timed out or was cancelled in a checkpoint plan', async () => {
    const { runtime } = strictRuntime({ command: { sandbox: 'required', killGraceMs: 200 } });
    const before = await snapshotTree(work);
    const ctx = runtime.createPlan({ policy: { requireCheckpoint: true }, resources: [folderResource('work', work)] });
    const timedOut = await runtime.execute<any>(
      'builtin.command.run',
      { command: ['sh', '-c', 'echo changed > README.md; rm -rf src; sleep 30'], timeoutMs: 500 },
      ctx,
    );
    expect(codeOf(timedOut)).toBe('BUILTIN_COMMAND_TIMED_OUT');
    expect(timedOut.ok ? '' : timedOut.error.message).toMatch(/None of its changes were applied/);
    const running = runtime
      .execute('builtin.command.run', { command: ['sh', '-c', 'echo changed > README.md; sleep 30'] }, ctx)
      .catch((caught: unknown) => caught);
    setTimeout(() => ctx.cancellationToken.cancel('stopped by the user'), 300);
    expect(ToolCancelledError.isInstance(await running)).toBe(true);
    expect(await snapshotTree(work)).toEqual(before);
    expect(ctx.changes).toHaveLength(0);
    await runtime.endPlan(ctx);
  });

  it('ends a setsid daemon the command started when the call ends', async () => {
    const { runtime } = strictRuntime({ command: { sandbox: 'required' } });
    const ctx = createExecutionContext({ resources: [folderResource('work', work)] });
    const sleep = `50.${process.pid}${Math.floor(Math.random() * 1e6)}`;
    const result = await runtime.execute<any>(
      'builtin.command.run',
      { command: ['sh', '-c', `setsid sleep ${sleep} < /dev/null > /dev/null 2>&1 & child=$!; sleep 0.2; kill -0 $child && echo "daemon running"`] },
      ctx,
    );
    const leftovers = processesWithArgument(sleep);
    try {
      expect(result.output).toMatchObject({ exitCode: 0, stdout: 'daemon running\n' });
      // Gone when the call returns: the run ends with the PID namespace.
      expect(leftovers).toEqual([]);
    } finally {
      for (const pid of leftovers.filter(isProcessAlive)) process.kill(pid, 'SIGKILL');
    }
  });

  describe('the network', () => {
    let server: Server;
    let port: number;

    beforeEach(async () => {
      server = createServer((socket) => socket.end('hello\n'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });

    afterEach(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    const connect = [
      node,
      '-e',
      `require('net').connect(Number(process.argv[1]), '127.0.0.1').on('data', (d) => process.stdout.write(String(d))).on('error', (e) => { console.log(e.code); process.exitCode = 1; })`,
    ];

    it('reaches a 127.0.0.1 listener as the plan allows, and not when the settings cut the network off', async () => {
      const ctx = createExecutionContext({ resources: [folderResource('work', work)] });
      const { runtime: online } = strictRuntime({ command: { sandbox: 'required' } });
      expect((await online.execute<any>('builtin.command.run', { command: [...connect, String(port)] }, ctx)).output).toMatchObject({
        exitCode: 0,
        stdout: 'hello\n',
      });
      const { runtime: offline } = strictRuntime({ command: { sandbox: { mode: 'required', network: false } } });
      expect((await offline.execute<any>('builtin.command.run', { command: [...connect, String(port)] }, ctx)).output).toMatchObject({
        exitCode: 1,
        stdout: 'ECONNREFUSED\n',
      });
    });

    it('runs in a plan that denies the network, and the kernel keeps it off the network', async () => {
      const ctx = createExecutionContext({ policy: { network: 'deny' }, resources: [folderResource('work', work)] });
      const { runtime } = strictRuntime({ command: { sandbox: 'required' } });
      const result = await runtime.execute<any>('builtin.command.run', { command: [...connect, String(port)] }, ctx);
      expect(result.ok).toBe(true);
      expect(result.output).toMatchObject({ exitCode: 1, stdout: 'ECONNREFUSED\n' });
    });
  });
});
