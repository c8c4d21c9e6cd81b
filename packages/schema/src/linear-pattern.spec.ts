import * as fc from 'fast-check';
import { compileEcmaScriptEngines, compileLinearPattern } from './linear-pattern';
import { PatternCompileError } from './pattern-compile-error';

/** Fixed in CI so a merge is judged on the same cases; random locally (FC_SEED replays a run). */
function propertyParameters(numRuns: number): fc.Parameters<unknown> {
  const given = process.env.FC_SEED ?? (process.env.CI === 'true' ? '20261202' : undefined);
  return { numRuns, ...(given === undefined ? {} : { seed: Number(given) }) };
}

function compileError(run: () => unknown): PatternCompileError {
  try {
    run();
  } catch (error) {
    if (PatternCompileError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a PatternCompileError');
}

describe('compileLinearPattern, ECMAScript syntax (JSON Schema patterns)', () => {
  it('answers like RegExp with the u flag on ordinary schema patterns', () => {
    const cases: [string, string[]][] = [
      ['^[a-z][a-z0-9_-]{2,31}$', ['hello_world-42', 'Hello', 'ab', 'a'.repeat(32), 'a'.repeat(33)]],
      ['^\\d{4}-\\d{2}-\\d{2}$', ['2024-05-17', '2024-5-17', '２０２４-05-17']],
      ['^(https?|ftp)://[^\\s/$.?#].[^\\s]*$', ['https://example.com/a', 'ftp://x.y', 'https:// x', 'mailto:a@b']],
      ['^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', ['someone@example.com', 'a b@c.d', 'a@b']],
      ['a+', ['xxaxx', 'xxx']],
      ['^(?:a|b)*c?$', ['ababc', 'abca', '']],
      ['^[\\u{1F600}-\\u{1F64F}]+$', ['😀🙏', '😀x']],
      ['^\\uD83D\\uDE00$', ['😀', '\uD83D']],
      ['^[\\^\\-\\]\\\\]$', ['^', '-', ']', '\\', 'a']],
      ['^\\x41\\u0042\\u{43}\\cJ\\0$', ['ABC\n\0', 'ABC\n0']],
      ['^[\\b]$', ['\b', 'b']],
      ['\\bword\\b', ['a word here', 'swordfish']],
      ['^(?<year>\\d{4})$', ['2024', '202']],
      ['^.{2,3}?$', ['ab', 'abcd']],
      ['^[]$', ['', 'a']],
      ['^[^]$', ['\n', 'a', '']],
      ['^\\p{Lu}\\P{Lu}$', ['Ab', 'AB']],
      ['^\\p{Script=Greek}+$', ['αβγ', 'abc']],
      ['^\\p{General_Category=Decimal_Number}$', ['٣', 'x']],
      ['^\\p{ASCII}\\P{ASCII}$', ['aé', 'ab']],
      ['^[\\p{L}\\d]+$', ['abc123', 'abc-1']],
      ['^[^\\s\\d]+$', ['abc', 'a b', 'a1']],
      ['^[\\S]+$', ['abc', 'a\u00a0b']],
      ['^(a|)+$', ['aaa', '', 'b']],
      ['^$', ['', '\n']],
    ];
    for (const [pattern, texts] of cases) {
      const native = new RegExp(pattern, 'u');
      const linear = compileLinearPattern(pattern);
      for (const text of texts) expect([pattern, text, linear.test(text)]).toEqual([pattern, text, native.test(text)]);
    }
  });

  it('keeps ECMAScript meanings where RE2 differs: ".", "\\s", "$" before a final newline', () => {
    const dot = compileLinearPattern('^.$');
    expect(['\n', '\r', '\u2028', '\u2029'].map((text) => dot.test(text))).toEqual([false, false, false, false]);
    expect(dot.test('😀')).toBe(true); // one code point under the u flag
    const space = compileLinearPattern('^\\s$');
    expect(['\u00a0', '\u2003', '\ufeff', '\u000b', ' '].every((text) => space.test(text))).toBe(true);
    expect(compileLinearPattern('^\\S$').test('\u3000')).toBe(false);
    expect(compileLinearPattern('a$').test('a\n')).toBe(false);
  });

  it('refuses nothing RegExp would run, apart from lookaround and backreferences, and says which construct it is', () => {
    expect(compileError(() => compileLinearPattern('^(?=a)a$'))).toMatchObject({ code: 'PATTERN_INVALID', problem: 'unsupported' });
    expect(compileError(() => compileLinearPattern('^(?!a)')).detail).toMatch(/lookahead/);
    expect(compileError(() => compileLinearPattern('(?<=a)b')).detail).toMatch(/lookbehind/);
    expect(compileError(() => compileLinearPattern('(?<!a)b')).detail).toMatch(/lookbehind/);
    expect(compileError(() => compileLinearPattern('(a)\\1')).detail).toMatch(/backreference/);
    expect(compileError(() => compileLinearPattern('(?<x>a)\\k<x>')).detail).toMatch(/backreference/);
    expect(compileError(() => compileLinearPattern('a{1001}')).detail).toMatch(/repeat count/);
    const error = compileError(() => compileLinearPattern('^(?=a)'));
    expect(error.message).toMatch(/cannot run on the linear-time engine: it uses lookahead .*Rewrite it without lookahead/);
  });

  it('reports an invalid pattern as a syntax problem, with the parser message', () => {
    const error = compileError(() => compileLinearPattern('(', { toolName: 'mcp.s.t' }));
    expect(error).toMatchObject({ code: 'PATTERN_INVALID', problem: 'syntax', syntax: 'ecmascript', pattern: '(', toolName: 'mcp.s.t' });
    expect(error.message).toMatch(/is not valid ECMAScript syntax: .*Unterminated group/);
    expect(compileError(() => compileLinearPattern('\\p{NoSuchProperty}')).problem).toBe('syntax');
    expect(compileError(() => compileLinearPattern('a{2,1}')).problem).toBe('syntax');
    expect(() => compileLinearPattern(42 as unknown as string)).toThrow(TypeError);
  });

  it('matches the classic exponential attack in linear time, with the answer RegExp would give', () => {
    const pattern = compileLinearPattern('^(a+)+$');
    const attack = `${'a'.repeat(30)}!`;
    expect(pattern.test(attack)).toBe(false);
    expect(pattern.test('a'.repeat(30))).toBe(true);
    // A text long enough that even a quadratic engine would show: answered, not hung.
    expect(compileLinearPattern('^(a|a)*$').test(`${'a'.repeat(200_000)}!`)).toBe(false);
    expect(compileLinearPattern('(\\d+)*x').test('1'.repeat(200_000))).toBe(false);
  });

  it('gives every pattern a distinct text, which ajv uses as the key of its compiled patterns', () => {
    expect(String(compileLinearPattern('a+'))).not.toEqual(String(compileLinearPattern('b+')));
  });

  const atom = fc.oneof(
    fc.constantFrom('a', 'b', '.', '\\d', '\\s', '\\w', '\\S', '[ab]', '[^a]', '[a-c\\d]', '\\u00e9', 'é', '\\n', '[\\s\\S]', '[]', '[^]', '😀'),
    fc.constantFrom('(?:a|b)', '(a|)', '(?:^a|b$)', '^', '$', '\\p{L}', '\\bb'),
  );
  const quantified = fc.tuple(atom, fc.constantFrom('', '', '*', '+', '?', '{2}', '{1,3}', '{0,}', '*?'));
  const alternative = fc.array(quantified, { minLength: 0, maxLength: 4 }).map((items) =>
    // A quantifier on an assertion is a syntax error under the u flag.
    items.map(([item, quantifier]) => (item === '^' || item === '$' || item === '\\bb' ? item : item + quantifier)).join(''),
  );
  const pattern = fc
    .tuple(
      fc.constantFrom('', '^'),
      fc.array(alternative, { minLength: 1, maxLength: 3 }),
      fc.constantFrom('', '$'),
      fc.constantFrom('', '(', '(?:'),
      fc.constantFrom('', '*', '+', '?'),
    )
    .map(([start, alternatives, end, group, outer]) =>
      group === '' ? `${start}${alternatives.join('|')}${end}` : `${start}${group}${alternatives.join('|')})${outer}${end}`,
    );
  const character = fc.constantFrom('a', 'b', 'c', '1', ' ', '\n', '\r', 'é', '\u00a0', '😀', '\uD83D');

  it('answers like RegExp on generated patterns and texts (property)', () => {
    const text = fc.array(character, { maxLength: 8 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(pattern, fc.array(text, { minLength: 1, maxLength: 5 }), (source, texts) => {
        const native = new RegExp(source, 'u');
        const linear = compileLinearPattern(source);
        for (const sample of texts) {
          if (linear.test(sample) !== native.test(sample))
            throw new Error(`/${source}/u on ${JSON.stringify(sample)}: linear ${linear.test(sample)}, RegExp ${native.test(sample)}`);
        }
      }),
      propertyParameters(400),
    );
  });

  it('runs the package’s automaton and re2js to the same answers on long texts (property)', () => {
    const text = fc.array(character, { maxLength: 200 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(pattern, fc.array(text, { minLength: 1, maxLength: 5 }), (source, texts) => {
        const { automaton, re2js } = compileEcmaScriptEngines(source);
        if (automaton === undefined) return;
        for (const sample of texts) {
          if (automaton.test(sample) !== re2js.test(sample)) {
            throw new Error(`/${source}/u on ${JSON.stringify(sample)}: automaton ${automaton.test(sample)}, re2js ${re2js.test(sample)}`);
          }
        }
      }),
      propertyParameters(400),
    );
  });

  it('runs ordinary schema patterns on the automaton, and word boundaries and Unicode properties on re2js', () => {
    for (const source of ['^[a-z][a-z0-9_-]{2,31}$', '^\\d{4}-\\d{2}-\\d{2}$', '^(a+)+$', 'a|b', '^$', '[^]']) {
      expect([source, compileEcmaScriptEngines(source).automaton !== undefined]).toEqual([source, true]);
    }
    for (const source of ['\\bword\\b', '^\\p{L}+$', '[\\P{Lu}]']) {
      expect([source, compileEcmaScriptEngines(source).automaton === undefined]).toEqual([source, true]);
    }
  });

  it('leaves patterns too large for the automaton (many states, many character classes) to re2js, with the same answers', () => {
    const manyStates = '^a{1000}b{1000}c{1000}d{1000}e{100}$';
    const manyClasses = `^[${Array.from({ length: 300 }, (_, index) => String.fromCodePoint(0x100 + 2 * index)).join('')}]+$`;
    for (const source of [manyStates, manyClasses]) {
      expect(compileEcmaScriptEngines(source).automaton).toBeUndefined();
      const native = new RegExp(source, 'u');
      const linear = compileLinearPattern(source);
      for (const text of ['a'.repeat(1000) + 'b'.repeat(1000) + 'c'.repeat(1000) + 'd'.repeat(1000) + 'e'.repeat(100), 'ĀĂĄ', 'āĂ']) {
        expect(linear.test(text)).toBe(native.test(text));
      }
    }
  });

  it('answers on texts long enough to outgrow the automaton’s cache, with re2js’s answers', () => {
    // Many distinct DFA states: (a|b)*a(a|b){12}c has 2^13 of them, and a random text of a and b meets thousands.
    const source = '(a|b)*a(a|b){12}c';
    const { automaton, re2js } = compileEcmaScriptEngines(source);
    let text = '';
    let seed = 12345;
    for (let index = 0; index < 20_000; index++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      text += (seed >>> 16) & 1 ? 'a' : 'b';
    }
    for (const ending of ['', 'c', 'bbbbbbbbbbbbbc', 'abbbbbbbbbbbbc']) {
      expect([ending, automaton?.test(text + ending)]).toEqual([ending, re2js.test(text + ending)]);
    }
    expect(automaton?.test(`${text}abbbbbbbbbbbbc`)).toBe(true);
  });
});

describe('compileLinearPattern, RE2 syntax (patterns people and models write)', () => {
  it('reads RE2 syntax, with case folding on request', () => {
    const pattern = compileLinearPattern('(?i)todo|fixme', { syntax: 're2' });
    expect(pattern.test('// TODO: x')).toBe(true);
    expect(compileLinearPattern('\\bfoo\\b', { syntax: 're2', ignoreCase: true }).test('a FOO b')).toBe(true);
    expect(compileLinearPattern('\\pL+', { syntax: 're2' }).test('é')).toBe(true);
  });

  it('refuses lookaround and backreferences as unsupported, and other errors as syntax', () => {
    expect(compileError(() => compileLinearPattern('foo(?=bar)', { syntax: 're2' }))).toMatchObject({ problem: 'unsupported', syntax: 're2' });
    expect(compileError(() => compileLinearPattern('(?<!x)y', { syntax: 're2' })).detail).toMatch(/lookbehind/);
    expect(compileError(() => compileLinearPattern('(a)\\1', { syntax: 're2' })).detail).toMatch(/backreference/);
    const error = compileError(() => compileLinearPattern('a(b', { syntax: 're2' }));
    expect(error.problem).toBe('syntax');
    expect(error.message).toMatch(/is not valid RE2 syntax: missing closing \)/);
  });
});
