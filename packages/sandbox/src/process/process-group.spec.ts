import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { signalProcessGroup } from './process-group';
import { isProcessAlive, waitUntilProcessesGone } from '../testing/processes';

// POSIX only, like the process groups themselves.
describe('signalProcessGroup', () => {
  const started: number[] = [];
  afterEach(() => {
    for (const pid of started.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });

  it('reaches the background processes of a child that has already exited', async () => {
    const child = spawn('sh', ['-c', 'sleep 30 > /dev/null 2>&1 < /dev/null & echo $!'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await once(child, 'close');
    const background = Number(output.trim());
    started.push(background);
    expect(isProcessAlive(background)).toBe(true);
    signalProcessGroup(child, 'SIGKILL');
    expect(await waitUntilProcessesGone([background])).toBe(true);
    // Again, with the group gone: nothing to do, nothing thrown.
    expect(() => signalProcessGroup(child, 'SIGKILL')).not.toThrow();
  });

  it('stops a running child and its children with SIGTERM', async () => {
    const child = spawn('sh', ['-c', 'sleep 30 & echo $!; wait'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
    const background = Number(chunk.toString().trim());
    started.push(background, child.pid as number);
    const closed = once(child, 'close');
    signalProcessGroup(child, 'SIGTERM');
    const [, signal] = (await closed) as [number | null, NodeJS.Signals | null];
    expect(signal).toBe('SIGTERM');
    expect(await waitUntilProcessesGone([background])).toBe(true);
  });

  it('does nothing for a child that never got a pid', () => {
    expect(() => signalProcessGroup({ pid: undefined, kill: () => true }, 'SIGKILL')).not.toThrow();
  });
});
