import { mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createExecutionContext } from '@ca/tool-context';
import { BuiltinToolError } from './builtin-tool-error';
import { createCheckpoint, rollback } from './checkpoint';
import { guardPath } from './resource-paths';
import { codeOf, folderResource, makeTemporaryFolder, removeTemporaryFolders, strictRuntime } from './workspace.test-helper';

describe('confinement of file tools to bound resources', () => {
  let root: string;
  let work: string;
  let outside: string;
  let docs: string;

  beforeEach(async () => {
    root = await makeTemporaryFolder();
    work = join(root, 'work');
    outside = join(root, 'outside');
    docs = join(root, 'docs');
    await mkdir(work);
    await mkdir(outside);
    await mkdir(docs);
    await writeFile(join(outside, 'secret.txt'), 'secret');
    await writeFile(join(docs, 'guide.md'), '# guide\n');
    await writeFile(join(work, 'note.txt'), 'note\n');
  });

  afterEach(removeTemporaryFolders);

  const plan = () =>
    createExecutionContext({
      planId: 'plan-guard',
      resources: [folderResource('work', work, 'write'), folderResource('docs', docs, 'read')],
    });

  it('resolves a relative path against the first file resource and reads it', async () => {
    const { runtime } = strictRuntime();
    const result = await runtime.execute('builtin.fs.read', { path: 'note.txt' }, plan());
    expect(result).toMatchObject({ ok: true, output: { path: join(work, 'note.txt'), resource: 'work', content: 'note\n' } });
  });

  it('resolves a relative path against the resource named by id, and accepts absolute paths inside any resource', async () => {
    const { runtime } = strictRuntime();
    const ctx = plan();
    const byId = await runtime.execute('builtin.fs.read', { path: 'guide.md', resource: 'docs' }, ctx);
    const absolute = await runtime.execute('builtin.fs.read', { path: join(docs, 'guide.md') }, ctx);
    expect(byId).toMatchObject({ ok: true, output: { resource: 'docs', content: '# guide\n' } });
    expect(absolute).toMatchObject({ ok: true, output: { resource: 'docs' } });
  });

  it.each([
    ['a .. path that climbs out', '../outside/secret.txt'],
    ['an absolute path outside', '/etc/hostname'],
    ['.. hidden in the middle', 'sub/../../outside/secret.txt'],
  ])('refuses %s with a failed result naming the tool and plan', async (_label, path) => {
    const { runtime } = strictRuntime();
    const result = await runtime.execute('builtin.fs.read', { path }, plan());
    expect(codeOf(result)).toBe('BUILTIN_PATH_OUTSIDE_RESOURCES');
    expect(result.ok ? '' : result.error.message).toMatch(/Tool "builtin.fs.read" in plan "plan-guard" refused the path/);
    expect(BuiltinToolError.isInstance(result.ok ? undefined : result.error)).toBe(true);
  });

  it('refuses a relative path that is outside the resource named by id even when another resource holds it', async () => {
    const { runtime } = strictRuntime();
    const result = await runtime.execute('builtin.fs.read', { path: join(work, 'note.txt'), resource: 'docs' }, plan());
    expect(codeOf(result)).toBe('BUILTIN_PATH_OUTSIDE_RESOURCES');
  });

  it('refuses reading and writing through a symbolic link to a folder outside', async () => {
    await symlink(outside, join(work, 'escape'));
    const { runtime } = strictRuntime();
    const ctx = plan();
    const read = await runtime.execute('builtin.fs.read', { path: 'escape/secret.txt' }, ctx);
    const write = await runtime.execute('builtin.fs.write', { path: 'escape/new.txt', content: 'x' }, ctx);
    expect(codeOf(read)).toBe('BUILTIN_PATH_OUTSIDE_RESOURCES');
    expect(read.ok ? '' : read.error.message).toMatch(/through a symbolic link/);
    expect(codeOf(write)).toBe('BUILTIN_PATH_OUTSIDE_RESOURCES');
    await expect(stat(join(outside, 'new.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a symbolic link to a file outside, for read, edit and write', async () => {
    await symlink(join(outside, 'secret.txt'), join(work, 'link.txt'));
    const { runtime } = strictRuntime();
    const ctx = plan();
    expect(codeOf(await runtime.execute('builtin.fs.read', { path: 'link.txt' }, ctx))).toBe('BUILTIN_PATH_OUTSIDE_RESOURCES');
    expect(codeOf(await runtime.execute('builtin.fs.edit', { path: 'link.txt', oldString: 'secret', newString: 'x' }, ctx))).toBe(
      'BUILTIN_PATH_OUTSIDE_RESOURCES',
    );
    expect(codeOf(await runtime.execute('builtin.fs.write', { path: 'link.txt', content: 'x' }, ctx))).toBe('BUILTIN_PATH_OUTSIDE_RESOURCES');
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
  });

  it('refuses creating a file through a dangling link that points outside (nearest existing parent resolved)', async () => {
    await symlink(join(outside, 'missing', 'deeper'), join(work, 'dangling'));
    const { runtime } = strictRuntime();
    const ctx = plan();
    const direct = await runtime.execute('builtin.fs.write', { path: 'dangling', content: 'x' }, ctx);
    const below = await runtime.execute('builtin.fs.write', { path: 'dangling/new/file.txt', content: 'x' }, ctx);
    expect(codeOf(direct)).toBe('BUILTIN_PATH_OUTSIDE_RESOURCES');
    expect(codeOf(below)).toBe('BUILTIN_PATH_OUTSIDE_RESOURCES');
    await expect(stat(join(outside, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('allows a link that stays inside, and deletes the link itself rather than its target', async () => {
    await symlink(join(work, 'note.txt'), join(work, 'alias.txt'));
    const { runtime } = strictRuntime();
    const ctx = plan();
    const read = await runtime.execute('builtin.fs.read', { path: 'alias.txt' }, ctx);
    expect(read).toMatchObject({ ok: true, output: { path: join(work, 'note.txt'), content: 'note\n' } });
    const removed = await runtime.execute('builtin.fs.delete', { path: 'alias.txt' }, ctx);
    expect(removed).toMatchObject({ ok: true, output: { path: join(work, 'alias.txt'), deleted: 1 } });
    expect(await readFile(join(work, 'note.txt'), 'utf8')).toBe('note\n');
  });

  it('lets a link inside point outside only for delete, which removes the link and never the outside file', async () => {
    await symlink(join(outside, 'secret.txt'), join(work, 'out-link'));
    const { runtime } = strictRuntime();
    const result = await runtime.execute('builtin.fs.delete', { path: 'out-link' }, plan());
    expect(result.ok).toBe(true);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
  });

  it('refuses writes, edits and deletes in a read-only resource, and in a read-only resource nested in a writable one', async () => {
    const vendor = join(work, 'vendor');
    await mkdir(vendor);
    await writeFile(join(vendor, 'lib.js'), 'x');
    const ctx = createExecutionContext({
      planId: 'plan-nested',
      resources: [folderResource('work', work, 'write'), folderResource('docs', docs, 'read'), folderResource('vendor', vendor, 'read')],
    });
    // Without the sandbox a command's cwd must be writable; under it the kernel keeps read-only resources read-only.
    const { runtime } = strictRuntime({ command: { sandbox: 'off' } });
    const results = [
      await runtime.execute('builtin.fs.write', { path: 'guide.md', resource: 'docs', content: 'changed' }, ctx),
      await runtime.execute('builtin.fs.edit', { path: join(docs, 'guide.md'), oldString: 'guide', newString: 'x' }, ctx),
      await runtime.execute('builtin.fs.delete', { path: join(docs, 'guide.md') }, ctx),
      await runtime.execute('builtin.fs.write', { path: 'vendor/lib.js', content: 'changed' }, ctx),
      await runtime.execute('builtin.command.run', { command: ['true'], cwd: docs }, ctx),
    ];
    expect(results.map(codeOf)).toEqual(Array(5).fill('BUILTIN_RESOURCE_READ_ONLY'));
    expect(results[0].ok ? '' : results[0].error.message).toMatch(/resource "docs", which the plan bound read-only\. Bind it with access: 'write'/);
    expect(await readFile(join(docs, 'guide.md'), 'utf8')).toBe('# guide\n');
    expect(await readFile(join(vendor, 'lib.js'), 'utf8')).toBe('x');
    expect(ctx.changes).toHaveLength(0);
  });

  it('fails clearly when the plan binds no file resource, or names an unknown one', async () => {
    const { runtime } = strictRuntime();
    const bare = createExecutionContext({ resources: [{ id: 'api', kind: 'http', uri: 'https://example.com/', access: 'read' }] });
    const none = await runtime.execute('builtin.fs.list', {}, bare);
    const unknown = await runtime.execute('builtin.fs.list', { resource: 'nope' }, plan());
    expect(codeOf(none)).toBe('BUILTIN_NO_RESOURCE');
    expect(none.ok ? '' : none.error.message).toMatch(/resourceFromPath/);
    expect(codeOf(unknown)).toBe('BUILTIN_NO_RESOURCE');
    expect(unknown.ok ? '' : unknown.error.message).toMatch(/"work", "docs"/);
  });

  it('accepts a single file bound as a resource, and nothing beside it', async () => {
    const ctx = createExecutionContext({ resources: [folderResource('one', join(outside, 'secret.txt'), 'read')] });
    await expect(guardPath(ctx, { toolName: 't', path: join(outside, 'secret.txt'), access: 'read' })).resolves.toMatchObject({
      path: join(outside, 'secret.txt'),
    });
    await expect(guardPath(ctx, { toolName: 't', path: join(outside, 'other.txt'), access: 'read' })).rejects.toMatchObject({
      code: 'BUILTIN_PATH_OUTSIDE_RESOURCES',
    });
  });

  it('writes, edits and rolls back a single file bound as a writable resource, through its own folder only', async () => {
    const single = join(outside, 'secret.txt');
    const ctx = createExecutionContext({ planId: 'plan-single', resources: [folderResource('one', single, 'write')] });
    const { runtime } = strictRuntime();
    const mark = createCheckpoint(ctx);
    expect((await runtime.execute('builtin.fs.write', { path: single, content: 'replaced' }, ctx)).ok).toBe(true);
    expect((await runtime.execute('builtin.fs.edit', { path: single, oldString: 'replaced', newString: 'edited' }, ctx)).ok).toBe(true);
    expect(await readFile(single, 'utf8')).toBe('edited');
    expect(codeOf(await runtime.execute('builtin.fs.write', { path: join(outside, 'beside.txt'), content: 'x' }, ctx))).toBe('BUILTIN_PATH_OUTSIDE_RESOURCES');
    await rollback(ctx, mark);
    expect(await readFile(single, 'utf8')).toBe('secret');
    expect((await readdir(outside)).sort()).toEqual(['secret.txt']);
  });
});
