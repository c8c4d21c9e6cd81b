import { FRONTMATTER_CHUNK_BYTES, readFrontmatter, stripFrontmatter } from './frontmatter-reader';
import type { SkillsFileHandle } from './skills-file-system';

/** A handle over bytes in memory that records every read. */
function memoryHandle(content: string | Buffer): SkillsFileHandle & { reads: { position: number; length: number }[] } {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  const reads: { position: number; length: number }[] = [];
  return {
    reads,
    read: async (buffer, offset, length, position) => {
      reads.push({ position, length });
      const slice = bytes.subarray(position, position + length);
      Buffer.from(slice).copy(buffer, offset);
      return { bytesRead: slice.length };
    },
    stat: async () => ({ size: bytes.length, mode: 0o644, isFile: () => true, isDirectory: () => false }),
    close: async () => undefined,
  };
}

describe('readFrontmatter', () => {
  it('returns the YAML between the delimiters and the size of the frontmatter', async () => {
    const result = await readFrontmatter(memoryHandle('---\nname: a\ndescription: b\n---\n# Body\n'), 1024);
    expect(result).toEqual({ status: 'ok', yaml: 'name: a\ndescription: b\n', frontmatterBytes: 31, bytesRead: 38 });
  });

  it('accepts CRLF line endings, a byte-order mark and trailing blanks on the delimiters', async () => {
    const result = await readFrontmatter(memoryHandle('\uFEFF--- \r\nname: a\r\n---\t\r\nbody'), 1024);
    expect(result).toMatchObject({ status: 'ok', yaml: 'name: a\r\n' });
  });

  it('accepts a closing delimiter at the very end of the file, and an empty frontmatter', async () => {
    expect(await readFrontmatter(memoryHandle('---\nname: a\n---'), 1024)).toMatchObject({ status: 'ok', yaml: 'name: a\n' });
    expect(await readFrontmatter(memoryHandle('---\n---\nbody'), 1024)).toMatchObject({ status: 'ok', yaml: '' });
  });

  it('does not take a longer dash line or an indented one for the delimiter', async () => {
    const result = await readFrontmatter(memoryHandle('---\ndescription: |\n  ---\nrule: ----\n---\n'), 1024);
    expect(result).toMatchObject({ status: 'ok', yaml: 'description: |\n  ---\nrule: ----\n' });
  });

  it('reports a file that does not start with a delimiter after the first read', async () => {
    const handle = memoryHandle(`# Title\n${'x'.repeat(10_000)}`);
    expect(await readFrontmatter(handle, 16_384)).toEqual({ status: 'no-frontmatter', bytesRead: FRONTMATTER_CHUNK_BYTES });
    expect(handle.reads).toHaveLength(1);
    expect((await readFrontmatter(memoryHandle('----\nname: a\n---\n'), 1024)).status).toBe('no-frontmatter');
    expect((await readFrontmatter(memoryHandle(''), 1024)).status).toBe('no-frontmatter');
    expect((await readFrontmatter(memoryHandle('--'), 1024)).status).toBe('no-frontmatter');
  });

  it('reports a frontmatter without its closing line as unterminated, and one over the cap as too large', async () => {
    expect(await readFrontmatter(memoryHandle('---\nname: a\ndescription: b\n'), 1024)).toMatchObject({ status: 'unterminated' });
    const long = `---\n${'key: value\n'.repeat(200)}---\n`;
    const result = await readFrontmatter(memoryHandle(long), 1000);
    expect(result).toEqual({ status: 'too-large', bytesRead: 1000 });
  });

  it('stops reading at the chunk holding the closing delimiter, however large the body', async () => {
    const frontmatter = '---\nname: big\ndescription: A skill with a large body.\n---\n';
    const small = memoryHandle(frontmatter + 'b'.repeat(1024));
    const large = memoryHandle(frontmatter + 'b'.repeat(1024 * 1024));
    const smallResult = await readFrontmatter(small, 16_384);
    const largeResult = await readFrontmatter(large, 16_384);
    expect(largeResult).toEqual(smallResult);
    expect(largeResult.bytesRead).toBeLessThan(frontmatter.length + FRONTMATTER_CHUNK_BYTES);
    expect(large.reads).toEqual(small.reads);
  });

  it('finds a delimiter that straddles two reads', async () => {
    const padding = 'x'.repeat(FRONTMATTER_CHUNK_BYTES - 'name: a\ndescription: '.length - 4 - 2);
    const text = `---\nname: a\ndescription: ${padding}\n---\nbody`;
    const handle = memoryHandle(text);
    expect(await readFrontmatter(handle, 16_384)).toMatchObject({ status: 'ok', yaml: `name: a\ndescription: ${padding}\n` });
    expect(handle.reads.length).toBe(2);
  });

  it('stops when the signal aborts', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(readFrontmatter(memoryHandle('---\nname: a\n'), 1024, controller.signal)).rejects.toThrow('stop');
  });
});

describe('stripFrontmatter', () => {
  it('returns the body after the closing delimiter without leading blank lines', () => {
    expect(stripFrontmatter('---\nname: a\n---\n\n\n# Body\ntext\n')).toBe('# Body\ntext\n');
    expect(stripFrontmatter('\uFEFF---\r\nname: a\r\n---\r\n\r\nBody')).toBe('Body');
  });

  it('keeps a file without frontmatter whole', () => {
    expect(stripFrontmatter('# Title\n---\nname: a\n---\n')).toBe('# Title\n---\nname: a\n---\n');
  });
});
