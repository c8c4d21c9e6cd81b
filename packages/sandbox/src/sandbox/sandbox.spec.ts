import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { resourceFromPath } from '@ca/tool-context';
import { ProcessStartError, runProcess, startProcess, type RunProcessOptions } from '../process';
import { makeTemporaryFolder, processesWithArgument, removeTemporaryFolders, sandboxAvailableForTests, snapshotTree, uniqueSleep, waitUntil } from '../testing';
import { createSandbox, type SandboxLaunchOptions } from './index';

const describeSandboxed = sandboxAvailableForTests('@ca/sandbox (bubblewrap)') ? describe : describe.skip;
const node = process.execPath;

describeSandboxed('the kernel sandbox (real bwrap)', () => {
  const sandbox = createSandbox('required');
  const leftovers: number[] = [];
  let work: string;
  let outside: string;

  const run = async (launch: SandboxLaunchOptions, options: RunProcessOptions) => {
    const launcher = await sandbox.launcher(launch);
    const result = await runProcess({ timeoutMs: 20_000, ...options, ...(launcher === undefined ? {} : { launcher }) });
    // An overlay's changes are neither applied nor kept here.
    await launcher?.overlay()?.discard();
    return result;
  };

  beforeEach(async () => {
    work = await makeTemporaryFolder();
    outside = await makeTemporaryFolder('ca-sandbox-outside-');
    await writeFile(join(work, 'input.txt'), 'the workspace\n');
    await writeFile(join(outside, 'secret.txt'), 'not bound\n');
  });

  afterEach(async () => {
    for (const pid of leftovers.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await removeTemporaryFolders();
  });

  it("lets a program write its write-bound resource and nothing else: a write elsewhere fails with the kernel's EROFS", async () => {
    const resources = [resourceFromPath({ id: 'work', path: work, access: 'write' })];
    const result = await run(
      { resources, writes: 'in-place', network: false },
      {
        command: 'sh',
        args: ['-c', `cat input.txt; echo made > out.txt; echo x > "${outside}/escape.txt"; echo x > /etc/ca-escape; echo "exit $?"`],
        cwd: work,
      },
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout.text).toBe('the workspace\nexit 2\n');
    expect(result.stderr.text).toMatch(/escape\.txt: (Read-only file system|Directory nonexistent)/);
    expect(result.stderr.text).toMatch(/\/etc\/ca-escape: Read-only file system/);
    expect(await readFile(join(work, 'out.txt'), 'utf8')).toBe('made\n');
    expect(await snapshotTree(outside)).toEqual({ 'secret.txt': expect.stringMatching(/^file /) });
  });

  it("gives a read-only plan's program nothing to write: zero bytes change on disk, and EROFS is what it sees", async () => {
    await mkdir(join(work, 'src'));
    await writeFile(join(work, 'src', 'main.c'), 'int main(void) { return 0; }\n');
    const before = await snapshotTree(work);
    const resources = [resourceFromPath({ id: 'work', path: work, access: 'write' })];
    const result = await run(
      { resources, writes: 'none', network: false },
      {
        command: node,
        args: [
          '-e',
          `const fs = require('fs');
           const tries = [() => fs.writeFileSync('input.txt', 'changed'), () => fs.rmSync('src', { recursive: true }), () => fs.mkdirSync('new'), () => fs.renameSync('input.txt', 'moved.txt')];
           console.log(fs.readFileSync('input.txt', 'utf8').trim(), tries.map((attempt) => { try { attempt(); return 'wrote'; } catch (error) { return error.code; } }).join(' '));`,
        ],
        cwd: work,
      },
    );
    expect(result.stdout.text).toBe('the workspace EROFS EROFS EROFS EROFS\n');
    expect(await snapshotTree(work)).toEqual(before);
  });

  it('keeps a read-only resource nested in a writable one read-only, and gives the program a private /tmp', async () => {
    await mkdir(join(work, 'vendor'));
    await writeFile(join(work, 'vendor', 'lib.js'), 'x');
    await writeFile('/tmp/ca-sandbox-host-file', 'host');
    const resources = [
      resourceFromPath({ id: 'work', path: work, access: 'write' }),
      resourceFromPath({ id: 'vendor', path: join(work, 'vendor'), access: 'read' }),
    ];
    const result = await run(
      { resources, writes: 'in-place', network: false },
      {
        command: 'sh',
        args: ['-c', 'echo y > vendor/lib.js; echo t > /tmp/private && cat /tmp/private; ls /tmp/ca-sandbox-host-file 2>&1; echo ok > top.txt'],
        cwd: work,
      },
    );
    expect(result.stderr.text).toMatch(/vendor\/lib\.js: Read-only file system/);
    expect(result.stdout.text).toMatch(/^t\n.*No such file or directory\n$/);
    await rm('/tmp/ca-sandbox-host-file', { force: true });
    expect(await readFile(join(work, 'vendor', 'lib.js'), 'utf8')).toBe('x');
    expect(await readFile(join(work, 'top.txt'), 'utf8')).toBe('ok\n');
  });

  it.each(['in-place', 'overlay'] as const)(
    'gives the program (%s) no capability: as root too it can neither remount the root read-write nor write /proc/sys',
    async (writes) => {
      const corePattern = (await readFile('/proc/sys/kernel/core_pattern', 'utf8')).trim();
      const resources = [resourceFromPath({ id: 'work', path: work, access: 'write' })];
      const result = await run(
        { resources, writes, network: false },
        {
          command: 'sh',
          // The value written is the one already set: were the write to pass, nothing would change.
          args: [
            '-c',
            'grep CapEff /proc/self/status; mount -o remount,bind,rw / 2>/dev/null && echo remounted; printf "%s\\n" "$1" > /proc/sys/kernel/core_pattern && echo wrote-sysctl; touch /var/ca-sandbox-escape 2>/dev/null || echo root-read-only',
            'sh',
            corePattern,
          ],
          cwd: work,
        },
      );
      expect(result.stdout.text).toBe('CapEff:\t0000000000000000\nroot-read-only\n');
      expect(result.stderr.text).toMatch(/core_pattern: Read-only file system/);
    },
  );

  it('ends a setsid daemon the program started when the call ends: the PID namespace goes with the program', async () => {
    const sleep = uniqueSleep();
    const result = await run(
      { writes: 'none', network: false },
      {
        command: 'sh',
        args: ['-c', `setsid sleep ${sleep} < /dev/null > /dev/null 2>&1 & child=$!; sleep 0.2; kill -0 $child && echo "daemon running"`],
        cwd: work,
      },
    );
    const left = processesWithArgument(sleep);
    leftovers.push(...left);
    expect(result).toMatchObject({ exitCode: 0, stdout: { text: 'daemon running\n' } });
    // Gone when the call returns, not some time later: the run ends with the namespace.
    expect(left).toEqual([]);
  });

  it('stops a program that ignores SIGTERM at the deadline, with everything it started', async () => {
    const sleep = uniqueSleep();
    const result = await run(
      { writes: 'none', network: false },
      { command: 'sh', args: ['-c', `trap "" TERM; setsid sleep ${sleep} & echo started; sleep ${sleep}`], cwd: work, timeoutMs: 1_000, killGraceMs: 200 },
    );
    const left = processesWithArgument(sleep);
    leftovers.push(...left);
    expect(result).toMatchObject({ timedOut: true, stdout: { text: 'started\n' } });
    expect(left).toEqual([]);
  });

  describe('the network', () => {
    let server: Server;
    let port: number;
    let accepted: number;

    beforeEach(async () => {
      accepted = 0;
      server = createServer((socket) => {
        accepted++;
        socket.end('hello from the host\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });

    afterEach(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    const connect = (network: boolean) =>
      run(
        { writes: 'none', network },
        {
          command: node,
          args: [
            '-e',
            `const socket = require('net').connect(${port}, '127.0.0.1');
             socket.on('data', (data) => process.stdout.write(String(data)));
             socket.on('error', (error) => { console.log(error.code); process.exitCode = 1; });`,
          ],
          cwd: work,
        },
      );

    it('fails a call to a 127.0.0.1 listener without the network: the program has a loopback of its own', async () => {
      const result = await connect(false);
      expect(result).toMatchObject({ exitCode: 1, stdout: { text: 'ECONNREFUSED\n' } });
      expect(accepted).toBe(0);
    });

    it('reaches the listener when the network is allowed', async () => {
      const result = await connect(true);
      expect(result).toMatchObject({ exitCode: 0, stdout: { text: 'hello from the host\n' } });
      expect(accepted).toBe(1);
    });

    it('never gives the network when the settings take it away, whatever the plan allows', async () => {
      const offline = createSandbox({ mode: 'required', network: false });
      const launcher = await offline.launcher({ writes: 'none', network: true });
      expect(launcher?.network).toBe(false);
    });
  });

  it('passes the environment to the program only, as given', async () => {
    const result = await run(
      { writes: 'none', network: false },
      {
        command: node,
        args: ['-e', 'process.stdout.write(JSON.stringify(process.env))'],
        inheritEnv: ['PATH'],
        env: { GIVEN: 'a b', TMPDIR: '/var/tmp' },
        cwd: work,
      },
    );
    // TMPDIR points where the program cannot write: it gets the private /tmp instead. bwrap sets PWD, as a shell would.
    expect(JSON.parse(result.stdout.text)).toEqual({ PATH: process.env['PATH'], GIVEN: 'a b', TMPDIR: '/tmp', PWD: work });
  });

  it('reports a program that is not there as the runner does without the sandbox, starting nothing', async () => {
    const launcher = await sandbox.launcher({ writes: 'none', network: false });
    const error = await runProcess({ command: 'ca-no-such-program', cwd: work, launcher: launcher as never, toolName: 't', planId: 'p' }).catch(
      (caught: unknown) => caught,
    );
    expect(ProcessStartError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'PROCESS_START_FAILED', systemCode: 'ENOENT', toolName: 't', planId: 'p' });
  });

  it('runs a long-lived program (startProcess) in the sandbox: its setsid children end when it is closed', async () => {
    const sleep = uniqueSleep();
    const launcher = await sandbox.launcher({ writes: 'none', network: false });
    const server = await startProcess({
      command: 'sh',
      args: ['-c', `setsid sleep ${sleep} < /dev/null > /dev/null 2>&1 & echo ready; cat`],
      cwd: work,
      launcher: launcher as never,
      killGraceMs: 500,
    });
    const firstLine = await new Promise<string>((resolve) => server.stdout.once('data', (chunk: Buffer) => resolve(String(chunk))));
    expect(firstLine).toBe('ready\n');
    expect(await waitUntil(() => processesWithArgument(sleep).length === 1)).toBe(true);
    leftovers.push(...processesWithArgument(sleep));
    await server.close();
    expect(processesWithArgument(sleep)).toEqual([]);
  });
});
