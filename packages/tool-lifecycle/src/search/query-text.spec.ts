import { normalizeCapability } from '@ca/domain';
import type { ToolDescriptor } from '../tool';
import { conceptsOf, FRAMING_WORDS, isVariant } from './query-text';
import { termsOf } from './search-text';
import { DEFAULT_RANKING, LexicalIndex, type RankingSettings } from './tool-search-index';

function tool(name: string, description: string): ToolDescriptor {
  return { name, description, source: 'custom', capability: normalizeCapability({}) };
}

/** The names the lexical ranking returns, best first, with the default ranking or one feature changed. */
function ranked(tools: readonly ToolDescriptor[], query: string, change: Partial<RankingSettings> = {}): string[] {
  const index = new LexicalIndex({ ...DEFAULT_RANKING, ...change });
  index.update(tools);
  return index.rank(query, 10, undefined).map((hit) => hit.descriptor.name);
}

describe('words that frame a request', () => {
  it('are the asks, wishes and hedges of a request, stemmed as the index stems them', () => {
    for (const word of ['want', 'need', 'help', 'tell', 'know', 'give', 'wondering', 'hello', 'us']) expect(FRAMING_WORDS.has(termsOf(word)[0]!)).toBe(true);
  });

  it('leave out words that are as often what a request is about', () => {
    for (const word of ['interest', 'second', 'secondly', 'last', 'lastly', 'next', 'final', 'finally', 'task', 'function', 'get', 'find', 'list', 'show']) {
      expect(FRAMING_WORDS.has(termsOf(word)[0]!)).toBe(false);
    }
  });

  it('weigh less in a query than the words of what it asks, and still find a tool by themselves', () => {
    const tools = [tool('assistant.help', 'Help for when you need to know how.'), tool('weather.report', 'Weather report of a city, with the forecast.')];
    const query = 'I need your help, I want to know the weather forecast';
    expect(ranked(tools, query)[0]).toBe('weather.report');
    expect(ranked(tools, query, { framingWeight: 1 })[0]).toBe('assistant.help');
    expect(ranked(tools, 'help')).toEqual(['assistant.help']);
  });
});

describe('forms of a word the stemmer keeps apart', () => {
  it('are stems that start alike for five letters or more and differ by at most three', () => {
    expect(isVariant('discov', 'discoveri')).toBe(true);
    expect(isVariant('histori', 'histor')).toBe(true);
    expect(isVariant('calcul', 'calendar')).toBe(false);
    expect(isVariant('discov', 'discov')).toBe(false);
    expect(isVariant('map', 'maps')).toBe(false);
    expect(isVariant('inform', 'informationless')).toBe(false);
  });

  it('let "discovered" find a tool that speaks of a discovery', () => {
    const tools = [tool('science.credit', 'The scientist credited with a discovery.'), tool('math.sum', 'Add numbers.')];
    expect(ranked(tools, 'penicillin discovered by')).toEqual(['science.credit']);
    expect(ranked(tools, 'penicillin discovered by', { variantWeight: 0 })).toEqual([]);
  });
});

describe('what question words and values stand for', () => {
  it('reads question words', () => {
    expect(conceptsOf('When was the Treaty of Lisbon signed?')).toEqual(expect.arrayContaining(['date', 'time']));
    expect(conceptsOf('Where is the Louvre?')).toEqual(expect.arrayContaining(['locat', 'place', 'address']));
    expect(conceptsOf('How many moons does Mars have?')).toEqual(expect.arrayContaining(['number', 'count']));
    expect(conceptsOf('how far is it to Lyon')).toEqual(['distanc']);
  });

  it('reads values: money, times, dates, percentages, addresses, files', () => {
    expect(conceptsOf('Convert $20 to yen')).toEqual(expect.arrayContaining(['price', 'amount', 'cost', 'money']));
    expect(conceptsOf('a table for two at 7 pm')).toEqual(['time']);
    expect(conceptsOf('flights on 2024-05-01')).toEqual(['date']);
    expect(conceptsOf('arriving June 3rd')).toEqual(['date']);
    expect(conceptsOf('a rise of 5%')).toEqual(expect.arrayContaining(['percent', 'rate']));
    expect(conceptsOf('mail bob@example.com the notes')).toEqual(expect.arrayContaining(['email', 'address']));
    expect(conceptsOf('open report.pdf')).toEqual(['file']);
    expect(conceptsOf('ping 10.0.0.1')).toEqual(expect.arrayContaining(['ip', 'address']));
  });

  it('reads nothing into a plain request', () => {
    expect(conceptsOf('list the files of the folder')).toEqual([]);
    expect(conceptsOf('')).toEqual([]);
  });

  it('reads a hostile query of 10,000 characters to the end', () => {
    for (const hostile of ['a'.repeat(10_000), '1'.repeat(10_000), `${'a.'.repeat(5_000)}@`, `${'x'.repeat(9_990)}@b`, '1.'.repeat(5_000)]) {
      expect(Array.isArray(conceptsOf(hostile))).toBe(true);
    }
  });

  it('let "when" find the tool that gives a date', () => {
    const tools = [tool('history.event_date', 'Returns the date of a historical event.'), tool('math.sum', 'Add numbers.')];
    expect(ranked(tools, 'When was the Treaty of Lisbon signed?')).toEqual(['history.event_date']);
    expect(ranked(tools, 'When was the Treaty of Lisbon signed?', { conceptWeight: 0 })).toEqual([]);
  });
});

describe('numbers in names', () => {
  it('do not count against how much of a name the query covers (nobody asks for the 2 of Hotels_2_SearchHotel)', () => {
    const index = new LexicalIndex();
    index.update([tool('Hotels_2_SearchHotel', 'Look up rooms.'), tool('Hotels_SearchHotel', 'Look up rooms.'), tool('lodging.other', 'Look up rooms.')]);
    const [numbered, plain] = ['Hotels_2_SearchHotel', 'Hotels_SearchHotel'].map(
      (name) => index.rank('search hotel', 5, undefined).find((hit) => hit.descriptor.name === name)!.score,
    );
    // Only the longer name's length normalisation separates them (with the number counted: 0.88).
    expect(numbered! / plain!).toBeGreaterThan(0.95);
  });
});

describe('adjacent words', () => {
  const tools = [
    tool('market.quote_a', 'Returns the stock volume and its trading price.'),
    tool('market.quote_b', 'Returns the price of a stock and its trading volume.'),
  ];

  it('rank the tool where the query’s adjacent words stand side by side, in either order, above one with the same words apart', () => {
    expect(ranked(tools, 'stock price')[0]).toBe('market.quote_b');
    expect(ranked(tools, 'price of the stock')[0]).toBe('market.quote_b');
    expect(ranked(tools, 'stock price', { pairWeight: 0 })[0]).toBe('market.quote_a');
  });
});
