import fc from 'fast-check';
import { jsonByteLength } from './json-size';

/** What a trace's resultSizeBytes has always been: the UTF-8 bytes of JSON.stringify, 0 when it writes nothing. */
function stringifiedBytes(value: unknown): number | undefined {
  const json = JSON.stringify(value);
  return json === undefined ? undefined : Buffer.byteLength(json, 'utf8');
}

describe('jsonByteLength: the UTF-8 bytes of JSON.stringify, without the text', () => {
  it.each([
    ['a plain object', { greeting: 'hi Ada', count: 3, ok: true, none: null }],
    ['an empty object and array', { a: {}, b: [] }],
    ['escapes', 'quote " backslash \\ newline \n tab \t bell \u0007 nul \u0000 del \u007f'],
    ['UTF-8 of two, three and four bytes', 'é € 𝄞 日本語'],
    ['lone surrogates, escaped by JSON.stringify', 'a\ud800b\udc00c\ud83d'],
    ['line and paragraph separators (not escaped)', '\u2028\u2029'],
    ['numbers', [0, -0, 1.5, -2e-7, 1e21, 123456789012345680000, Number.MAX_VALUE, Number.MIN_VALUE]],
    ['non-finite numbers (null)', [NaN, Infinity, -Infinity]],
    ['what an object leaves out', { a: undefined, b: () => 1, c: Symbol('s'), d: 1 }],
    ['what an array writes as null', [undefined, () => 1, Symbol('s'), 2]],
    ['a sparse array', [1, , 3]], // eslint-disable-line no-sparse-arrays
    ['integer-like keys first, in order', { b: 1, 2: 'two', a: 3, 1: 'one' }],
    ['keys that need escaping', { 'é"\n': 1, '\ud800': 2 }],
    ['an object without a prototype', Object.assign(Object.create(null), { x: 1 })],
    ['a Date (toJSON)', { at: new Date(0) }],
    ['a toJSON of its own', { value: { toJSON: (key: string) => `key ${key}` } }],
    ['a toJSON that is not a function (kept as a member)', { toJSON: 5, x: 'y' }],
    [
      'a class instance',
      {
        instance: new (class Point {
          x = 1;
          y = 2;
        })(),
      },
    ],
    ['boxed primitives', [new Number(1), new String('s'), new Boolean(false)]],
    ['a Map and a RegExp ({})', [new Map([[1, 2]]), /x/]],
    ['an array subclass', new (class Items extends Array<number> {})()],
    ['deep nesting beyond the walk', JSON.parse('['.repeat(200) + ']'.repeat(200))],
  ])('%s', (_name, value) => {
    expect(jsonByteLength(value)).toBe(stringifiedBytes(value));
  });

  it.each([
    ['undefined', undefined],
    ['a function', () => 1],
    ['a symbol', Symbol('s')],
  ])('%s at the top: undefined, as JSON.stringify', (_name, value) => {
    expect(jsonByteLength(value)).toBeUndefined();
  });

  it('throws what JSON.stringify throws: a cycle, a BigInt, a throwing getter or toJSON', () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle['self'] = cycle;
    expect(() => jsonByteLength(cycle)).toThrow(TypeError);
    expect(() => jsonByteLength({ big: 10n })).toThrow(TypeError);
    const hostile = Object.defineProperty({}, 'x', {
      enumerable: true,
      get() {
        throw new Error('getter failed');
      },
    });
    expect(() => jsonByteLength(hostile)).toThrow('getter failed');
    expect(() =>
      jsonByteLength({
        v: {
          toJSON: () => {
            throw new Error('toJSON failed');
          },
        },
      }),
    ).toThrow('toJSON failed');
  });

  it('follows a polluted Object.prototype.toJSON, as JSON.stringify does', () => {
    const prototype = Object.prototype as { toJSON?: () => string };
    prototype.toJSON = () => 'polluted';
    try {
      expect(jsonByteLength({ a: 1 })).toBe(stringifiedBytes({ a: 1 }));
      expect(jsonByteLength({ a: 1 })).toBe(10);
    } finally {
      delete prototype.toJSON;
    }
  });

  it('agrees with JSON.stringify on arbitrary JSON values, full Unicode strings included', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => jsonByteLength(value) === stringifiedBytes(value)),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (key, text) => {
        const value = { [key]: [text, { [text]: key }] };
        return jsonByteLength(value) === stringifiedBytes(value);
      }),
      { numRuns: 1_000 },
    );
    fc.assert(
      fc.property(
        fc.anything({
          maxDepth: 4,
          withBoxedValues: true,
          withMap: true,
          withSet: true,
          withObjectString: true,
          withNullPrototype: true,
          withSparseArray: true,
          withTypedArray: true,
          withDate: true,
        }),
        (value) => {
          let expected: number | undefined | 'threw';
          try {
            expected = stringifiedBytes(value);
          } catch {
            expected = 'threw';
          }
          let actual: number | undefined | 'threw';
          try {
            actual = jsonByteLength(value);
          } catch {
            actual = 'threw';
          }
          return actual === expected;
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
