import { execFileSync } from 'node:child_process';
import { closeSync } from 'node:fs';
import { chmod, link, lstat, mkdir, mkdtemp, readFile, readdir, realpath, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CaError } from '@ca/domain';
import { resourceFromPath } from './bound-resource';
import {
  confinePath,
  confinementRootsOf,
  isPathInside,
  openConfinedDirectory,
  openConfinedEntry,
  openConfinedFile,
  openConfinedParent,
  resolveConfinementRoot,
  resolveRealPath,
  type ConfinementRoot,
} from './path-confinement';
import { PathConfinementError } from './path-confinement-error';

const details = { toolName: 'test.tool', planId: 'plan-confine' };

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (!PathConfinementError.isInstance(error)) throw error;
    return error.code;
  }
}

describe('path confinement', () => {
  let temp: string;
  let work: string;
  let outside: string;
  let root: ConfinementRoot;

  beforeEach(async () => {
    temp = await realpath(await mkdtemp(join(tmpdir(), 'ca-confine-')));
    work = join(temp, 'work');
    outside = join(temp, 'outside');
    await mkdir(join(work, 'sub'), { recursive: true });
    await mkdir(outside);
    await writeFile(join(work, 'sub', 'inside.txt'), 'inside');
    await writeFile(join(outside, 'secret.txt'), 'SECRET');
    root = await resolveConfinementRoot({ name: 'work', path: work, writable: true });
  });

  afterEach(async () => {
    await rm(temp, { recursive: true, force: true });
  });

  describe('isPathInside', () => {
    it('accepts the root and paths below it, not siblings that share a prefix', () => {
      expect(isPathInside('/a/b', '/a/b')).toBe(true);
      expect(isPathInside('/a/b/c', '/a/b')).toBe(true);
      expect(isPathInside('/a/bc', '/a/b')).toBe(false);
      expect(isPathInside('/a', '/a/b')).toBe(false);
      expect(isPathInside('/x/y', '/')).toBe(true);
    });
  });

  describe('confinePath', () => {
    it('resolves relative and absolute paths inside the root', async () => {
      const relative = await confinePath({ roots: [root], path: 'sub/inside.txt', access: 'read', ...details });
      const absolute = await confinePath({ roots: [root], path: join(work, 'sub', '..', 'sub', 'inside.txt'), access: 'read' });
      expect(relative.path).toBe(join(work, 'sub', 'inside.txt'));
      expect(absolute.path).toBe(relative.path);
      expect(relative.root).toBe(root);
    });

    it('refuses .., absolute paths elsewhere, and links (also dangling, also in a parent) that lead out', async () => {
      await symlink(outside, join(work, 'out-folder'));
      await symlink(join(outside, 'not-yet.txt'), join(work, 'dangling'));
      const attempts = ['../outside/secret.txt', join(outside, 'secret.txt'), 'out-folder/secret.txt', 'out-folder/new.txt', 'dangling'];
      for (const path of attempts) {
        expect(await codeOf(confinePath({ roots: [root], path, access: 'read' }))).toBe('PATH_OUTSIDE_ROOT');
      }
    });

    it('refuses any absolute path, and .. before touching the disk, when absolute paths are not allowed', async () => {
      for (const path of [join(work, 'sub'), 'C:\\work', '\\\\server\\share', '../outside/secret.txt', 'sub/../../work/../outside']) {
        expect(await codeOf(confinePath({ roots: [root], path, access: 'read', allowAbsolute: false }))).toBe('PATH_OUTSIDE_ROOT');
      }
    });

    it('refuses paths that are not strings, empty, or hold a NUL byte', async () => {
      for (const path of [42, '', 'a\0b']) {
        expect(await codeOf(confinePath({ roots: [root], path, access: 'read' }))).toBe('PATH_INVALID');
      }
    });

    it('lets the most specific root decide access, so a read-only root nested in a writable one stays read-only', async () => {
      const nested = await resolveConfinementRoot({ name: 'nested', path: join(work, 'sub'), writable: false });
      const roots = [root, nested];
      const write = await confinePath({ roots, path: 'other.txt', access: 'write' });
      expect(write.excluded).toEqual([nested]);
      expect(await codeOf(confinePath({ roots, path: 'sub/inside.txt', access: 'write' }))).toBe('PATH_READ_ONLY');
      expect((await confinePath({ roots, path: 'sub/inside.txt', access: 'read' })).root).toBe(nested);
    });

    it('keeps a final link as it is with followFinalLink: false', async () => {
      await symlink(outside, join(work, 'link'));
      const confined = await confinePath({ roots: [root], path: 'link', access: 'write', followFinalLink: false });
      expect(confined.path).toBe(join(work, 'link'));
    });

    it('makes roots of file resources only, named and with their access', async () => {
      const roots = await confinementRootsOf([
        resourceFromPath({ id: 'work', path: work, access: 'read' }),
        { id: 'api', kind: 'http', uri: 'https://example.com/', access: 'write' },
      ]);
      expect(roots).toHaveLength(1);
      expect(roots[0]).toMatchObject({ name: 'resource "work"', realPath: work, writable: false });
    });
  });

  describe('openConfinedFile', () => {
    it('opens a regular file and reports where it really is', async () => {
      const file = await openConfinedFile(await confinePath({ roots: [root], path: 'sub/inside.txt', access: 'read' }));
      try {
        expect(file.path).toBe(join(work, 'sub', 'inside.txt'));
        expect(file.stats.isFile()).toBe(true);
        expect((await file.handle.readFile()).toString()).toBe('inside');
      } finally {
        await file.close();
      }
    });

    it('refuses a FIFO without blocking, and folders and missing files with their own codes', async () => {
      execFileSync('mkfifo', [join(work, 'pipe')]);
      const fifo = await openConfinedFile(await confinePath({ roots: [root], path: 'pipe', access: 'read', ...details })).catch((error: unknown) => error);
      expect(PathConfinementError.isInstance(fifo)).toBe(true);
      expect(fifo).toMatchObject({ code: 'PATH_NOT_REGULAR_FILE', fileType: 'fifo', toolName: 'test.tool', planId: 'plan-confine' });
      expect((fifo as Error).message).toMatch(/Tool "test\.tool" in plan "plan-confine" refused "pipe".*fifo/);
      expect(await codeOf(openConfinedFile(await confinePath({ roots: [root], path: 'sub', access: 'read' })))).toBe('PATH_IS_DIRECTORY');
      expect(await codeOf(openConfinedFile(await confinePath({ roots: [root], path: 'missing', access: 'read' })))).toBe('PATH_NOT_FOUND');
    });

    it('checks what was opened: a folder swapped for a link after the check is refused', async () => {
      const confined = await confinePath({ roots: [root], path: 'sub/inside.txt', access: 'read' });
      // The attacker's move between check and open: the folder becomes a link to an outside folder holding the same name.
      await rename(join(work, 'sub'), join(work, 'sub.real'));
      await writeFile(join(outside, 'inside.txt'), 'OUTSIDE');
      await symlink(outside, join(work, 'sub'));
      const error = await openConfinedFile(confined).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'PATH_OUTSIDE_ROOT', path: join(outside, 'inside.txt') });
      expect((error as Error).message).toMatch(/what was opened/);
    });

    it('refuses a final link that appeared after the check, and follows one inside the root only when asked', async () => {
      const confined = await confinePath({ roots: [root], path: 'sub/inside.txt', access: 'read' });
      await rm(join(work, 'sub', 'inside.txt'));
      await symlink(join(outside, 'secret.txt'), join(work, 'sub', 'inside.txt'));
      expect(await codeOf(openConfinedFile(confined))).toBe('PATH_CHANGED');
      expect(await codeOf(openConfinedFile(confined, { followFinalLink: true }))).toBe('PATH_OUTSIDE_ROOT');
      await writeFile(join(work, 'target.txt'), 'target');
      await symlink(join(work, 'target.txt'), join(work, 'alias.txt'));
      const file = await openConfinedFile({ root, path: join(work, 'alias.txt') }, { followFinalLink: true });
      expect(file.path).toBe(join(work, 'target.txt'));
      await file.close();
    });
  });

  describe('openConfinedEntry', () => {
    const entry = async (folder: string, name: string): Promise<string> => {
      const opened = await openConfinedEntry(folder, name, details);
      closeSync(opened.fd);
      expect(opened.stats.isFile()).toBe(true);
      return opened.path;
    };

    it('opens an entry of a folder, follows a link only to a file inside it, and refuses FIFOs and bad names', async () => {
      expect(await entry(join(work, 'sub'), 'inside.txt')).toBe(join(work, 'sub', 'inside.txt'));
      await symlink('inside.txt', join(work, 'sub', 'alias.txt'));
      await symlink(join(outside, 'secret.txt'), join(work, 'sub', 'out.txt'));
      execFileSync('mkfifo', [join(work, 'sub', 'pipe')]);
      expect(await entry(join(work, 'sub'), 'alias.txt')).toBe(join(work, 'sub', 'inside.txt'));
      expect(await codeOf(entry(join(work, 'sub'), 'out.txt'))).toBe('PATH_OUTSIDE_ROOT');
      expect(await codeOf(entry(join(work, 'sub'), 'pipe'))).toBe('PATH_NOT_REGULAR_FILE');
      expect(await codeOf(entry(work, '../outside/secret.txt'))).toBe('PATH_INVALID');
      expect(await codeOf(entry(work, 'sub'))).toBe('PATH_IS_DIRECTORY');
      expect(await codeOf(entry(work, 'missing'))).toBe('PATH_NOT_FOUND');
    });
  });

  describe('confined folders', () => {
    it('lists, opens entries without following links, and refuses links and FIFOs as files', async () => {
      await symlink(join(outside, 'secret.txt'), join(work, 'sub', 'link.txt'));
      await symlink(outside, join(work, 'sub', 'link-folder'));
      execFileSync('mkfifo', [join(work, 'sub', 'pipe')]);
      const folder = await openConfinedDirectory(await confinePath({ roots: [root], path: 'sub', access: 'read' }));
      try {
        const names: string[] = [];
        for await (const entry of await folder.list()) names.push(entry.name);
        expect(names.sort()).toEqual(['inside.txt', 'link-folder', 'link.txt', 'pipe']);
        expect(await codeOf(folder.openFile('link.txt'))).toBe('PATH_CHANGED');
        expect(await codeOf(folder.openFile('pipe'))).toBe('PATH_NOT_REGULAR_FILE');
        expect(await codeOf(folder.openDirectory('link-folder'))).toBe('PATH_CHANGED');
        expect(await codeOf(folder.openFile('../outside/secret.txt'))).toBe('PATH_INVALID');
        expect(await folder.readLink('link.txt')).toBe(join(outside, 'secret.txt'));
      } finally {
        await folder.close();
      }
    });

    it('writes through a temporary file renamed into place, keeping the mode, leaving no temporary behind', async () => {
      const target = join(work, 'sub', 'inside.txt');
      await chmod(target, 0o640);
      const { directory, name } = await openConfinedParent(await confinePath({ roots: [root], path: 'sub/inside.txt', access: 'write' }));
      try {
        const result = await directory.writeFile(name, Buffer.from('new content'));
        expect(result).toEqual({ created: false, path: target });
        const fresh = await directory.writeFile('fresh.txt', async (handle) => void (await handle.write('streamed')));
        expect(fresh.created).toBe(true);
        expect(await codeOf(directory.writeFile('fresh.txt', Buffer.from('x'), { exclusive: true }))).toBe('PATH_ALREADY_EXISTS');
      } finally {
        await directory.close();
      }
      expect(await readFile(target, 'utf8')).toBe('new content');
      expect((await stat(target)).mode & 0o777).toBe(0o640);
      expect(await readFile(join(work, 'sub', 'fresh.txt'), 'utf8')).toBe('streamed');
      expect((await readdir(join(work, 'sub'))).sort()).toEqual(['fresh.txt', 'inside.txt']);
    });

    it('writes into the folder that was verified even when its path is swapped for a link to an outside folder', async () => {
      const { directory, name } = await openConfinedParent(await confinePath({ roots: [root], path: 'sub/new.txt', access: 'write' }));
      try {
        await rename(join(work, 'sub'), join(work, 'moved'));
        await symlink(outside, join(work, 'sub'));
        await directory.writeFile(name, Buffer.from('written'));
        await directory.makeDirectory('made');
      } finally {
        await directory.close();
      }
      expect(await readdir(outside)).toEqual(['secret.txt']);
      expect(await readFile(join(work, 'moved', 'new.txt'), 'utf8')).toBe('written');
      expect((await lstat(join(work, 'moved', 'made'))).isDirectory()).toBe(true);
    });

    it('refuses to write through a hard-linked file unless allowed, and then leaves the other name as it was', async () => {
      await link(join(outside, 'secret.txt'), join(work, 'linked.txt'));
      const confined = await confinePath({ roots: [root], path: 'linked.txt', access: 'write', ...details });
      const { directory, name } = await openConfinedParent(confined);
      try {
        const refused = await directory.writeFile(name, Buffer.from('changed')).catch((error: unknown) => error);
        expect(refused).toMatchObject({ code: 'PATH_HARD_LINKED', linkCount: 2 });
        await directory.writeFile(name, Buffer.from('changed'), { allowHardLinks: true });
      } finally {
        await directory.close();
      }
      expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('SECRET');
      expect(await readFile(join(work, 'linked.txt'), 'utf8')).toBe('changed');
    });

    it('refuses to replace a FIFO or a folder by a write, without opening it', async () => {
      execFileSync('mkfifo', [join(work, 'pipe')]);
      const { directory } = await openConfinedParent(await confinePath({ roots: [root], path: 'pipe', access: 'write' }));
      try {
        expect(await codeOf(directory.writeFile('pipe', Buffer.from('x')))).toBe('PATH_NOT_REGULAR_FILE');
        expect(await codeOf(directory.writeFile('sub', Buffer.from('x')))).toBe('PATH_IS_DIRECTORY');
      } finally {
        await directory.close();
      }
    });

    it('refuses to open or remove a nested read-only root through a writable folder', async () => {
      const nested = await resolveConfinementRoot({ name: 'nested', path: join(work, 'sub'), writable: false });
      const folder = await openConfinedDirectory(await confinePath({ roots: [root, nested], path: '.', access: 'write' }));
      try {
        expect(await codeOf(folder.openDirectory('sub'))).toBe('PATH_READ_ONLY');
      } finally {
        await folder.close();
      }
    });

    it('gives the parent of a single-file root for that one name only, and never the parent of a folder root', async () => {
      const fileRoot = await resolveConfinementRoot({ name: 'one file', path: join(work, 'sub', 'inside.txt'), writable: true });
      const { directory, name } = await openConfinedParent(await confinePath({ roots: [fileRoot], path: fileRoot.path, access: 'write' }));
      try {
        expect(name).toBe('inside.txt');
        expect(await codeOf(directory.writeFile('other.txt', Buffer.from('x')))).toBe('PATH_OUTSIDE_ROOT');
        await directory.writeFile(name, Buffer.from('replaced'));
      } finally {
        await directory.close();
      }
      expect(await readFile(fileRoot.path, 'utf8')).toBe('replaced');
      expect(await codeOf(openConfinedParent(await confinePath({ roots: [root], path: '.', access: 'write' })))).toBe('PATH_OUTSIDE_ROOT');
    });
  });

  it('errors extend CaError, name the tool and plan, and serialise their code', async () => {
    const error = await confinePath({ roots: [root], path: '../outside', access: 'read', ...details }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CaError);
    expect(CaError.isInstance(error)).toBe(true);
    expect((error as PathConfinementError).toJSON()).toMatchObject({
      name: 'PathConfinementError',
      code: 'PATH_OUTSIDE_ROOT',
      toolName: 'test.tool',
      planId: 'plan-confine',
    });
    expect((error as Error).message).toContain('Tool "test.tool" in plan "plan-confine" refused "../outside"');
  });
});

describe('resolveRealPath', () => {
  let temp: string;

  beforeEach(async () => {
    temp = await realpath(await mkdtemp(join(tmpdir(), 'ca-confine-real-')));
  });

  afterEach(async () => {
    await rm(temp, { recursive: true, force: true });
  });

  it('resolves the nearest existing parent of a missing path and follows links on the way, and fails on a loop', async () => {
    await mkdir(join(temp, 'real'));
    await symlink(join(temp, 'real'), join(temp, 'link'));
    expect(await resolveRealPath(join(temp, 'link', 'a', 'b.txt'))).toBe(join(temp, 'real', 'a', 'b.txt'));
    expect(await resolveRealPath(join(temp, 'link'), { followFinalLink: false })).toBe(join(temp, 'link'));
    await symlink(join(temp, 'loop'), join(temp, 'loop'));
    await expect(resolveRealPath(join(temp, 'loop', 'x'))).rejects.toThrow();
  });
});
