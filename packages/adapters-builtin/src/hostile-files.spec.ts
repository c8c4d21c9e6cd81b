import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { link, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { promises as dns } from 'node:dns';
import { join } from 'node:path';
import { createExecutionContext, type PlanContext } from '@ca/tool-context';
import { codeOf, folderResource, makeTemporaryFolder, removeTemporaryFolders, snapshotTree, strictRuntime } from './workspace.test-helper';

// Hang guards (a blocking FIFO would never finish), not speed requirements: the machine may be loaded.
jest.setTimeout(30_000);

/** Settles with the value, or with 'hung' when `promise` has not settled after `ms` (a hang detector, not a speed check). */
async function settlesWithin<T>(promise: Promise<T>, ms: number): Promise<T | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), ms);
  });
  try {
    return await Promise.race([promise, hung]);
  } finally {
    clearTimeout(timer);
  }
}

describe('file tools against hostile files', () => {
  let root: string;
  let work: string;
  let outside: string;

  beforeEach(async () => {
    root = await makeTemporaryFolder();
    work = join(root, 'work');
    outside = join(root, 'outside');
    await mkdir(work);
    await mkdir(outside);
    await writeFile(join(outside, 'secret.txt'), 'OUTSIDE SECRET\n');
  });

  afterEach(removeTemporaryFolders);

  describe('FIFOs and other special files', () => {
    it('refuses a FIFO in read, grep, edit, write and delete without blocking, and libuv still serves afterwards', async () => {
      execFileSync('mkfifo', [join(work, 'pipe')]);
      const { runtime } = strictRuntime();
      const ctx = createExecutionContext({ planId: 'plan-fifo', resources: [folderResource('work', work)] });
      // Four reads with a deadline each: with a blocking open, each would time out and hold one of libuv's four threads for good.
      const reads = await Promise.all(Array.from({ length: 4 }, () => runtime.execute('builtin.fs.read', { path: 'pipe' }, ctx, { timeoutMs: 5_000 })));
      expect(reads.map(codeOf)).toEqual(Array(4).fill('BUILTIN_NOT_REGULAR_FILE'));
      expect(reads[0].ok ? '' : reads[0].error.message).toMatch(/Tool "builtin.fs.read" in plan "plan-fifo" refused "pipe".*fifo/);
      const others = [
        await runtime.execute('builtin.fs.grep', { pattern: 'x', path: 'pipe' }, ctx, { timeoutMs: 5_000 }),
        await runtime.execute('builtin.fs.edit', { path: 'pipe', oldString: 'a', newString: 'b' }, ctx, { timeoutMs: 5_000 }),
        await runtime.execute('builtin.fs.write', { path: 'pipe', content: 'x' }, ctx, { timeoutMs: 5_000 }),
        await runtime.execute('builtin.fs.delete', { path: 'pipe' }, ctx, { timeoutMs: 5_000 }),
      ];
      expect(others.map(codeOf)).toEqual(Array(4).fill('BUILTIN_NOT_REGULAR_FILE'));
      await writeFile(join(work, 'plain.txt'), 'plain');
      expect(await settlesWithin(readFile(join(work, 'plain.txt'), 'utf8'), 10_000)).toBe('plain');
      expect(
        await settlesWithin(
          dns.lookup('localhost').then(() => 'answered'),
          10_000,
        ),
      ).toBe('answered');
      expect((await readdir(work)).sort()).toEqual(['pipe', 'plain.txt']);
      expect(ctx.changes).toHaveLength(0);
    });

    it('lists a FIFO as "other", skips it in a tree grep, and stops a recursive delete at it with the changes so far undoable', async () => {
      await mkdir(join(work, 'tree'));
      await writeFile(join(work, 'tree', 'a.txt'), 'needle\n');
      execFileSync('mkfifo', [join(work, 'tree', 'pipe')]);
      const { runtime } = strictRuntime();
      const ctx = createExecutionContext({ planId: 'plan-fifo-tree', resources: [folderResource('work', work)] });
      const list = await runtime.execute<any>('builtin.fs.list', { path: 'tree' }, ctx);
      expect(list.output.entries).toContainEqual({ name: 'pipe', type: 'other' });
      const grep = await runtime.execute<any>('builtin.fs.grep', { pattern: 'needle', path: 'tree' }, ctx, { timeoutMs: 5_000 });
      expect(grep.output).toMatchObject({ filesSearched: 1, matches: [{ path: join(work, 'tree', 'a.txt'), line: 1 }] });
      const removal = await runtime.execute('builtin.fs.delete', { path: 'tree', recursive: true }, ctx, { timeoutMs: 5_000 });
      expect(codeOf(removal)).toBe('BUILTIN_NOT_REGULAR_FILE');
      expect((await readdir(join(work, 'tree'))).length).toBeGreaterThanOrEqual(1);
    });
  });

  describe('check-then-use race', () => {
    it('never reads an outside secret nor writes outside while a process swaps a folder for a link to outside', async () => {
      await mkdir(join(work, 'box'));
      await writeFile(join(work, 'box', 'secret.txt'), 'inside\n');
      await writeFile(join(outside, 'outside-only.txt'), 'OUTSIDE SECRET\n');
      await symlink(outside, join(work, 'box.link'));
      const before = await snapshotTree(outside);
      const stopFile = join(root, 'stop');
      const swapper = spawn(process.execPath, [join(__dirname, '__fixtures__', 'swap-folder.js'), work, stopFile, '60000'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let printed = '';
      swapper.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      const exited = once(swapper, 'exit');
      const { runtime } = strictRuntime();
      const ctx: PlanContext = createExecutionContext({ planId: 'plan-race', resources: [folderResource('work', work)] });
      const outcomes = new Map<string, number>();
      const count = (label: string): void => void outcomes.set(label, (outcomes.get(label) ?? 0) + 1);
      const leaks: string[] = [];
      const deadline = Date.now() + 15_000;
      try {
        for (let attempt = 0; attempt < 400 && Date.now() < deadline; attempt++) {
          const [read, write, list, grep] = await Promise.all([
            runtime.execute<any>('builtin.fs.read', { path: 'box/secret.txt' }, ctx),
            runtime.execute<any>('builtin.fs.write', { path: `box/new-${attempt}.txt`, content: 'written\n', createDirectories: false }, ctx),
            runtime.execute<any>('builtin.fs.list', { path: 'box' }, ctx),
            runtime.execute<any>('builtin.fs.grep', { pattern: 'OUTSIDE', path: 'box' }, ctx),
          ]);
          if (read.ok && read.output.content !== 'inside\n') leaks.push(`read ${JSON.stringify(read.output.content)}`);
          if (list.ok && list.output.entries.some((entry: { name: string }) => entry.name === 'outside-only.txt')) leaks.push('list showed an outside name');
          if (grep.ok && grep.output.matches.length > 0) leaks.push(`grep matched ${JSON.stringify(grep.output.matches)}`);
          count(`read ${codeOf(read)}`);
          count(`write ${codeOf(write)}`);
        }
      } finally {
        await writeFile(stopFile, '');
        await exited;
      }
      expect(leaks).toEqual([]);
      expect(await snapshotTree(outside)).toEqual(before);
      const swaps = Number(printed.trim());
      expect(swaps).toBeGreaterThan(0);
      // The tools kept working between the swaps: some reads and writes got through, inside.
      expect(outcomes.get('read ok') ?? 0).toBeGreaterThan(0);
      expect(outcomes.get('write ok') ?? 0).toBeGreaterThan(0);
      const refusals = [...outcomes.keys()].filter((key) => !key.endsWith(' ok')).map((key) => key.split(' ')[1]);
      for (const code of refusals) {
        expect(['BUILTIN_PATH_OUTSIDE_RESOURCES', 'BUILTIN_PATH_CHANGED', 'BUILTIN_NOT_FOUND']).toContain(code);
      }
    }, 60_000);
  });

  describe('a read-only resource nested in a writable one', () => {
    it('survives a recursive delete of its parent: refused before anything is deleted', async () => {
      await mkdir(join(work, 'project', 'vendor', 'lib'), { recursive: true });
      await writeFile(join(work, 'project', 'own.txt'), 'own');
      await writeFile(join(work, 'project', 'vendor', 'lib', 'code.js'), 'code');
      const ctx = createExecutionContext({
        planId: 'plan-nested',
        resources: [folderResource('work', work, 'write'), folderResource('vendor', join(work, 'project', 'vendor'), 'read')],
      });
      const before = await snapshotTree(work);
      const { runtime } = strictRuntime();
      const result = await runtime.execute('builtin.fs.delete', { path: 'project', recursive: true }, ctx);
      expect(codeOf(result)).toBe('BUILTIN_RESOURCE_READ_ONLY');
      expect(result.ok ? '' : result.error.message).toMatch(/holds the root of bound resource "vendor".*read-only\. Nothing was deleted/);
      expect(await snapshotTree(work)).toEqual(before);
      expect(ctx.changes).toHaveLength(0);
      // What is not the nested resource can still be deleted.
      expect((await runtime.execute('builtin.fs.delete', { path: 'project/own.txt' }, ctx)).ok).toBe(true);
    });

    it('keeps the root of a nested writable resource too, and refuses deleting through a link into the read-only one', async () => {
      await mkdir(join(work, 'a', 'inner'), { recursive: true });
      await mkdir(join(work, 'ro'));
      await writeFile(join(work, 'ro', 'kept.txt'), 'kept');
      await symlink(join(work, 'ro'), join(work, 'a', 'to-ro'));
      const ctx = createExecutionContext({
        planId: 'plan-nested-writable',
        resources: [
          folderResource('work', work, 'write'),
          folderResource('inner', join(work, 'a', 'inner'), 'write'),
          folderResource('ro', join(work, 'ro'), 'read'),
        ],
      });
      const { runtime } = strictRuntime();
      expect(codeOf(await runtime.execute('builtin.fs.delete', { path: 'a', recursive: true }, ctx))).toBe('BUILTIN_INVALID_INPUT');
      expect(codeOf(await runtime.execute('builtin.fs.delete', { path: 'a/to-ro/kept.txt' }, ctx))).toBe('BUILTIN_RESOURCE_READ_ONLY');
      expect(await readFile(join(work, 'ro', 'kept.txt'), 'utf8')).toBe('kept');
    });
  });

  describe('hard links', () => {
    it('refuses write and edit through a file with more than one link by default, and reads it', async () => {
      await link(join(outside, 'secret.txt'), join(work, 'shared.txt'));
      const ctx = createExecutionContext({ planId: 'plan-links', resources: [folderResource('work', work)] });
      const { runtime } = strictRuntime();
      const write = await runtime.execute('builtin.fs.write', { path: 'shared.txt', content: 'changed' }, ctx);
      const edit = await runtime.execute('builtin.fs.edit', { path: 'shared.txt', oldString: 'OUTSIDE', newString: 'changed' }, ctx);
      expect([codeOf(write), codeOf(edit)]).toEqual(['BUILTIN_HARD_LINKED_FILE', 'BUILTIN_HARD_LINKED_FILE']);
      expect(write.ok ? '' : write.error.message).toMatch(/2 hard links.*files\.allowHardLinkedWrites/);
      expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET\n');
      // Reads are allowed: the name is inside the resource, and whoever bound it put the link there.
      const read = await runtime.execute<any>('builtin.fs.read', { path: 'shared.txt' }, ctx);
      expect(read.output.content).toBe('OUTSIDE SECRET\n');
    });

    it('with allowHardLinkedWrites, gives the name a new file and leaves the outside name as it was', async () => {
      await link(join(outside, 'secret.txt'), join(work, 'shared.txt'));
      const ctx = createExecutionContext({ planId: 'plan-links-allowed', resources: [folderResource('work', work)] });
      const { runtime } = strictRuntime({ files: { allowHardLinkedWrites: true } });
      expect((await runtime.execute('builtin.fs.edit', { path: 'shared.txt', oldString: 'OUTSIDE', newString: 'inside' }, ctx)).ok).toBe(true);
      expect(await readFile(join(work, 'shared.txt'), 'utf8')).toBe('inside SECRET\n');
      expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET\n');
    });
  });
});
