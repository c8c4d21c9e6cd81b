import { asClause, describeValue, messageOf } from './describe-value';

describe('describeValue', () => {
  it.each([
    [null, 'null'],
    [undefined, 'undefined'],
    ['abc', "'abc'"],
    [42, 'number 42'],
    [true, 'boolean true'],
    [[1], 'an array'],
    [{ secret: 'x' }, 'an object'],
    [() => 1, 'a function'],
  ])('describes %p as %s', (value, expected) => expect(describeValue(value)).toBe(expected));

  it('cuts long strings', () => {
    expect(describeValue('x'.repeat(100))).toBe(`'${'x'.repeat(60)}…'`);
  });
});

describe('messageOf', () => {
  it('reads errors, strings and JSON values', () => {
    expect(messageOf(new Error('boom'))).toBe('boom');
    expect(messageOf('text')).toBe('text');
    expect(messageOf({ a: 1 })).toBe('{"a":1}');
    expect(messageOf(undefined)).toBe('undefined');
  });

  it('never throws on hostile values', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(messageOf(cyclic)).toBe('[object Object]');
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        getPrototypeOf() {
          throw new Error('trap');
        },
      },
    );
    expect(typeof messageOf(hostile)).toBe('string');
  });
});

describe('asClause', () => {
  it('drops the final periods and white space, so a sentence built around it has one period', () => {
    expect(`${asClause('WRONGPASS invalid username-password pair or user is disabled.')}. Set REDIS_PASSWORD.`).toBe(
      'WRONGPASS invalid username-password pair or user is disabled. Set REDIS_PASSWORD.',
    );
    expect(asClause("set the sandbox to 'auto' or 'off'. \n")).toBe("set the sandbox to 'auto' or 'off'");
    expect(asClause('no period')).toBe('no period');
    expect(asClause(new Error('from an error.'))).toBe('from an error');
  });
});
