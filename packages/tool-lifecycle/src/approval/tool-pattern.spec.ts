import { compileToolPattern } from '../index';

describe('compileToolPattern', () => {
  it.each([
    ['builtin.fs.read', 'builtin.fs.read', true],
    ['builtin.fs.read', 'builtin.fs.reader', false],
    ['builtin.fs.*', 'builtin.fs.read', true],
    ['builtin.fs.*', 'builtin.fsx.read', false],
    ['*', 'anything.at.all', true],
    ['mcp.*.create_*', 'mcp.github.create_issue', true],
    ['mcp.*.create_*', 'mcp.github.delete_issue', false],
    ['files.?ead', 'files.read', true],
    ['files.?ead', 'files.bread', false],
    ['a.b', 'aXb', false],
    ['*.env', 'config/prod.env', true],
    ['(x)+[y]', '(x)+[y]', true],
    ['(x)*', '(x)anything', true],
    ['*line', 'first\nsecond line', true],
  ])('%p against %p: %p', (pattern, text, expected) => {
    expect(compileToolPattern(pattern)(text)).toBe(expected);
  });

  it('stays fast on a text made to make backtracking matchers slow', () => {
    const matches = compileToolPattern('*a*a*a*a*a*a*a*a*a*b');
    expect(matches(`${'a'.repeat(50_000)}c`)).toBe(false);
  });
});
