import { parseEcmaScriptPattern } from './ecmascript-pattern';
import { compileEcmaScriptEngines } from './linear-pattern';
import { buildPatternAutomaton } from './pattern-automaton';

/** A fallback that must not be asked: the automaton answers these texts itself. */
const NO_FALLBACK = (text: string): boolean => {
  throw new Error(`the automaton gave up on a text of ${text.length} characters`);
};

/** A text of `length` random 'a' and 'b' (a fixed generator, so every run sees the same text). */
function randomText(length: number): string {
  let seed = 12345;
  let text = '';
  for (let index = 0; index < length; index++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    text += (seed >>> 16) & 1 ? 'a' : 'b';
  }
  return text;
}

describe('the pattern automaton', () => {
  // (a|b)*a(a|b){10}c has 2^11 DFA states: a random text visits more than the 1,000 the cache keeps.
  const source = '(a|b)*a(a|b){10}c';

  it('drops its cache when it grows too large and still answers like RegExp', () => {
    const automaton = buildPatternAutomaton(parseEcmaScriptPattern(source), NO_FALLBACK);
    const native = new RegExp(source, 'u');
    const text = randomText(1_800);
    for (const ending of ['', 'c', 'bbbbbbbbbbc', 'abbbbbbbbbbc']) {
      expect([ending, automaton?.test(text + ending)]).toEqual([ending, native.test(text + ending)]);
    }
    // After the resets, state numbers are reused: answers on other texts must not follow a stale transition.
    for (let shift = 0; shift < 40; shift++) {
      const sample = `${randomText(1_800 + shift).slice(shift)}${shift % 2 === 0 ? 'c' : 'ac'}`;
      expect([shift, automaton?.test(sample)]).toEqual([shift, native.test(sample)]);
    }
    for (const short of ['abbbbbbbbbbc', 'bbbbbbbbbbbc', 'c', '']) expect([short, automaton?.test(short)]).toEqual([short, native.test(short)]);
  });

  it('gives a text up to the fallback when it would build too many states, and after three such texts stays there', () => {
    const source14 = '(a|b)*a(a|b){14}c';
    const { re2js } = compileEcmaScriptEngines(source14);
    const asked: number[] = [];
    const automaton = buildPatternAutomaton(parseEcmaScriptPattern(source14), (text) => {
      asked.push(text.length);
      return re2js.test(text);
    });
    const text = `${randomText(40_000)}c`;
    for (let call = 0; call < 5; call++) expect(automaton?.test(text)).toBe(re2js.test(text));
    expect(asked).toEqual([40_001, 40_001, 40_001, 40_001, 40_001]);
    // From now on even a short text goes to the fallback.
    expect(automaton?.test('abbbbbbbbbbbbbbc')).toBe(true);
    expect(asked).toHaveLength(6);
  });

  it('matches code points, as the u flag does: a surrogate pair is one character, a lone surrogate another', () => {
    const automaton = buildPatternAutomaton(parseEcmaScriptPattern('^.$'), NO_FALLBACK);
    expect(['😀', '\uD83D', '\uDE00', 'ab', ''].map((text) => automaton?.test(text))).toEqual([true, true, true, false, false]);
  });

  it('keeps ^ to the start and $ to the end, wherever they stand in the pattern', () => {
    const cases: [string, string[]][] = [
      ['a^b', ['ab', 'a^b']],
      ['a$|^b', ['a', 'xa', 'ax', 'b', 'xb']],
      ['$^', ['', 'a']],
      ['(?:a|^)b', ['b', 'ab', 'cb']],
      ['x(?:$|y)', ['x', 'xy', 'xz']],
    ];
    for (const [pattern, texts] of cases) {
      const automaton = buildPatternAutomaton(parseEcmaScriptPattern(pattern), NO_FALLBACK);
      const native = new RegExp(pattern, 'u');
      for (const text of texts) expect([pattern, text, automaton?.test(text)]).toEqual([pattern, text, native.test(text)]);
    }
  });
});
