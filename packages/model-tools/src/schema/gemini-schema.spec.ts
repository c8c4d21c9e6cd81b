import { toGeminiSchema } from './gemini-schema';

describe('toGeminiSchema', () => {
  it('turns JSON Schema into the OpenAPI subset: nullable, anyOf, inlined $refs, string enums', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      properties: {
        location: { type: 'string', description: 'City and state' },
        unit: { $ref: '#/$defs/unit' },
        days: { type: ['integer', 'null'], exclusiveMinimum: 0 },
        mode: { const: 'fast' },
        level: { enum: [1, 2, 3] },
        either: { oneOf: [{ type: 'string' }, { type: 'number' }] },
      },
      required: ['location'],
      additionalProperties: false,
    };
    const { schema: converted, changed } = toGeminiSchema(schema);
    expect(converted).toEqual({
      type: 'object',
      properties: {
        location: { type: 'string', description: 'City and state' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        days: { type: 'integer', nullable: true },
        mode: { type: 'string', enum: ['fast'] },
        level: {},
        either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
      },
      required: ['location'],
    });
    expect(changed).toEqual(
      expect.arrayContaining([
        '/ $schema',
        '/ $defs',
        '/ additionalProperties',
        '/properties/unit $ref',
        '/properties/days exclusiveMinimum',
        '/properties/level enum',
      ]),
    );
    expect(schema.properties.days).toEqual({ type: ['integer', 'null'], exclusiveMinimum: 0 });
  });

  it('reads X | null as a nullable X and merges allOf of objects', () => {
    const { schema } = toGeminiSchema({
      type: 'object',
      properties: { note: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
      allOf: [{ properties: { extra: { type: 'boolean' } }, required: ['extra'] }],
      required: ['note'],
    });
    expect(schema).toEqual({
      type: 'object',
      properties: { note: { type: 'string', nullable: true }, extra: { type: 'boolean' } },
      required: ['note', 'extra'],
    });
  });

  it('stops at a recursive $ref instead of looping', () => {
    const tree = {
      type: 'object',
      $defs: { node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } } } },
      properties: { root: { $ref: '#/$defs/node' } },
    };
    const { schema } = toGeminiSchema(tree);
    expect(schema).toEqual({
      type: 'object',
      properties: {
        root: {
          type: 'object',
          properties: { children: { type: 'array', items: { type: 'object', description: '(recursive: the same shape as its parent)' } } },
        },
      },
    });
  });
});
