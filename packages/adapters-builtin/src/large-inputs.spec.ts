import { once } from 'node:events';
import { createWriteStream, linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createExecutionContext, type PlanContext } from '@ca/tool-context';
import type { ToolRuntime } from '@ca/tool-lifecycle';
import { folderResource, makeTemporaryFolder, removeTemporaryFolders, strictRuntime } from './workspace.test-helper';

const LINE_WIDTH = 100;
const FILE_BYTES = 50 * 1024 * 1024;
const LINES = FILE_BYTES / LINE_WIDTH; // 524,288 lines of 100 bytes

function lineText(index: number): string {
  const head = `line ${String(index).padStart(7, '0')} `;
  return `${head}${'.'.repeat(LINE_WIDTH - head.length - 1)}\n`;
}

async function writeLargeFile(path: string): Promise<void> {
  const stream = createWriteStream(path);
  let batch = '';
  for (let index = 0; index < LINES; index++) {
    batch += lineText(index);
    if (batch.length >= 1024 * 1024) {
      if (!stream.write(batch)) await once(stream, 'drain');
      batch = '';
    }
  }
  stream.end(batch);
  await once(stream, 'finish');
}

describe('large inputs', () => {
  let work: string;
  let runtime: ToolRuntime;
  let ctx: PlanContext;

  beforeAll(async () => {
    work = await makeTemporaryFolder();
    ({ runtime } = strictRuntime({ files: { walkMaxEntries: 200_000 } }));
    ctx = createExecutionContext({ planId: 'plan-large', resources: [folderResource('work', work, 'read')] });
  });

  afterAll(removeTemporaryFolders, 60_000);

  describe('a 50 MB file', () => {
    beforeAll(async () => {
      await writeLargeFile(join(work, 'big.log'));
      const single = createWriteStream(join(work, 'one-line.txt'));
      const chunk = 'x'.repeat(1024 * 1024);
      for (let index = 0; index < 50; index++) if (!single.write(chunk)) await once(single, 'drain');
      single.end();
      await once(single, 'finish');
    }, 60_000);

    it('reads a line range deep in the file', async () => {
      const result = await runtime.execute<any>('builtin.fs.read', { path: 'big.log', offset: 500_000, limit: 3 }, ctx);
      expect(result.output).toMatchObject({
        content: lineText(500_000) + lineText(500_001) + lineText(500_002),
        count: 3,
        nextOffset: 500_003,
        totalBytes: FILE_BYTES,
      });
    }, 60_000);

    it('reads the default page of lines, capped at 256 KiB', async () => {
      const result = await runtime.execute<any>('builtin.fs.read', { path: 'big.log' }, ctx);
      expect(result.output).toMatchObject({ count: 2000, nextOffset: 2000, truncated: false });
      expect(result.output.content.length).toBe(2000 * LINE_WIDTH);
    });

    it('reads a byte range at the end without reading what comes before', async () => {
      const result = await runtime.execute<any>('builtin.fs.read', { path: 'big.log', unit: 'bytes', offset: FILE_BYTES - LINE_WIDTH, limit: 1_000_000 }, ctx);
      expect(result.output).toMatchObject({ content: lineText(LINES - 1), count: LINE_WIDTH, truncated: false });
      expect(result.output.nextOffset).toBeUndefined();
    });

    it('returns only the head of a 50 MB single line, flagged as truncated', async () => {
      const result = await runtime.execute<any>('builtin.fs.read', { path: 'one-line.txt' }, ctx);
      expect(result.output).toMatchObject({ count: 1, truncated: true, nextOffset: 1 });
      expect(result.output.content.length).toBe(256 * 1024);
    }, 60_000);

    it('greps the whole file line by line, and stops early at the match limit', async () => {
      const last = await runtime.execute<any>('builtin.fs.grep', { pattern: `line ${String(LINES - 1).padStart(7, '0')} `, path: 'big.log' }, ctx);
      expect(last.output).toEqual({
        matches: [{ path: join(work, 'big.log'), line: LINES, text: expect.stringMatching(/^line 0524287 \.+$/) }],
        filesSearched: 1,
        truncated: false,
      });
      const many = await runtime.execute<any>('builtin.fs.grep', { pattern: 'line', path: 'big.log', maxMatches: 5 }, ctx);
      expect(many.output.matches.map((match: { line: number }) => match.line)).toEqual([1, 2, 3, 4, 5]);
      expect(many.output.truncated).toBe(true);
    }, 60_000);
  });

  describe('a tree of 100,000 files', () => {
    const FOLDERS = 100;
    const FILES_PER_FOLDER = 1000;

    beforeAll(async () => {
      const tree = join(work, 'tree');
      for (let folder = 0; folder < FOLDERS; folder++) {
        const path = join(tree, `d${folder}`);
        mkdirSync(path, { recursive: true });
        const first = join(path, 'f0.txt');
        writeFileSync(first, `file ${folder}/0\n`);
        // Hard links are real directory entries at a fraction of the cost of new files (one syscall each),
        // which keeps the setup in seconds on a loaded disk.
        for (let file = 1; file < FILES_PER_FOLDER; file++) linkSync(first, join(path, `f${file}.txt`));
      }
    }, 120_000);

    it('globs a page at a time with a cursor, pages never overlapping', async () => {
      const first = await runtime.execute<any>('builtin.fs.glob', { pattern: '**/*.txt', path: 'tree' }, ctx);
      expect(first.output.paths).toHaveLength(1000);
      expect(first.output).toMatchObject({ truncated: true, nextCursor: '1000' });
      const second = await runtime.execute<any>('builtin.fs.glob', { pattern: '**/*.txt', path: 'tree', cursor: first.output.nextCursor }, ctx);
      expect(second.output.paths).toHaveLength(1000);
      const overlap = new Set(first.output.paths).size + new Set(second.output.paths).size - new Set([...first.output.paths, ...second.output.paths]).size;
      expect(overlap).toBe(0);
    }, 60_000);

    it('walks the whole tree to find a single match, and visits only the literal start folder when the pattern has one', async () => {
      const anywhere = await runtime.execute<any>('builtin.fs.glob', { pattern: '**/f999.txt', path: 'tree', limit: 1000 }, ctx);
      expect(anywhere.output.paths).toHaveLength(FOLDERS);
      expect(anywhere.output.visitedEntries).toBe(FOLDERS * FILES_PER_FOLDER + FOLDERS);
      const narrow = await runtime.execute<any>('builtin.fs.glob', { pattern: 'd42/f99*.txt', path: 'tree' }, ctx);
      expect(narrow.output.paths).toHaveLength(11);
      expect(narrow.output.visitedEntries).toBe(FILES_PER_FOLDER);
    }, 60_000);

    it('stops a walk at walkMaxEntries with truncated', async () => {
      const { runtime: capped } = strictRuntime({ files: { walkMaxEntries: 5000 } });
      const result = await capped.execute<any>('builtin.fs.glob', { pattern: '**/nothing', path: 'tree' }, ctx);
      expect(result.output).toMatchObject({ paths: [], truncated: true, visitedEntries: 5000 });
    });

    it('lists a folder of 1,000 entries in pages', async () => {
      const names = new Set<string>();
      let cursor: string | undefined;
      do {
        const page = await runtime.execute<any>('builtin.fs.list', { path: 'tree/d7', limit: 300, ...(cursor === undefined ? {} : { cursor }) }, ctx);
        for (const entry of page.output.entries) names.add(entry.name);
        cursor = page.output.nextCursor;
      } while (cursor !== undefined);
      expect(names.size).toBe(FILES_PER_FOLDER);
    }, 60_000);

    it('greps across the tree up to the match limit', async () => {
      const result = await runtime.execute<any>('builtin.fs.grep', { pattern: '^file \\d+/\\d+$', path: 'tree', maxMatches: 50 }, ctx);
      expect(result.output.matches).toHaveLength(50);
      expect(result.output).toMatchObject({ truncated: true, filesSearched: 51 });
    }, 60_000);
  });
});
