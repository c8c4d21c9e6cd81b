import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createExecutionContext, type PlanContext } from '@ca/tool-context';
import type { ToolRuntime } from '@ca/tool-lifecycle';
import { codeOf, folderResource, makeTemporaryFolder, removeTemporaryFolders, strictRuntime } from './workspace.test-helper';

describe('file tools', () => {
  let work: string;
  let runtime: ToolRuntime;
  let ctx: PlanContext;
  const run = (name: string, input: unknown) => runtime.execute<any>(`builtin.fs.${name}`, input, ctx);

  beforeEach(async () => {
    work = await makeTemporaryFolder();
    ({ runtime } = strictRuntime({
      files: { readMaxLines: 5, readMaxBytes: 64, listMaxEntries: 3, globMaxResults: 3, grepMaxMatches: 4, grepMaxLineLength: 11 },
    }));
    ctx = createExecutionContext({ planId: 'plan-files', resources: [folderResource('work', work)] });
  });

  afterEach(removeTemporaryFolders);

  describe('builtin.fs.read', () => {
    beforeEach(async () => {
      await writeFile(join(work, 'lines.txt'), Array.from({ length: 12 }, (_, index) => `line ${index + 1}\n`).join(''));
    });

    it('returns the first lines up to the line limit, with the offset to continue from', async () => {
      const result = await run('read', { path: 'lines.txt' });
      expect(result.output).toMatchObject({
        unit: 'lines',
        offset: 0,
        count: 5,
        nextOffset: 5,
        truncated: false,
        content: 'line 1\nline 2\nline 3\nline 4\nline 5\n',
      });
    });

    it('pages with offset/limit to the end, where nextOffset is absent', async () => {
      const middle = await run('read', { path: 'lines.txt', offset: 9, limit: 2 });
      const end = await run('read', { path: 'lines.txt', offset: 10 });
      expect(middle.output).toMatchObject({ content: 'line 10\nline 11\n', count: 2, nextOffset: 11 });
      expect(end.output).toMatchObject({ content: 'line 11\nline 12\n', count: 2, truncated: false });
      expect(end.output.nextOffset).toBeUndefined();
    });

    it('stops at the byte cap between lines and says so', async () => {
      await writeFile(join(work, 'wide.txt'), `${'a'.repeat(40)}\n${'b'.repeat(40)}\n`);
      const result = await run('read', { path: 'wide.txt' });
      expect(result.output).toMatchObject({ content: `${'a'.repeat(40)}\n`, count: 1, nextOffset: 1, truncated: true });
    });

    it('reads bytes at an offset, as base64 for binary data', async () => {
      const binary = Buffer.from([0, 1, 2, 250, 251, 252, 253]);
      await writeFile(join(work, 'data.bin'), binary);
      const result = await run('read', { path: 'data.bin', unit: 'bytes', offset: 2, limit: 3, encoding: 'base64' });
      expect(result.output).toMatchObject({ unit: 'bytes', encoding: 'base64', count: 3, nextOffset: 5, totalBytes: 7 });
      expect(Buffer.from(result.output.content, 'base64')).toEqual(binary.subarray(2, 5));
    });

    it('refuses a folder, a missing file and base64 lines with coded failures', async () => {
      await mkdir(join(work, 'folder'));
      expect(codeOf(await run('read', { path: 'folder' }))).toBe('BUILTIN_WRONG_TYPE');
      expect(codeOf(await run('read', { path: 'missing.txt' }))).toBe('BUILTIN_NOT_FOUND');
      expect(codeOf(await run('read', { path: 'lines.txt', encoding: 'base64' }))).toBe('BUILTIN_INVALID_INPUT');
    });

    it('rejects input that does not match the schema before the tool runs', async () => {
      const result = await run('read', { path: 'lines.txt', offset: -1 });
      expect(codeOf(result)).toBe('TOOL_SCHEMA_VALIDATION_FAILED');
    });
  });

  describe('builtin.fs.write and builtin.fs.edit', () => {
    it('creates a file with its missing folders, recording a change for each, and overwrites on a second call', async () => {
      const created = await run('write', { path: 'a/b/c.txt', content: 'hello' });
      expect(created.output).toEqual({
        path: join(work, 'a/b/c.txt'),
        resource: 'work',
        created: true,
        bytesWritten: 5,
        createdDirectories: [join(work, 'a'), join(work, 'a/b')],
      });
      expect(ctx.changes.map((change) => [change.kind, change.target, change.toolName])).toEqual([
        ['create', join(work, 'a'), 'builtin.fs.write'],
        ['create', join(work, 'a/b'), 'builtin.fs.write'],
        ['create', join(work, 'a/b/c.txt'), 'builtin.fs.write'],
      ]);
      const replaced = await run('write', { path: 'a/b/c.txt', content: 'bye' });
      expect(replaced.output).toMatchObject({ created: false, bytesWritten: 3 });
      expect(ctx.changes[3]).toMatchObject({
        kind: 'modify',
        resourceId: 'work',
        undo: { before: { type: 'file', contentBase64: Buffer.from('hello').toString('base64') } },
      });
      expect(await readFile(join(work, 'a/b/c.txt'), 'utf8')).toBe('bye');
      expect(JSON.parse(JSON.stringify(ctx.changes))).toEqual([...ctx.changes]);
    });

    it('writes base64 content byte for byte, and honours overwrite: false and createDirectories: false', async () => {
      const bytes = Buffer.from([0, 255, 1, 254]);
      await run('write', { path: 'bin', content: bytes.toString('base64'), encoding: 'base64' });
      expect(await readFile(join(work, 'bin'))).toEqual(bytes);
      expect(codeOf(await run('write', { path: 'bin', content: 'x', overwrite: false }))).toBe('BUILTIN_ALREADY_EXISTS');
      expect(codeOf(await run('write', { path: 'new/x.txt', content: 'x', createDirectories: false }))).toBe('BUILTIN_NOT_FOUND');
      await expect(stat(join(work, 'new'))).rejects.toMatchObject({ code: 'ENOENT' });
      expect(codeOf(await run('write', { path: '.', content: 'x' }))).toBe('BUILTIN_WRONG_TYPE');
      await mkdir(join(work, 'folder'));
      expect(codeOf(await run('write', { path: 'folder', content: 'x' }))).toBe('BUILTIN_WRONG_TYPE');
    });

    it('replaces exactly one occurrence, refuses none or several, and replaces all on request', async () => {
      await writeFile(join(work, 'code.ts'), 'const a = 1;\nconst b = 1;\n');
      expect(codeOf(await run('edit', { path: 'code.ts', oldString: 'const c', newString: 'x' }))).toBe('BUILTIN_EDIT_NO_MATCH');
      const ambiguous = await run('edit', { path: 'code.ts', oldString: '= 1', newString: '= 2' });
      expect(codeOf(ambiguous)).toBe('BUILTIN_EDIT_AMBIGUOUS');
      expect(ambiguous.ok ? '' : ambiguous.error.message).toMatch(/found 2 occurrences .* replaceAll: true/);
      const single = await run('edit', { path: 'code.ts', oldString: 'const b = 1', newString: 'const b = 2' });
      expect(single.output).toMatchObject({ replacements: 1 });
      const all = await run('edit', { path: 'code.ts', oldString: 'const', newString: 'let', replaceAll: true });
      expect(all.output).toMatchObject({ replacements: 2 });
      expect(await readFile(join(work, 'code.ts'), 'utf8')).toBe('let a = 1;\nlet b = 2;\n');
      expect(ctx.changes.map((change) => change.kind)).toEqual(['modify', 'modify']);
    });

    it('refuses to edit a file that is not UTF-8 or larger than editMaxBytes', async () => {
      await writeFile(join(work, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      expect(codeOf(await run('edit', { path: 'latin1.txt', oldString: 'caf', newString: 'x' }))).toBe('BUILTIN_WRONG_TYPE');
      const small = strictRuntime({ files: { editMaxBytes: 8 } }).runtime;
      await writeFile(join(work, 'big.txt'), 'x'.repeat(9));
      const result = await small.execute('builtin.fs.edit', { path: 'big.txt', oldString: 'x', newString: 'y', replaceAll: true }, ctx);
      expect(codeOf(result)).toBe('BUILTIN_TOO_LARGE');
    });
  });

  describe('builtin.fs.delete', () => {
    it('deletes a file, refuses a non-empty folder without recursive, and deletes a tree entry by entry', async () => {
      await mkdir(join(work, 'tree/sub'), { recursive: true });
      await writeFile(join(work, 'tree/a.txt'), 'a');
      await writeFile(join(work, 'tree/sub/b.txt'), 'b');
      await writeFile(join(work, 'single.txt'), 's');
      expect((await run('delete', { path: 'single.txt' })).output).toMatchObject({ deleted: 1 });
      expect(codeOf(await run('delete', { path: 'tree' }))).toBe('BUILTIN_WRONG_TYPE');
      expect((await run('delete', { path: 'tree', recursive: true })).output).toMatchObject({ deleted: 4 });
      await expect(stat(join(work, 'tree'))).rejects.toMatchObject({ code: 'ENOENT' });
      expect(ctx.changes.map((change) => change.kind)).toEqual(['delete', 'delete', 'delete', 'delete', 'delete']);
      expect(ctx.changes[ctx.changes.length - 1].target).toBe(join(work, 'tree'));
    });

    it('never deletes the root of a resource, nor a missing path', async () => {
      expect(codeOf(await run('delete', { path: '.', recursive: true }))).toBe('BUILTIN_INVALID_INPUT');
      expect(codeOf(await run('delete', { path: 'missing' }))).toBe('BUILTIN_NOT_FOUND');
    });
  });

  describe('builtin.fs.list, glob and grep', () => {
    beforeEach(async () => {
      await mkdir(join(work, 'src/deep'), { recursive: true });
      await mkdir(join(work, '.hidden'));
      await writeFile(join(work, 'src/a.ts'), 'export const alpha = 1;\n// TODO one\n');
      await writeFile(join(work, 'src/b.ts'), 'export const beta = 2;\n');
      await writeFile(join(work, 'src/deep/c.ts'), '// todo two\n// TODO three that is long\n');
      await writeFile(join(work, 'src/readme.md'), 'TODO docs\n');
      await writeFile(join(work, '.hidden/secret.ts'), '// TODO hidden\n');
      await writeFile(join(work, 'src/image.bin'), Buffer.from([0, 84, 79, 68, 79]));
      await symlink(join(work, 'src'), join(work, 'src-link'));
    });

    it('lists a folder a page at a time with types and sizes', async () => {
      const seen: { name: string; type: string; size?: number }[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await run('list', { path: 'src', ...(cursor === undefined ? {} : { cursor }) });
        expect(page.output.entries.length).toBeLessThanOrEqual(3);
        seen.push(...page.output.entries);
        cursor = page.output.nextCursor;
        expect(page.output.truncated).toBe(cursor !== undefined);
        pages++;
      } while (cursor !== undefined);
      expect(pages).toBe(2);
      expect(seen.map((entry) => entry.name).sort()).toEqual(['a.ts', 'b.ts', 'deep', 'image.bin', 'readme.md']);
      expect(seen.find((entry) => entry.name === 'b.ts')).toEqual({ name: 'b.ts', type: 'file', size: 23 });
      expect(seen.find((entry) => entry.name === 'deep')).toEqual({ name: 'deep', type: 'directory' });
      expect(codeOf(await run('list', { path: 'src/a.ts' }))).toBe('BUILTIN_WRONG_TYPE');
    });

    it('globs recursively without following links or matching dot names, paging with a cursor', async () => {
      const first = await run('glob', { pattern: '**/*.ts', limit: 2 });
      expect(first.output.paths).toHaveLength(2);
      expect(first.output).toMatchObject({ truncated: true, nextCursor: '2' });
      const rest = await run('glob', { pattern: '**/*.ts', cursor: first.output.nextCursor });
      expect(rest.output.paths).toHaveLength(1);
      expect(rest.output).toMatchObject({ truncated: false });
      expect([...first.output.paths, ...rest.output.paths].sort()).toEqual(
        [join(work, 'src/a.ts'), join(work, 'src/b.ts'), join(work, 'src/deep/c.ts')].sort(),
      );
      const withDot = await run('glob', { pattern: '**/secret.ts', dot: true });
      expect(withDot.output.paths).toEqual([join(work, '.hidden/secret.ts')]);
      const folders = await run('glob', { pattern: 'src/d*', includeDirectories: true });
      expect(folders.output.paths).toEqual([join(work, 'src/deep')]);
      expect((await run('glob', { pattern: 'src/d*' })).output.paths).toEqual([]);
    });

    it('greps line by line with line numbers, skipping binary, hidden and linked files, and cuts long lines', async () => {
      const result = await run('grep', { pattern: 'todo', ignoreCase: true, path: 'src', glob: '**/*.ts' });
      expect(result.output).toMatchObject({ truncated: false, filesSearched: 3 });
      expect(result.output.matches).toEqual(
        expect.arrayContaining([
          { path: join(work, 'src/a.ts'), line: 2, text: '// TODO one' },
          { path: join(work, 'src/deep/c.ts'), line: 1, text: '// todo two' },
          { path: join(work, 'src/deep/c.ts'), line: 2, text: '// TODO thr' },
        ]),
      );
      expect(result.output.matches).toHaveLength(3);
      const everywhere = await run('grep', { pattern: 'TODO', literal: true });
      expect(everywhere.output.matches.map((match: { path: string }) => match.path)).not.toContain(join(work, 'src/image.bin'));
      expect(everywhere.output.matches.map((match: { path: string }) => match.path)).not.toContain(join(work, '.hidden/secret.ts'));
    });

    it('stops at maxMatches with truncated, searches a single file, and refuses a bad expression', async () => {
      const limited = await run('grep', { pattern: 'o', maxMatches: 2 });
      expect(limited.output.matches).toHaveLength(2);
      expect(limited.output.truncated).toBe(true);
      const single = await run('grep', { pattern: 'beta', path: 'src/b.ts' });
      expect(single.output).toMatchObject({ filesSearched: 1, matches: [{ line: 1 }] });
      expect(codeOf(await run('grep', { pattern: '(unclosed' }))).toBe('BUILTIN_INVALID_INPUT');
    });
  });
});
