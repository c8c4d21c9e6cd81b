import { canonicalJson } from '../index';

describe('canonicalJson', () => {
  it('sorts keys at every level, so key order does not change the text', () => {
    const a = canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: 'x' } });
    const b = canonicalJson({ a: { c: 'x', d: [3, { y: null, z: true }] }, b: 1 });
    expect(a).toBe('{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}');
    expect(b).toBe(a);
  });

  it('keeps array order, and writes strings and numbers as JSON does', () => {
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
    expect(canonicalJson({ s: 'é\n"\u0001', n: 1e21, f: 0.1, z: -0 })).toBe('{"f":0.1,"n":1e+21,"s":"é\\n\\"\\u0001","z":0}');
  });

  it('sorts keys by UTF-16 code units, as RFC 8785 does', () => {
    expect(canonicalJson({ '\u00e9': 1, z: 2, A: 3, '\ud83d\ude00': 4, '\u20ac': 5 })).toBe('{"A":3,"z":2,"é":1,"€":5,"😀":4}');
  });

  it('follows JSON.stringify for undefined, functions and toJSON', () => {
    expect(canonicalJson({ a: undefined, b: () => 1, c: [undefined, () => 1], d: new Date(0) })).toBe('{"c":[null,null],"d":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it.each([
    ['a BigInt', { n: 1n }, /BigInt has no JSON form/],
    ['NaN', { n: Number.NaN }, /NaN has no JSON form/],
    ['Infinity', [Infinity], /Infinity has no JSON form/],
  ])('refuses %s', (_label, value, message) => {
    expect(() => canonicalJson(value)).toThrow(message);
  });

  it('refuses a cycle and a value nested too deep, instead of overflowing the stack', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/refers to itself/);
    let deep: unknown = 'leaf';
    for (let level = 0; level < 100_000; level++) deep = [deep];
    expect(() => canonicalJson(deep)).toThrow(/nested deeper than 512 levels/);
    // A value used twice without a cycle is fine.
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});
