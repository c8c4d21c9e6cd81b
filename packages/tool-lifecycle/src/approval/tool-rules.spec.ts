import { ToolRuleError, compileToolRules, type ToolRuleDefinition } from '../index';

function thrown(definitions: unknown): ToolRuleError {
  try {
    compileToolRules(definitions as ToolRuleDefinition[]);
  } catch (error) {
    if (ToolRuleError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the rules to be refused');
}

describe('compileToolRules: matching', () => {
  const rules = compileToolRules([
    {
      name: 'no-force-push',
      decision: 'deny',
      tools: 'builtin.command.run',
      arguments: { '/command': { regex: '^\\["git","push".*"--force"' } },
      reason: 'never rewrite history',
    },
    { name: 'git-is-fine', decision: 'allow', tools: 'builtin.command.run', arguments: { '/command/0': { equals: 'git' } } },
    { name: 'ask-on-deletes', decision: 'ask', tools: ['builtin.fs.delete', 'mcp.*.delete_*'] },
    { name: 'env-files', decision: 'deny', tools: 'builtin.fs.*', arguments: { '/path': { glob: '*.env' } } },
    { name: 'big-numbers', decision: 'ask', tools: 'calc.*', arguments: { '/n': { regex: '^[0-9]{4,}$' } } },
    { name: 'case-blind', decision: 'ask', tools: 'http.*', arguments: { '/method': { regex: '^delete$', ignoreCase: true } } },
  ]);

  it.each([
    ['builtin.command.run', { command: ['git', 'push', 'origin', '--force'] }, { decision: 'deny', rule: 'no-force-push', reason: 'never rewrite history' }],
    ['builtin.command.run', { command: ['git', 'status'] }, { decision: 'allow', rule: 'git-is-fine' }],
    ['builtin.command.run', { command: ['rm', '-rf', '/'] }, undefined],
    ['builtin.fs.delete', { path: 'a.txt' }, { decision: 'ask', rule: 'ask-on-deletes' }],
    ['builtin.fs.delete', { path: 'prod.env' }, { decision: 'deny', rule: 'env-files' }],
    ['mcp.github.delete_repo', {}, { decision: 'ask', rule: 'ask-on-deletes' }],
    ['builtin.fs.read', { path: 'notes/.env' }, { decision: 'deny', rule: 'env-files' }],
    ['builtin.fs.read', { path: 'notes/env' }, undefined],
    ['calc.add', { n: 12345 }, { decision: 'ask', rule: 'big-numbers' }],
    ['calc.add', { n: 123 }, undefined],
    ['http.request', { method: 'DELETE' }, { decision: 'ask', rule: 'case-blind' }],
  ])('%s %j → %j', (tool, args, expected) => {
    expect(rules.decide(tool, args)).toEqual(expected);
  });

  it('deny wins over ask and allow, and ask over allow, whatever their order', () => {
    const ordered = compileToolRules([
      { name: 'allow-all', decision: 'allow', tools: '*' },
      { name: 'ask-writes', decision: 'ask', tools: 'fs.write' },
      { name: 'deny-secrets', decision: 'deny', tools: 'fs.*', arguments: { '/path': { glob: 'secret*' } } },
    ]);
    expect(ordered.decide('fs.write', { path: 'secret.txt' })).toMatchObject({ decision: 'deny', rule: 'deny-secrets' });
    expect(ordered.decide('fs.write', { path: 'a.txt' })).toMatchObject({ decision: 'ask', rule: 'ask-writes' });
    expect(ordered.decide('fs.read', { path: 'a.txt' })).toMatchObject({ decision: 'allow', rule: 'allow-all' });
  });

  it('equals compares JSON values: the string "42" is not the number 42', () => {
    const equals = compileToolRules([{ name: 'n', decision: 'deny', tools: 't', arguments: { '/n': { equals: 42 }, '/o': { equals: { b: [1], a: 'x' } } } }]);
    expect(equals.decide('t', { n: 42, o: { a: 'x', b: [1] } })?.decision).toBe('deny');
    expect(equals.decide('t', { n: '42', o: { a: 'x', b: [1] } })).toBeUndefined();
  });

  it('reads own properties only: a pointer to __proto__ or an inherited name finds nothing', () => {
    const guarded = compileToolRules([
      { name: 'proto', decision: 'deny', tools: 't', arguments: { '/__proto__': { glob: '*' } } },
      { name: 'ctor', decision: 'deny', tools: 'u', arguments: { '/constructor': { glob: '*' } } },
    ]);
    expect(guarded.decide('t', {})).toBeUndefined();
    expect(guarded.decide('u', {})).toBeUndefined();
    expect(guarded.decide('u', JSON.parse('{"constructor":"x"}'))).toMatchObject({ rule: 'ctor' });
  });

  it('an untrusted value cannot make a pattern slow (linear-time engine)', () => {
    const slowForBacktracking = compileToolRules([{ name: 'r', decision: 'deny', tools: 't', arguments: { '/text': { regex: '^(a+)+$' } } }]);
    expect(slowForBacktracking.decide('t', { text: `${'a'.repeat(100_000)}!` })).toBeUndefined();
    expect(slowForBacktracking.decide('t', { text: 'aaaa' })?.decision).toBe('deny');
  });

  it('a value of arguments that has no JSON form matches nothing instead of throwing', () => {
    const any = compileToolRules([{ name: 'r', decision: 'deny', tools: 't', arguments: { '/x': { glob: '*' } } }]);
    expect(any.decide('t', { x: 1n })).toBeUndefined();
    expect(any.decide('t', { x: [1] })?.decision).toBe('deny');
  });
});

describe('compileToolRules: a broken rule fails when loaded', () => {
  it.each([
    [[{ decision: 'deny', tools: 'x', argumnets: {} }], 'rules[0]', 'argumnets', 'invalid', /is not a field of a rule/],
    [[{ name: 'n', decision: 'block', tools: 'x' }], 'n', 'decision', 'invalid', /expected 'allow', 'deny' or 'ask', got 'block'/],
    [[{ name: 'n', decision: 'deny', tools: [] }], 'n', 'tools', 'invalid', /non-empty list/],
    [[{ name: 'n', decision: 'deny', tools: 'x', arguments: { path: { glob: '*' } } }], 'n', 'arguments.path', 'invalid', /write "\/path"/],
    [[{ name: 'n', decision: 'deny', tools: 'x', arguments: { '/p': { glob: '*', regex: 'a' } } }], 'n', 'arguments./p', 'invalid', /"glob" stands alone/],
    [[{ name: 'n', decision: 'deny', tools: 'x', arguments: { '/p': { regex: '(?=a)b' } } }], 'n', 'arguments./p.regex', 'pattern', /lookahead/],
    [
      [{ name: 'n', decision: 'deny', tools: 'x', arguments: { '/p': { regex: '(' } } }],
      'n',
      'arguments./p.regex',
      'pattern',
      /PATTERN_INVALID|Invalid|invalid|unterminated/i,
    ],
    [
      [{ name: 'n', decision: 'deny', tools: 'x', examples: { match: [{ tool: 'y' }] } }],
      'n',
      'examples.match[0]',
      'example',
      /does not match its own example y \{\}/,
    ],
    [
      [{ name: 'n', decision: 'deny', tools: 'x', arguments: { '/a': { glob: 'b*' } }, examples: { notMatch: [{ tool: 'x', arguments: { a: 'bc' } }] } }],
      'n',
      'examples.notMatch[0]',
      'example',
      /matches its own example x \{"a":"bc"\}, which it must not match/,
    ],
    [[{ name: 'n', decision: 'deny', tools: 'x', examples: { matches: [] } }], 'n', 'examples.matches', 'invalid', /only match and notMatch/],
    [
      [
        { name: 'same', decision: 'deny', tools: 'x' },
        { name: 'same', decision: 'allow', tools: 'y' },
      ],
      'same',
      'name',
      'invalid',
      /another rule has this name/,
    ],
  ])('%j → rule %s, field %s, problem %s', (definitions, rule, field, problem, message) => {
    const error = thrown(definitions);
    expect(error).toMatchObject({ code: 'TOOL_RULE_INVALID', rule, field, problem });
    expect(error.message).toMatch(message);
    expect(error.message.startsWith(`Rule '${rule}' (rules[`)).toBe(true);
  });

  it('rules whose examples agree with them load', () => {
    const rules = compileToolRules([
      {
        name: 'no-rm',
        decision: 'deny',
        tools: 'builtin.command.run',
        arguments: { '/command/0': { equals: 'rm' } },
        examples: {
          match: [{ tool: 'builtin.command.run', arguments: { command: ['rm', '-rf', 'x'] } }],
          notMatch: [{ tool: 'builtin.command.run', arguments: { command: ['ls'] } }],
        },
      },
    ]);
    expect(rules.size).toBe(1);
    expect(rules.coversTool('builtin.command.run')).toBe(true);
    expect(rules.coversTool('builtin.fs.read')).toBe(false);
  });

  it('refuses something that is not a list', () => {
    expect(thrown({ rules: [] }).message).toMatch(/expected a list of rules/);
  });
});
