import { chmod, lstat, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourceFromPath, type BoundResource } from '@ca/tool-context';
import { runProcess } from '../process';
import { makeTemporaryFolder, removeTemporaryFolders, sandboxAvailableForTests, snapshotTree } from '../testing';
import { createSandbox, SandboxOverlayError, type OverlayChange, type SandboxLauncher } from './index';

const describeSandboxed = sandboxAvailableForTests('@ca/sandbox overlays (bubblewrap, unshare)') ? describe : describe.skip;

describeSandboxed('checkpoint overlays (real bwrap, unshare and overlayfs)', () => {
  const sandbox = createSandbox('required');
  let work: string;
  let resources: BoundResource[];

  beforeEach(async () => {
    work = await makeTemporaryFolder();
    resources = [resourceFromPath({ id: 'work', path: work, access: 'write' })];
    await writeFile(join(work, 'config.ini'), 'mode = old\n');
    await mkdir(join(work, 'sub', 'deep'), { recursive: true });
    await writeFile(join(work, 'sub', 'a.txt'), 'a');
    await writeFile(join(work, 'sub', 'deep', 'b.txt'), 'b');
    await writeFile(join(work, 'script.sh'), '#!/bin/sh\n');
    await chmod(join(work, 'script.sh'), 0o644);
    await symlink('config.ini', join(work, 'link'));
  });

  afterEach(removeTemporaryFolders);

  async function runOnOverlay(
    script: string,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<{ launcher: SandboxLauncher; exitCode: number | null; stderr: string; cancelled: boolean; timedOut: boolean }> {
    const launcher = (await sandbox.launcher({ resources, writes: 'overlay', network: false })) as SandboxLauncher;
    const result = await runProcess({
      command: 'sh',
      args: ['-c', script],
      cwd: work,
      launcher,
      timeoutMs: options.timeoutMs ?? 20_000,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return { launcher, exitCode: result.exitCode, stderr: result.stderr.text, cancelled: result.cancelled, timedOut: result.timedOut };
  }

  const describeChange = (change: OverlayChange) => `${change.kind} ${change.relativePath}`;

  it('lets the program see its own edits while the real tree stays untouched, and reads them back as changes', async () => {
    const before = await snapshotTree(work);
    const { launcher, exitCode, stderr } = await runOnOverlay(
      [
        'sed -i "s/old/new/" config.ini',
        'cat > notes.md <<EOF\n# written by a heredoc\nEOF',
        'rm -rf sub/',
        'chmod 755 script.sh',
        'ln -sfn notes.md link',
        'grep -q new config.ini && test ! -e sub && echo "sees its edits"',
      ].join('\n'),
    );
    expect(exitCode).toBe(0);
    expect(stderr).toBe('');
    expect(await snapshotTree(work)).toEqual(before);
    const overlay = launcher.overlay();
    expect(overlay?.changes.map(describeChange)).toEqual([
      'modify config.ini',
      'modify link',
      'create notes.md',
      'modify script.sh',
      'delete sub/a.txt',
      'delete sub/deep/b.txt',
      'delete sub/deep',
      'delete sub',
    ]);
    expect(overlay?.changes.find((change) => change.relativePath === 'script.sh')).toMatchObject({
      before: { type: 'file', mode: 0o644 },
      after: { type: 'file', mode: 0o755 },
    });
    expect(overlay?.changes.find((change) => change.relativePath === 'link')).toMatchObject({
      before: { type: 'symlink', target: 'config.ini' },
      after: { type: 'symlink', target: 'notes.md' },
    });
    await overlay?.discard();
    expect(await snapshotTree(work)).toEqual(before);
  });

  it('applies the changes to the real tree, calling capture before anything changes and applied after each change', async () => {
    const { launcher } = await runOnOverlay(
      'sed -i "s/old/new/" config.ini && echo hi > sub/new.txt && rm sub/deep/b.txt && mkdir -p made/inner && echo x > made/inner/x && chmod 500 made/inner',
    );
    const overlay = launcher.overlay();
    const captured: string[] = [];
    const applied: string[] = [];
    await overlay?.apply({
      capture: async (change, target) => {
        const stats = await target.directory.lstat(target.name);
        captured.push(`${change.kind} ${change.relativePath} ${stats?.size}`);
        return stats?.size;
      },
      applied: (change, size) => applied.push(`${describeChange(change)} ${String(size)}`),
    });
    expect(captured).toEqual(['modify config.ini 11', 'delete sub/deep/b.txt 1']);
    expect(applied).toEqual([
      'modify config.ini 11',
      'create made undefined',
      'create made/inner undefined',
      'create made/inner/x undefined',
      'delete sub/deep/b.txt 1',
      'create sub/new.txt undefined',
    ]);
    expect(await readFile(join(work, 'config.ini'), 'utf8')).toBe('mode = new\n');
    expect(await readFile(join(work, 'sub', 'new.txt'), 'utf8')).toBe('hi\n');
    expect(await readdir(join(work, 'sub', 'deep'))).toEqual([]);
    expect(await readFile(join(work, 'made', 'inner', 'x'), 'utf8')).toBe('x\n');
    expect((await lstat(join(work, 'made', 'inner'))).mode & 0o777).toBe(0o500);
    await expect(overlay?.apply()).rejects.toThrow(/already applied or discarded/);
  });

  it('reads a folder deleted and made again (opaque) as the deletion of every old entry', async () => {
    const { launcher } = await runOnOverlay('rm -rf sub && mkdir sub && echo new > sub/a.txt');
    const overlay = launcher.overlay();
    expect(overlay?.changes.map(describeChange)).toEqual(['delete sub/deep/b.txt', 'delete sub/deep', 'modify sub/a.txt']);
    await overlay?.apply();
    expect(await snapshotTree(join(work, 'sub'))).toEqual({ 'a.txt': expect.stringMatching(/^file 644 /) });
    expect(await readFile(join(work, 'sub', 'a.txt'), 'utf8')).toBe('new\n');
  });

  it('replaces a file by a folder and a folder by a file: the old entry is deleted first', async () => {
    const { launcher } = await runOnOverlay('rm config.ini && mkdir config.ini && echo in > config.ini/inside && rm -r sub && echo now-a-file > sub');
    const overlay = launcher.overlay();
    expect(overlay?.changes.map(describeChange)).toEqual([
      'delete config.ini',
      'create config.ini',
      'create config.ini/inside',
      'delete sub/a.txt',
      'delete sub/deep/b.txt',
      'delete sub/deep',
      'delete sub',
      'create sub',
    ]);
    await overlay?.apply();
    expect(await readFile(join(work, 'config.ini', 'inside'), 'utf8')).toBe('in\n');
    expect(await readFile(join(work, 'sub'), 'utf8')).toBe('now-a-file\n');
  });

  it('finds no change in a file opened for writing but left as it was, and leaves the set-user-id bit inside the sandbox', async () => {
    const { launcher } = await runOnOverlay(
      'cat config.ini >> config.ini.tmp && cp config.ini config.ini.tmp && mv config.ini.tmp config.ini && rm -f config.ini.tmp && touch sub/a.txt && echo run > tool && chmod 4755 tool',
    );
    const overlay = launcher.overlay();
    expect(overlay?.changes.map(describeChange)).toEqual(['create tool']);
    expect(overlay?.changes[0]?.after).toEqual({ type: 'file', mode: 0o4755, size: 4 });
    await overlay?.apply();
    expect((await lstat(join(work, 'tool'))).mode & 0o7777).toBe(0o755);
  });

  it('discards the overlay of a cancelled or timed-out run: nothing to apply, nothing left in the temporary folder', async () => {
    const overlayFolders = async () => (await readdir(tmpdir())).filter((name) => /^ca-sandbox-[A-Za-z0-9]{6}$/.test(name));
    const scratchBefore = await overlayFolders();
    const timedOut = await runOnOverlay('echo changed > config.ini; sleep 30', { timeoutMs: 500 });
    expect(timedOut.timedOut).toBe(true);
    expect(timedOut.launcher.overlay()).toBeUndefined();
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 300);
    const cancelled = await runOnOverlay('echo changed > config.ini; sleep 30', { signal: controller.signal });
    expect(cancelled.cancelled).toBe(true);
    expect(cancelled.launcher.overlay()).toBeUndefined();
    expect(await readFile(join(work, 'config.ini'), 'utf8')).toBe('mode = old\n');
    const scratchAfter = await overlayFolders();
    expect(scratchAfter.filter((name) => !scratchBefore.includes(name))).toEqual([]);
  });

  it('stops at a change that cannot be made, having reported every change it made', async () => {
    const { launcher } = await runOnOverlay('echo a > a.txt && echo b > sub/b.txt');
    const overlay = launcher.overlay();
    // Meanwhile the real folder became a file: the second change has nowhere to go.
    await rm(join(work, 'sub'), { recursive: true });
    await writeFile(join(work, 'sub'), 'now a file');
    const applied: string[] = [];
    const error = await overlay?.apply({ applied: (change) => applied.push(describeChange(change)) }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'SANDBOX_OVERLAY_FAILED', stage: 'apply', appliedCount: 1, path: join(work, 'sub', 'b.txt') });
    expect((error as Error).message).toMatch(/1 other change\(s\) were applied and recorded, with undo data; the rest were not/);
    expect(applied).toEqual(['create a.txt']);
    expect(await readFile(join(work, 'a.txt'), 'utf8')).toBe('a\n');
  });

  it('applies nothing when capturing the previous state fails, and says so', async () => {
    const { launcher } = await runOnOverlay('echo changed > config.ini && rm sub/a.txt');
    const overlay = launcher.overlay();
    const error = await overlay
      ?.apply({
        capture: async (change) => {
          if (change.relativePath === 'sub/a.txt') throw new Error('cannot keep undo data');
          return undefined;
        },
      })
      .catch((caught: unknown) => caught);
    expect(SandboxOverlayError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'SANDBOX_OVERLAY_FAILED', stage: 'apply', appliedCount: 0, path: join(work, 'sub', 'a.txt') });
    expect((error as Error).message).toMatch(/nothing was applied\): cannot keep undo data\./);
    expect(await readFile(join(work, 'config.ini'), 'utf8')).toBe('mode = old\n');
  });
});
