import { isValidToolName, MAX_TOOL_NAME_LENGTH } from '@ca/domain';
import { mapToolNames, matchesAnyGlob } from './tool-names';

describe('mapToolNames', () => {
  it('keeps valid names and replaces the characters tool names refuse by _', () => {
    const names = mapToolNames('s', ['echo', 'read.file', 'ns:tool', 'get weather/now', 'é']);
    expect([...names.entries()]).toEqual([
      ['echo', 'mcp.s.echo'],
      ['read.file', 'mcp.s.read.file'],
      ['ns:tool', 'mcp.s.ns:tool'],
      ['get weather/now', 'mcp.s.get_weather_now'],
      ['é', 'mcp.s._'],
    ]);
    for (const name of names.values()) expect(isValidToolName(name)).toBe(true);
  });

  it('appends a hash of the MCP name to changed names that collide, deterministically', () => {
    const names = mapToolNames('s', ['a_b', 'a b', 'a/b']);
    expect(names.get('a_b')).toBe('mcp.s.a_b');
    expect(names.get('a b')).toMatch(/^mcp\.s\.a_b_[0-9a-f]{8}$/);
    expect(names.get('a/b')).toMatch(/^mcp\.s\.a_b_[0-9a-f]{8}$/);
    expect(names.get('a b')).not.toBe(names.get('a/b'));
    expect(mapToolNames('s', ['a/b', 'a b', 'a_b'])).toEqual(names);
  });

  it('shortens names longer than the limit with a hash', () => {
    const long = 'x'.repeat(300);
    const name = mapToolNames('server', [long]).get(long) as string;
    expect(name).toHaveLength(MAX_TOOL_NAME_LENGTH);
    expect(isValidToolName(name)).toBe(true);
    expect(mapToolNames('server', [`${long}y`]).get(`${long}y`)).not.toBe(name);
  });
});

describe('matchesAnyGlob', () => {
  it('matches * and ? and nothing else specially', () => {
    expect(matchesAnyGlob('read_file', ['read_*'])).toBe(true);
    expect(matchesAnyGlob('list_directory', ['list_?irectory'])).toBe(true);
    expect(matchesAnyGlob('write_file', ['read_*', 'list_*'])).toBe(false);
    expect(matchesAnyGlob('a.b', ['a?b'])).toBe(true);
    expect(matchesAnyGlob('axb', ['a.b'])).toBe(false);
    expect(matchesAnyGlob('(x)', ['(x)'])).toBe(true);
    expect(matchesAnyGlob('anything', ['*'])).toBe(true);
    expect(matchesAnyGlob('x', [])).toBe(false);
  });
});
