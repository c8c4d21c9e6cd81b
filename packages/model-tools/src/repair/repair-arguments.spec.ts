import fc from 'fast-check';
import { createSchemaValidator } from '@ca/schema';
import { repairArguments } from './repair-arguments';

const schema = {
  type: 'object',
  properties: {
    query: { type: 'string' },
    limit: { type: 'integer' },
    ratio: { type: 'number' },
    exact: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    ids: { type: 'array', items: { type: 'integer' } },
    filter: { type: 'object', properties: { year: { type: 'integer' }, lang: { type: 'string' } } },
    note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  },
  required: ['query'],
  additionalProperties: false,
};
const validator = createSchemaValidator();
const valid = (value: unknown): boolean => validator.validate(schema, value).valid;

describe('repairArguments: each rule where the schema makes it unambiguous', () => {
  it('null-for-optional: an optional property sent as null is left out', () => {
    const outcome = repairArguments({ query: 'q', limit: null, filter: { year: null, lang: 'en' } }, schema);
    expect(outcome.value).toEqual({ query: 'q', filter: { lang: 'en' } });
    expect(outcome.repairs).toEqual([
      { rule: 'null-for-optional', pointer: '/limit', from: 'null', to: 'absent' },
      { rule: 'null-for-optional', pointer: '/filter/year', from: 'null', to: 'absent' },
    ]);
    expect(valid(outcome.value)).toBe(true);
  });

  it('json-string: an object or array sent as JSON text is parsed, and repaired inside', () => {
    const outcome = repairArguments({ query: 'q', filter: '{"year":"2024"}', ids: '[1,2]' }, schema);
    expect(outcome.value).toEqual({ query: 'q', filter: { year: 2024 }, ids: [1, 2] });
    expect(outcome.repairs.map((repair) => `${repair.rule} ${repair.pointer} ${repair.from}→${repair.to}`)).toEqual([
      'json-string /filter string→object',
      'string-to-scalar /filter/year string→integer',
      'json-string /ids string→array',
    ]);
  });

  it('json-string at the root: arguments encoded twice', () => {
    const outcome = repairArguments(JSON.stringify({ query: 'q' }), schema);
    expect(outcome.value).toEqual({ query: 'q' });
    expect(outcome.repairs).toEqual([{ rule: 'json-string', pointer: '', from: 'string', to: 'object' }]);
  });

  it('single-to-array: one value where an array is wanted', () => {
    const outcome = repairArguments({ query: 'q', tags: 'urgent' }, schema);
    expect(outcome.value).toEqual({ query: 'q', tags: ['urgent'] });
    expect(outcome.repairs).toEqual([{ rule: 'single-to-array', pointer: '/tags', from: 'string', to: 'array' }]);
  });

  it('string-to-scalar: "42", "0.5", "true" where a number, an integer or a boolean is wanted', () => {
    const outcome = repairArguments({ query: 'q', limit: '42', ratio: '0.5', exact: 'true' }, schema);
    expect(outcome.value).toEqual({ query: 'q', limit: 42, ratio: 0.5, exact: true });
    expect(outcome.repairs).toHaveLength(3);
    expect(valid(outcome.value)).toBe(true);
  });

  it('follows local $refs, allOf and the non-null branch of X | null', () => {
    const withRefs = {
      type: 'object',
      $defs: { range: { type: 'object', properties: { from: { type: 'integer' } } } },
      properties: { range: { anyOf: [{ $ref: '#/$defs/range' }, { type: 'null' }] }, all: { allOf: [{ $ref: '#/$defs/range' }] } },
    };
    const outcome = repairArguments({ range: { from: '3' }, all: '{"from":"4"}' }, withRefs);
    expect(outcome.value).toEqual({ range: { from: 3 }, all: { from: 4 } });
  });

  it('never changes the input object, and returns it as is when nothing needed repair', () => {
    const input = Object.freeze({ query: 'q', limit: '5' });
    const outcome = repairArguments(input, schema);
    expect(outcome.value).toEqual({ query: 'q', limit: 5 });
    expect(input).toEqual({ query: 'q', limit: '5' });
    const untouched = { query: 'q', limit: 5 };
    expect(repairArguments(untouched, schema).value).toBe(untouched);
  });
});

describe('repairArguments: a wrong repair is impossible', () => {
  it('leaves a value alone when its type is allowed, even if another reading exists', () => {
    const loose = { type: 'object', properties: { a: { type: ['string', 'integer'] }, b: { type: ['string', 'array'] } } };
    const input = { a: '42', b: '["x"]' };
    expect(repairArguments(input, loose)).toEqual({ value: input, repairs: [], declined: [] });
  });

  it('null-for-optional: not for a required property, nor one that allows null, nor one whose schema says nothing', () => {
    const open = { type: 'object', properties: { a: {}, b: { type: ['string', 'null'] }, c: { type: 'string' } }, required: ['c'] };
    const input = { a: null, b: null, c: null };
    expect(repairArguments(input, open).value).toBe(input);
    expect(repairArguments(input, open).repairs).toEqual([]);
  });

  it('json-string: not when the parsed text has a type the schema does not allow, nor for malformed JSON', () => {
    expect(repairArguments({ query: 'q', filter: '["not","an","object"]' }, schema).repairs).toEqual([]);
    expect(repairArguments({ query: 'q', filter: '{"year": 2024' }, schema).repairs).toEqual([]);
  });

  it('ambiguous: text that is a JSON array of strings, or one string item, is declined and reported, not guessed', () => {
    const tags = repairArguments({ query: 'q', tags: '["a","b"]' }, schema);
    expect(tags.value).toEqual({ query: 'q', tags: '["a","b"]' });
    expect(tags.declined).toEqual([{ pointer: '/tags', rules: ['json-string', 'single-to-array'] }]);
    const anyItems = { type: 'object', properties: { list: { type: 'array' } } };
    const outcome = repairArguments({ list: '["a"]' }, anyItems);
    expect(outcome.value).toEqual({ list: '["a"]' });
    expect(outcome.repairs).toEqual([]);
    expect(outcome.declined).toEqual([{ pointer: '/list', rules: ['json-string', 'single-to-array'] }]);
  });

  it('single-to-array: not when the items would not take the value, nor for a tuple, nor for null', () => {
    const numbers = {
      type: 'object',
      properties: { n: { type: 'array', items: { type: 'integer' } }, t: { type: 'array', prefixItems: [{ type: 'string' }] } },
    };
    expect(repairArguments({ n: 'five', t: 'x' }, numbers).repairs).toEqual([]);
    expect(repairArguments({ n: null }, { ...numbers, required: ['n'] }).repairs).toEqual([]);
  });

  it('string-to-scalar: only exact JSON spellings, and integers only when whole and exact', () => {
    for (const text of [' 42', '42 ', '042', '+1', '0x10', '1e400', '4.2', '9007199254740993', 'TRUE', 'yes', '1', '']) {
      const outcome = repairArguments({ query: 'q', limit: text, exact: text }, schema);
      expect([text, outcome.repairs]).toEqual([text, text === '1' ? [{ rule: 'string-to-scalar', pointer: '/limit', from: 'string', to: 'integer' }] : []]);
    }
  });

  it('goes into no anyOf/oneOf/if branch that is not the non-null branch of X | null', () => {
    const union = {
      type: 'object',
      properties: {
        v: {
          anyOf: [
            { type: 'object', properties: { n: { type: 'integer' } } },
            { type: 'object', properties: { n: { type: 'string' } } },
          ],
        },
      },
    };
    expect(repairArguments({ v: { n: '1' } }, union).repairs).toEqual([]);
  });

  it('holds for any value: a repair only ever turns a place the schema refuses into one it accepts', () => {
    const leaf = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 12 }));
    const arbitrary = fc.record(
      {
        query: fc.string({ maxLength: 8 }),
        limit: fc.oneof(leaf, fc.integer().map(String)),
        exact: fc.oneof(leaf, fc.constantFrom('true', 'false')),
        tags: fc.oneof(
          leaf,
          fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
          fc.array(fc.string(), { maxLength: 2 }).map((list) => JSON.stringify(list)),
        ),
        filter: fc.oneof(
          leaf,
          fc.record({ year: fc.oneof(leaf, fc.integer().map(String)) }).map((record) => JSON.stringify(record)),
        ),
      },
      { requiredKeys: ['query'] },
    );
    fc.assert(
      fc.property(arbitrary, (input) => {
        const before = JSON.stringify(input);
        const outcome = repairArguments(input, schema);
        expect(JSON.stringify(input)).toBe(before);
        for (const repair of outcome.repairs) {
          // Each repaired place held a value of the type the rule names, and now holds one its schema allows.
          expect(['null-for-optional', 'json-string', 'single-to-array', 'string-to-scalar']).toContain(repair.rule);
        }
        if (valid(input)) expect(outcome.value).toBe(input);
        // Valid before means untouched; after, the validator decides (a repair never makes a valid value invalid).
        if (outcome.repairs.length > 0 && !valid(outcome.value)) {
          const stillWrong = validator.validate(schema, outcome.value);
          expect(stillWrong.valid).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });
});
