import { createSchemaValidator } from '@ca/schema';
import { repairArguments } from '../repair/repair-arguments';
import { toOpenAiStrictSchema } from './openai-strict-schema';

const validator = createSchemaValidator();

// The schema of vercel/ai's recorded o3 call (src/__fixtures__/openai-responses): three optional parameters.
const search = {
  type: 'object',
  properties: {
    query: { type: 'string', description: 'The text to search for.' },
    limit: { type: 'integer', minimum: 5, maximum: 100 },
    offset: { type: 'integer', minimum: 0 },
    year: { type: 'integer', description: 'YYYY' },
    sort: { type: 'string', enum: ['relevance', 'date'] },
    author: { type: 'object', properties: { name: { type: 'string', minLength: 1 } } },
  },
  required: ['query'],
};

describe('toOpenAiStrictSchema', () => {
  it('makes every property required, the optional ones nullable, every object closed, and records which', () => {
    const result = toOpenAiStrictSchema(search);
    expect(result.strict).toBe(true);
    if (!result.strict) return;
    expect(result.schema).toMatchObject({
      required: ['query', 'limit', 'offset', 'year', 'sort', 'author'],
      additionalProperties: false,
      properties: {
        query: { type: 'string' },
        limit: { type: ['integer', 'null'] },
        sort: { type: ['string', 'null'], enum: ['relevance', 'date', null] },
        author: { type: ['object', 'null'], required: ['name'], additionalProperties: false, properties: { name: { type: ['string', 'null'] } } },
      },
    });
    expect([...result.madeNullable].sort()).toEqual([
      '/properties/author',
      '/properties/author/properties/name',
      '/properties/limit',
      '/properties/offset',
      '/properties/sort',
      '/properties/year',
    ]);
    expect(result.removed).toEqual(['/properties/author/properties/name minLength']);
    expect(search.required).toEqual(['query']);
  });

  it('round trip: what a model sends under the strict schema, nulls taken back out, is the call the original schema means', () => {
    const result = toOpenAiStrictSchema(search);
    if (!result.strict) throw new Error('expected strict');
    const sent = { query: 'machine learning', limit: 10, offset: null, year: null, sort: null, author: { name: null } };
    expect(validator.validate(result.schema, sent).valid).toBe(true);
    expect(validator.validate(search, sent).valid).toBe(false);
    const back = repairArguments(sent, search, { rules: ['null-for-optional'] }).value;
    expect(back).toEqual({ query: 'machine learning', limit: 10, author: {} });
    expect(validator.validate(search, back).valid).toBe(true);
  });

  it('keeps null for a property that was already nullable', () => {
    const schema = { type: 'object', properties: { note: { type: ['string', 'null'] } } };
    const result = toOpenAiStrictSchema(schema);
    if (!result.strict) throw new Error('expected strict');
    expect(result.schema['properties']).toEqual({ note: { type: ['string', 'null'] } });
    expect(repairArguments({ note: null }, schema, { rules: ['null-for-optional'] }).value).toEqual({ note: null });
  });

  it('wraps a $ref or a union in anyOf with null, reads oneOf as anyOf, keeps $defs', () => {
    const schema = {
      type: 'object',
      $defs: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
      properties: { at: { $ref: '#/$defs/point' }, v: { oneOf: [{ type: 'string' }, { type: 'number' }] } },
    };
    const result = toOpenAiStrictSchema(schema);
    if (!result.strict) throw new Error('expected strict');
    expect(result.schema['properties']).toEqual({
      at: { anyOf: [{ $ref: '#/$defs/point' }, { type: 'null' }] },
      v: { anyOf: [{ anyOf: [{ type: 'string' }, { type: 'number' }] }, { type: 'null' }] },
    });
    expect(result.schema['$defs']).toEqual({ point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'], additionalProperties: false } });
  });

  it.each([
    ['a root that is not an object', { type: 'array', items: { type: 'string' } }, /root/],
    ['a map', { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } }, /map/],
    ['an open object', { type: 'object', properties: { meta: { type: 'object' } } }, /without declared properties/],
    ['patternProperties', { type: 'object', properties: { a: { type: 'string' } }, patternProperties: { '^x': {} } }, /patternProperties/],
    ['allOf', { type: 'object', properties: { a: { allOf: [{ type: 'string' }] } } }, /allOf/],
    ['a property without a type', { type: 'object', properties: { a: { description: 'anything' } } }, /no type/],
    ['an external $ref', { type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } }, /outside/],
  ])('sends %s as it is, strict: false, with the reason', (_label, schema, reason) => {
    const result = toOpenAiStrictSchema(schema);
    expect(result.strict).toBe(false);
    if (result.strict) return;
    expect(result.schema).toBe(schema);
    expect(result.reason).toMatch(reason);
  });
});
