import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  isProcessAlive,
  killProcesses,
  makeTemporaryFolder,
  processesWithArgument,
  removeTemporaryFolders,
  snapshotTree,
  uniqueSleep,
  waitUntil,
  waitUntilProcessesGone,
} from './index';

describe('@ca/sandbox/testing', () => {
  it('finds a process by a word of its command line, and kills it', async () => {
    const duration = uniqueSleep(30);
    expect(duration).toMatch(/^30\.\d+$/);
    expect(duration).not.toBe(uniqueSleep(30));
    const child = spawn('sleep', [duration], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('spawn', resolve));
    expect(await waitUntil(() => processesWithArgument(duration).length === 1)).toBe(true);
    expect(processesWithArgument(duration)).toEqual([child.pid]);
    killProcesses([child.pid!, 2 ** 22 + 12_345]); // the second does not exist: ignored
    expect(await waitUntilProcessesGone([child.pid!])).toBe(true);
    expect(isProcessAlive(child.pid!)).toBe(false);
    expect(processesWithArgument(duration)).toEqual([]);
  });

  it('gives up waiting after the timeout', async () => {
    expect(await waitUntil(() => false, 50)).toBe(false);
  });

  it('snapshots a tree by type, permission bits and content, and removes its temporary folders', async () => {
    const folder = await makeTemporaryFolder('ca-testing-spec-');
    await writeFile(join(folder, 'a.txt'), 'one');
    await symlink('a.txt', join(folder, 'link'));
    const before = await snapshotTree(folder);
    expect(Object.keys(before)).toEqual(['a.txt', 'link']);
    expect(before['link']).toBe('link a.txt');
    expect(await snapshotTree(folder)).toEqual(before);
    await writeFile(join(folder, 'a.txt'), 'two');
    const changed = await snapshotTree(folder);
    expect(changed['a.txt']).not.toBe(before['a.txt']);
    await writeFile(join(folder, 'a.txt'), 'one');
    await chmod(join(folder, 'a.txt'), 0o600);
    expect((await snapshotTree(folder))['a.txt']).toMatch(/^file 600 /);
    await removeTemporaryFolders();
    expect(existsSync(folder)).toBe(false);
  });
});
