import fc from 'fast-check';
import { stemEnglish } from './english-stemmer';
import { STOP_WORDS, relatedTerms, termsOf } from './search-text';

describe('stemEnglish (Porter2)', () => {
  it.each([
    ['connections', 'connect'],
    ['connected', 'connect'],
    ['connecting', 'connect'],
    ['calculation', 'calcul'],
    ['calculate', 'calcul'],
    ['calculating', 'calcul'],
    ['consignment', 'consign'],
    ['generously', 'generous'],
    ['knightly', 'knight'],
    ['skies', 'sky'],
    ['dying', 'die'],
    ['cries', 'cri'],
    ['ties', 'tie'],
    ['happy', 'happi'],
    ['running', 'run'],
    ['hopping', 'hop'],
    ['hoped', 'hope'],
    ['caresses', 'caress'],
    ['gas', 'gas'],
    ['gaps', 'gap'],
    ['news', 'news'],
    ['succeeding', 'succeed'],
    ['directories', 'directori'],
    ['directory', 'directori'],
  ])('%s → %s', (word, stem) => {
    expect(stemEnglish(word)).toBe(stem);
  });

  it('leaves words of other characters and short words as they are', () => {
    expect(stemEnglish('café')).toBe('café');
    expect(stemEnglish('ipv4')).toBe('ipv4');
    expect(stemEnglish('is')).toBe('is');
  });
});

describe('termsOf', () => {
  it('splits identifiers at dots, underscores, hyphens, camelCase and digits', () => {
    expect(termsOf('getWeatherForecast')).toEqual(['get', 'weather', 'forecast']);
    expect(termsOf('mcp.filesystem.read_text_file')).toEqual(['mcp', 'filesystem', 'read', 'text', 'file']);
    expect(termsOf('toggle-simulated-logging')).toEqual(['toggl', 'simul', 'log']);
    expect(termsOf('HTMLParser')).toEqual(['html', 'parser']);
    expect(termsOf('ipv4Address')).toEqual(['ipv', '4', 'address']);
  });

  it('drops stop words and stems the rest', () => {
    expect(termsOf('Could you please list all of the files in my folders?')).toEqual(['list', 'file', 'folder']);
    expect(STOP_WORDS.has('get')).toBe(false);
  });

  it('folds accents and case, and pairs the letters of scripts written without spaces', () => {
    expect(termsOf('Café CRÈME')).toEqual(['cafe', 'creme']);
    expect(termsOf('天气预报')).toEqual(['天气', '气预', '预报']);
    expect(termsOf('查询 weather')).toEqual(['查询', 'weather']);
  });

  it('reads at most the characters and terms it is given', () => {
    expect(termsOf('alpha beta gamma', 10)).toEqual(['alpha', 'beta']);
    expect(termsOf('alpha beta gamma delta', 1_000, 3)).toEqual(['alpha', 'beta', 'gamma']);
    const huge = 'word '.repeat(1_000_000);
    expect(termsOf(huge, 10_000, 64)).toHaveLength(64);
  });

  it('splits ASCII text the same on its fast path as on the general one (property)', () => {
    // A character beyond ASCII (here a lone é, its own word) sends the whole text down the general path.
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'abcXYZ09 _.-\'"éA'.split('')), maxLength: 60 }), (text) => {
        const ascii = text.replace(/é/g, ' ');
        expect(termsOf(`${ascii} é`)).toEqual([...termsOf(ascii), 'e']);
      }),
    );
  });

  it('relates words through the generic synonyms, stemmed, both ways within a group and one way from narrower words', () => {
    expect(relatedTerms('delet')).toEqual(expect.arrayContaining(['remov', 'eras']));
    expect(relatedTerms('remov')).toContain('delet');
    expect(relatedTerms('euro')).toContain('currenc');
    expect(relatedTerms('currenc')).not.toContain('euro');
    expect(relatedTerms('zzzz')).toEqual([]);
  });
});
