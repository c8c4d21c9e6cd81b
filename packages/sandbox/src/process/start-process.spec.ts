import { once } from 'node:events';
import { isProcessAlive, killProcesses, waitUntilProcessesGone } from '../testing';
import { ProcessStartError } from './process-start-error';
import { startProcess } from './start-process';

// Child processes start slowly on a loaded machine; a hang guard, not a speed requirement.
jest.setTimeout(30_000);

const node = process.execPath;

/** A line server: answers each stdin line with `echo:<line>`, logs to stderr, exits 0 at the end of stdin. */
const LINE_SERVER = `
  const lines = require('node:readline').createInterface({ input: process.stdin });
  process.stderr.write('ready ' + '€'.repeat(3) + '\\n');
  lines.on('line', (line) => process.stdout.write('echo:' + line + '\\n'));
  lines.on('close', () => { process.stderr.write('bye\\n'); process.exit(0); });`;

/** Ignores the end of stdin and SIGTERM, and starts a grandchild in its group, whose pid it prints first. */
const STUBBORN_SERVER = `
  const { spawn } = require('node:child_process');
  const grandchild = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  process.on('SIGTERM', () => process.stderr.write('ignoring SIGTERM\\n'));
  process.stdin.resume();
  process.stdout.write(grandchild.pid + '\\n');
  setInterval(() => {}, 1000);`;

async function firstLine(stream: NodeJS.ReadableStream): Promise<string> {
  const [chunk] = (await once(stream, 'data')) as [Buffer];
  return chunk.toString('utf8').split('\n')[0] as string;
}

describe('startProcess', () => {
  const leftovers: number[] = [];

  afterEach(() => killProcesses(leftovers.splice(0)));

  it('speaks through stdin and stdout, keeps the end of stderr, and closes politely through stdin', async () => {
    const pieces: string[] = [];
    const running = await startProcess({ command: node, args: ['-e', LINE_SERVER], onStderr: (text) => pieces.push(text), maxStderrBytes: 8 });
    leftovers.push(running.pid);
    running.stdin.write('hello\n');
    expect(await firstLine(running.stdout)).toBe('echo:hello');
    expect(running.exit).toBeUndefined();
    await running.close();
    const exit = await running.exited;
    expect(exit).toMatchObject({ pid: running.pid, exitCode: 0, signal: null, cancelled: false, timedOut: false });
    expect(running.exit).toBe(exit);
    expect(pieces.join('')).toBe('ready €€€\nbye\n');
    // The last 8 bytes of 'ready €€€\nbye\n' (20 bytes in UTF-8).
    expect(running.stderr()).toEqual({ text: '€\nbye\n', keptBytes: 8, totalBytes: 20, truncated: true });
  });

  it('close() goes on to SIGTERM and SIGKILL for a program that ignores both stdin and SIGTERM, and its group goes too', async () => {
    const running = await startProcess({ command: node, args: ['-e', STUBBORN_SERVER], killGraceMs: 200 });
    const grandchild = Number(await firstLine(running.stdout));
    leftovers.push(running.pid, grandchild);
    await running.close();
    expect(running.exit).toMatchObject({ exitCode: null, signal: 'SIGKILL', cancelled: false });
    expect(running.stderr().text).toContain('ignoring SIGTERM');
    expect(await waitUntilProcessesGone([running.pid, grandchild])).toBe(true);
  });

  it('close({ exitWaitMs: 0 }) sends SIGTERM with the end of stdin, without waiting for the program to exit on its own', async () => {
    // Exits 3 s after the end of its stdin, unless SIGTERM ends it first.
    const running = await startProcess({
      command: node,
      args: ['-e', 'process.stdin.resume(); process.stdin.on("end", () => setTimeout(() => process.exit(0), 3000)); process.stdout.write("ready\\n")'],
      killGraceMs: 10_000,
    });
    leftovers.push(running.pid);
    expect(await firstLine(running.stdout)).toBe('ready');
    await running.close({ exitWaitMs: 0 });
    expect(running.exit).toMatchObject({ signal: 'SIGTERM', exitCode: null });
    await expect(running.close({ exitWaitMs: -1 })).rejects.toMatchObject({ code: 'PROCESS_INVALID_OPTIONS', option: 'exitWaitMs' });
  });

  it('terminate() sends SIGTERM to the group at once; calling it again does nothing more', async () => {
    const running = await startProcess({ command: 'sh', args: ['-c', 'sleep 30 & echo $!; wait'] });
    const background = Number(await firstLine(running.stdout));
    leftovers.push(running.pid, background);
    await Promise.all([running.terminate(), running.terminate(), running.close()]);
    expect(running.exit).toMatchObject({ signal: 'SIGTERM' });
    expect(await waitUntilProcessesGone([background])).toBe(true);
  });

  it('when the program dies on its own, kills what it left in its group without being asked', async () => {
    const running = await startProcess({ command: 'sh', args: ['-c', 'sleep 30 & echo $!; read line; exit 4'] });
    const background = Number(await firstLine(running.stdout));
    leftovers.push(background);
    expect(isProcessAlive(background)).toBe(true);
    running.stdin.write('go\n');
    expect(await running.exited).toMatchObject({ exitCode: 4 });
    expect(await waitUntilProcessesGone([background])).toBe(true);
  });

  it('stops the program when its signal aborts', async () => {
    const controller = new AbortController();
    const running = await startProcess({ command: 'sleep', args: ['30'], signal: controller.signal });
    leftovers.push(running.pid);
    controller.abort();
    expect(await running.exited).toMatchObject({ cancelled: true, signal: 'SIGTERM' });
  });

  it('reports a broken stdin through onError, and the runtime does not crash', async () => {
    const errors: Error[] = [];
    const running = await startProcess({ command: 'sh', args: ['-c', 'exec 0<&-; echo closed; sleep 30'], onError: (error) => errors.push(error) });
    leftovers.push(running.pid);
    expect(await firstLine(running.stdout)).toBe('closed');
    running.stdin.write('x'.repeat(1 << 20));
    for (let attempt = 0; attempt < 400 && errors.length === 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(errors.map((error) => (error as { code?: unknown }).code)).toEqual(['EPIPE']);
    await running.terminate();
    expect(running.exit).toMatchObject({ signal: 'SIGTERM' });
  });

  it('rejects with ProcessStartError for a program that does not exist, and with the abort reason when aborted before the start', async () => {
    const missing = await startProcess({ command: 'ca-no-such-server' }).catch((error: unknown) => error);
    expect(ProcessStartError.isInstance(missing)).toBe(true);
    expect(missing).toMatchObject({ code: 'PROCESS_START_FAILED', systemCode: 'ENOENT' });
    const controller = new AbortController();
    const reason = new Error('plan cancelled');
    controller.abort(reason);
    await expect(startProcess({ command: 'sleep', args: ['30'], signal: controller.signal })).rejects.toBe(reason);
  });
});
