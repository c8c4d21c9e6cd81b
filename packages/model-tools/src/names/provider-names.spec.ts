import fc from 'fast-check';
import { isValidToolName } from '@ca/domain';
import { MODEL_TOOL_FORMATS, ToolNameMap, nameRulesOf } from './provider-names';

const catalog = [
  'builtin.fs.read',
  'builtin.fs.write',
  'mcp.everything.get-sum',
  'mcp.github.create_issue',
  'skill.release-notes',
  'custom:demo.word-count',
  'wrapped.echo',
];

function matchesRules(name: string, format: (typeof MODEL_TOOL_FORMATS)[number]): boolean {
  const rules = nameRulesOf(format);
  if (name.length < 1 || name.length > rules.maxLength) return false;
  if (rules.first !== undefined && !rules.first.test(name[0]!)) return false;
  return [...name].every((character) => rules.allowed.test(character));
}

describe('ToolNameMap', () => {
  it.each(MODEL_TOOL_FORMATS)('maps every name of a catalog to %s rules and back', (format) => {
    const map = new ToolNameMap(catalog, nameRulesOf(format));
    for (const name of catalog) {
      const provider = map.toProvider(name)!;
      expect(matchesRules(provider, format)).toBe(true);
      expect(map.fromProvider(provider)).toBe(name);
    }
  });

  it('keeps names readable: a dot becomes an underscore for OpenAI, stays for Gemini and MCP', () => {
    expect(new ToolNameMap(catalog, nameRulesOf('openai-chat')).toProvider('mcp.everything.get-sum')).toBe('mcp_everything_get-sum');
    expect(new ToolNameMap(catalog, nameRulesOf('gemini')).toProvider('mcp.everything.get-sum')).toBe('mcp.everything.get-sum');
    expect(new ToolNameMap(catalog, nameRulesOf('mcp')).toProvider('custom:demo.word-count')).toBe('custom_demo.word-count');
  });

  it('tells apart names that would collide, with a hash of each one own name, whatever the order', () => {
    const names = ['mcp.a.b_c', 'mcp.a_b.c', 'mcp.a.b.c'];
    const forward = new ToolNameMap(names, nameRulesOf('openai-chat'));
    const backward = new ToolNameMap([...names].reverse(), nameRulesOf('openai-chat'));
    const provided = names.map((name) => forward.toProvider(name)!);
    expect(new Set(provided).size).toBe(3);
    for (const [index, name] of names.entries()) {
      expect(provided[index]).toMatch(/^mcp_a_b_c_[A-Za-z0-9]{8}$/);
      expect(backward.toProvider(name)).toBe(provided[index]);
      expect(forward.fromProvider(provided[index]!)).toBe(name);
    }
  });

  it('cuts a name longer than the provider allows and keeps it unique', () => {
    const long = `mcp.server.${'x'.repeat(150)}`;
    const other = `mcp.server.${'x'.repeat(149)}y`;
    const map = new ToolNameMap([long, other], nameRulesOf('anthropic'));
    expect(map.toProvider(long)!.length).toBe(64);
    expect(map.toProvider(long)).not.toBe(map.toProvider(other));
    expect(map.fromProvider(map.toProvider(other)!)).toBe(other);
  });

  it('gives Gemini a first character it accepts', () => {
    const map = new ToolNameMap(['9lives', '_ok'], nameRulesOf('gemini'));
    expect(map.toProvider('9lives')).toBe('_9lives');
    expect(map.fromProvider('_9lives')).toBe('9lives');
  });

  it('holds for any catalog of valid names: rules met, no collision, reversible, independent of order', () => {
    const validName = fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,80}$/).filter(isValidToolName);
    fc.assert(
      fc.property(fc.uniqueArray(validName, { maxLength: 30 }), fc.constantFrom(...MODEL_TOOL_FORMATS), (names, format) => {
        const map = new ToolNameMap(names, nameRulesOf(format));
        const shuffled = new ToolNameMap([...names].reverse(), nameRulesOf(format));
        const provided = names.map((name) => map.toProvider(name)!);
        expect(new Set(provided).size).toBe(names.length);
        for (const [index, name] of names.entries()) {
          expect(matchesRules(provided[index]!, format)).toBe(true);
          expect(map.fromProvider(provided[index]!)).toBe(name);
          expect(shuffled.toProvider(name)).toBe(provided[index]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('answers undefined for a name it does not hold', () => {
    const map = new ToolNameMap(catalog, nameRulesOf('openai-chat'));
    expect(map.fromProvider('builtin.fs.read')).toBeUndefined();
    expect(map.toProvider('nope')).toBeUndefined();
  });
});
