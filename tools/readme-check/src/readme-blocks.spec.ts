import { extractBlocks } from './readme-blocks';

const markdown = (...lines: string[]): string => `${lines.join('\n')}\n`;

describe('extractBlocks', () => {
  it('finds TypeScript and JavaScript blocks with the line of their fence, and leaves other languages alone', () => {
    const { blocks, problems, fenceCount } = extractBlocks(
      markdown('# Title', '', '```sh', 'npm ci', '```', '', '```ts', 'const a = 1;', 'console.log(a);', '```', '', '```javascript', 'export {};', '```'),
      'README.md',
    );
    expect(problems).toEqual([]);
    expect(fenceCount).toBe(3);
    expect(blocks).toEqual([
      { file: 'README.md', line: 7, language: 'ts', mode: 'run', code: 'const a = 1;\nconsole.log(a);\n' },
      { file: 'README.md', line: 12, language: 'js', mode: 'run', code: 'export {};\n' },
    ]);
  });

  it('marks a typecheck-only block, and knows cjs', () => {
    const { blocks } = extractBlocks(markdown('```ts typecheck-only', 'await fetch(url);', '```', '```cjs', "require('x');", '```'), 'a.md');
    expect(blocks.map((block) => [block.language, block.mode])).toEqual([
      ['ts', 'typecheck-only'],
      ['cjs', 'run'],
    ]);
  });

  it('refuses an unlabelled fence, an unknown option and a fence never closed', () => {
    const { blocks, problems } = extractBlocks(markdown('```', 'plain', '```', '```ts skip', 'const hidden = 1;', '```', '```ts', 'const open = 1;'), 'b.md');
    expect(blocks).toEqual([]);
    expect(problems).toEqual([
      { file: 'b.md', line: 1, message: expect.stringMatching(/has no language/) },
      { file: 'b.md', line: 4, message: expect.stringMatching(/unknown fence option 'skip'; the only one is 'typecheck-only'/) },
      { file: 'b.md', line: 7, message: expect.stringMatching(/never closed/) },
    ]);
  });

  it('closes a fence only with the same character, at least as long, and keeps shorter fences inside', () => {
    const { blocks } = extractBlocks(markdown('````ts', 'const text = `', '```', '`;', '~~~', '````'), 'c.md');
    expect(blocks).toHaveLength(1);
    expect(blocks[0]!.code).toBe('const text = `\n```\n`;\n~~~\n');
  });

  it('takes tilde fences, indented fences (in a list item) and their indentation off the code', () => {
    const { blocks } = extractBlocks(markdown('- step', '', '  ~~~ts', '  const a = 1;', '    const b = 2;', '  ~~~'), 'd.md');
    expect(blocks).toEqual([expect.objectContaining({ line: 3, code: 'const a = 1;\n  const b = 2;\n' })]);
  });

  it('does not take inline code with three backticks for a fence', () => {
    const { fenceCount, problems } = extractBlocks(markdown('```ts` is how a fence starts'), 'e.md');
    expect(fenceCount).toBe(0);
    expect(problems).toEqual([]);
  });
});
