import Ajv2020 from 'ajv/dist/2020';
import Ajv from 'ajv';
import type { JsonSchema } from '@ca/domain';
import { SchemaCompileError } from './schema-compile-error';
import type { SchemaCompileErrorReason } from './schema-compile-error';
import { createSchemaValidator } from './schema-validator';
import type { SchemaValidationResult } from './schema-issue';

const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
const DRAFT_2019 = 'https://json-schema.org/draft/2019-09/schema';

function compileError(run: () => unknown): SchemaCompileError {
  try {
    run();
  } catch (error) {
    if (SchemaCompileError.isInstance(error)) return error;
    throw new Error(`expected a SchemaCompileError, got ${String(error)}`);
  }
  throw new Error('expected a SchemaCompileError, nothing was thrown');
}

function issuesOf(result: SchemaValidationResult) {
  if (result.valid) throw new Error('expected an invalid result');
  return result.issues;
}

function nestedArray(depth: number): unknown {
  let value: unknown = [];
  for (let level = 0; level < depth; level++) value = [value];
  return value;
}

describe('createSchemaValidator: dialects', () => {
  const validator = createSchemaValidator();
  const tuple = { items: [{ type: 'string' }], additionalItems: false };

  it('uses draft 2020-12 for a schema without $schema', () => {
    const compiled = validator.compile({ prefixItems: [{ type: 'string' }], items: false });
    expect(compiled.dialect).toBe('draft-2020-12');
    expect(compiled.validate(['a']).valid).toBe(true);
    expect(compiled.validate(['a', 'b']).valid).toBe(false);
  });

  it.each([DRAFT_07, 'http://json-schema.org/draft-07/schema'])('validates a schema declaring %s under draft-07', ($schema) => {
    const compiled = validator.compile({ $schema, ...tuple });
    expect(compiled.dialect).toBe('draft-07');
    expect(compiled.validate(['a']).valid).toBe(true);
    expect(compiled.validate([1]).valid).toBe(false);
    expect(compiled.validate(['a', 'b']).valid).toBe(false);
  });

  it('accepts the draft-07 shape that schema generators emit ($ref beside definitions)', () => {
    const schema = {
      $schema: DRAFT_07,
      $ref: '#/definitions/Input',
      definitions: { Input: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
    };
    expect(validator.validate(schema, { path: '/tmp' }).valid).toBe(true);
    expect(issuesOf(validator.validate(schema, {}))[0]).toMatchObject({ keyword: 'required', schemaPath: '#/definitions/Input/required' });
  });

  it('validates a 2019-09 schema under 2019-09', () => {
    const compiled = validator.compile({ $schema: DRAFT_2019, ...tuple, dependentRequired: { a: ['b'] } });
    expect(compiled.dialect).toBe('draft-2019-09');
    expect(compiled.validate(['a']).valid).toBe(true);
    expect(compiled.validate([1]).valid).toBe(false);
  });

  it('refuses draft-07 tuple syntax under 2020-12, where items must be one schema', () => {
    expect(compileError(() => validator.compile(tuple)).reason).toBe('invalid-keyword');
  });

  it('honours defaultDialect', () => {
    expect(createSchemaValidator({ defaultDialect: 'draft-07' }).compile(tuple).dialect).toBe('draft-07');
    expect(() => createSchemaValidator({ defaultDialect: 'draft-04' as never })).toThrow(TypeError);
  });

  it.each(['http://json-schema.org/draft-04/schema#', 'https://example.com/my-dialect', 42])('refuses $schema %p as an unknown dialect', ($schema) => {
    const error = compileError(() => validator.compile({ $schema, type: 'string' }, { toolName: 'echo', direction: 'input' }));
    expect(error.reason).toBe('unknown-dialect');
    expect(error.location).toBe('#/$schema');
    expect(error.message).toContain("Tool 'echo' input");
  });
});

describe('createSchemaValidator: compilation cache', () => {
  let compileSpy: jest.SpyInstance;

  beforeEach(() => {
    compileSpy = jest.spyOn(Ajv2020.prototype, 'compile');
  });

  afterEach(() => compileSpy.mockRestore());

  it('compiles a schema once, however often it is compiled or validated', () => {
    const validator = createSchemaValidator();
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    const compiled = validator.compile(schema);
    expect(validator.compile(schema)).toBe(compiled);
    for (let call = 0; call < 100; call++) {
      validator.validate(schema, { name: 'x' });
      compiled.validate({ name: 42 });
    }
    expect(compileSpy).toHaveBeenCalledTimes(1);
  });

  it('compiles structurally equal schemas once, whatever their key order', () => {
    const validator = createSchemaValidator();
    const first = validator.compile({ type: 'object', required: ['a'], properties: { a: { type: 'string', minLength: 1 } } });
    const second = validator.compile({ properties: { a: { minLength: 1, type: 'string' } }, required: ['a'], type: 'object' });
    expect(second).toBe(first);
    expect(compileSpy).toHaveBeenCalledTimes(1);
  });

  it('keeps separate caches per validator and does not cache failures', () => {
    const validator = createSchemaValidator();
    const bad = { type: 'strnig' };
    expect(() => validator.compile(bad)).toThrow();
    expect(() => validator.compile(bad)).toThrow();
    createSchemaValidator().compile({ type: 'string' });
    createSchemaValidator().compile({ type: 'string' });
    expect(compileSpy).toHaveBeenCalledTimes(2);
  });

  it('caches boolean schemas too', () => {
    const validator = createSchemaValidator();
    expect(validator.compile(true)).toBe(validator.compile(true));
    expect(validator.compile(false).validate(1).valid).toBe(false);
    expect(validator.compile(true).validate(undefined).valid).toBe(true);
  });
});

describe('createSchemaValidator: results', () => {
  const validator = createSchemaValidator();
  const schema = {
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'integer', minimum: 0 }, c: {}, tags: { type: 'array', items: { type: 'string' } } },
    required: ['a', 'c'],
    additionalProperties: false,
  } as const;

  it.each(['trusted', 'untrusted'] as const)('compares const and enum by own keys, so a hostile object cannot break the check (%s)', (trust) => {
    // fast-deep-equal, which ajv uses, calls an object's own toString/valueOf: these threw.
    const constant = validator.compile({ const: { a: 1 } }, { trust });
    expect(constant.validate({ a: 1 }).valid).toBe(true);
    for (const hostile of [{ toString: {} }, { valueOf: 1, a: 1 }, { toString: 'x', a: 1 }]) {
      const result = constant.validate(hostile);
      expect(result.valid).toBe(false);
      expect(result.valid ? [] : result.issues.map((issue) => issue.keyword)).toEqual(['const']);
    }
    const choice = validator.compile({ anyOf: [{ not: { type: 'null' } }, { const: { a: 1 } }] }, { trust });
    expect(choice.validate({ toString: {} }).valid).toBe(true);
    const listed = validator.compile({ enum: [{ a: 1 }, 2] }, { trust });
    expect(listed.validate({ toString: {} })).toMatchObject({ valid: false, issues: [{ keyword: 'enum' }] });
    expect(listed.validate(2).valid).toBe(true);
  });

  it('returns one shared frozen result for every valid value', () => {
    const first = validator.validate(schema, { a: 'x', c: 1 } as unknown);
    expect(first).toEqual({ valid: true });
    expect(Object.isFrozen(first)).toBe(true);
    expect(validator.validate({ type: 'number' }, 3)).toBe(first);
    expect(validator.validate({ unevaluatedProperties: false }, {})).toBe(first);
  });

  it('reports every issue with its JSON pointers, keyword and message', () => {
    const issues = issuesOf(validator.validate(schema, { a: 1, b: -1, tags: ['x', 2], c: 0, d: true }));
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ instancePath: '/a', schemaPath: '#/properties/a/type', keyword: 'type', message: '/a must be string' }),
        expect.objectContaining({ instancePath: '/b', keyword: 'minimum', message: '/b must be >= 0' }),
        expect.objectContaining({ instancePath: '/tags/1', schemaPath: '#/properties/tags/items/type', keyword: 'type' }),
        expect.objectContaining({
          instancePath: '',
          keyword: 'additionalProperties',
          params: { additionalProperty: 'd' },
          message: 'value must NOT have additional properties',
        }),
      ]),
    );
    expect(issues).toHaveLength(4);
    const missing = issuesOf(validator.validate(schema, {}));
    expect(missing.map((issue) => issue.message)).toEqual(["value must have required property 'a'", "value must have required property 'c'"]);
  });

  it('reports issues in the same shape from the fallback interpreter', () => {
    const issues = issuesOf(validator.validate({ properties: { a: { type: 'string' } }, required: ['b'], unevaluatedProperties: false }, { a: 1, z: 0 }));
    expect(issues).toEqual(
      expect.arrayContaining([
        { instancePath: '/a', schemaPath: '#/properties/a/type', keyword: 'type', message: '/a must be string', params: { type: 'string' } },
        expect.objectContaining({ instancePath: '', keyword: 'required', params: { missingProperty: 'b' } }),
        expect.objectContaining({ keyword: 'unevaluatedProperties', params: { unevaluatedProperty: 'z' } }),
      ]),
    );
  });

  it('tolerates unknown keywords: annotations, examples and vendor extensions', () => {
    const compiled = validator.compile({
      type: 'object',
      title: 'Echo',
      examples: [{ text: 'hi' }],
      'x-vendor': { deprecated: true },
      properties: { text: { type: 'string', 'x-order': 1, format: 'whatever' } },
    });
    expect(compiled.validate({ text: 'hi' }).valid).toBe(true);
  });
});

describe('createSchemaValidator: schemas that cannot be compiled', () => {
  const validator = createSchemaValidator();
  const cases: [string, unknown, SchemaCompileErrorReason, string][] = [
    ['a number', 42, 'not-a-schema', '#'],
    ['null', null, 'not-a-schema', '#'],
    ['an array', [{ type: 'string' }], 'not-a-schema', '#'],
    ['a misspelled type', { type: 'strnig' }, 'invalid-keyword', '#/type'],
    ['a negative minLength', { minLength: -1 }, 'invalid-keyword', '#/minLength'],
    ['a nested bad keyword', { properties: { a: { type: 'strnig' } } }, 'invalid-keyword', '#/properties/a/type'],
    ['an invalid pattern', { properties: { a: { pattern: '(' } } }, 'invalid-keyword', '#/properties/a/pattern'],
    ['a $ref to a missing definition', { properties: { a: { $ref: '#/$defs/missing' } } }, 'unresolved-ref', '#/properties/a/$ref'],
    ['a $ref to a missing anchor', { $ref: '#nowhere' }, 'unresolved-ref', '#/$ref'],
    ['a self $ref', { $ref: '#' }, 'recursion', '#/$ref'],
    ['a self-referencing definition', { $defs: { a: { $ref: '#/$defs/a' } } }, 'recursion', '#/$defs/a/$ref'],
    ['a cycle through allOf', { $defs: { a: { allOf: [{ $ref: '#/$defs/b' }] }, b: { $ref: '#/$defs/a' } } }, 'recursion', '#/$defs/b/$ref'],
    ['a remote $ref', { $ref: 'https://example.com/s.json' }, 'remote-ref', '#/$ref'],
    ['a remote $ref in draft-07', { $schema: DRAFT_07, items: { $ref: 'https://example.com/s.json#/a' } }, 'remote-ref', '#/items/$ref'],
  ];

  it.each(cases)('refuses %s', (_name, schema, reason, location) => {
    const error = compileError(() => validator.compile(schema as JsonSchema, { toolName: 'fs.read', direction: 'output' }));
    expect(error).toMatchObject({ code: 'SCHEMA_INVALID', reason, location, toolName: 'fs.read', direction: 'output' });
    expect(error.message).toContain("Tool 'fs.read' output");
    expect(error.message).toContain(location);
  });

  it('never fetches a remote schema', async () => {
    const fetchSpy = jest.spyOn(globalThis, 'fetch').mockRejectedValue(new Error('no network'));
    try {
      expect(compileError(() => validator.compile({ $ref: 'http://localhost:1234/integer.json' })).reason).toBe('remote-ref');
      expect(compileError(() => validator.compile({ $dynamicRef: 'https://example.com/x#node' })).reason).toBe('remote-ref');
      expect(fetchSpy).not.toHaveBeenCalled();
    } finally {
      fetchSpy.mockRestore();
    }
  });

  it('refuses a schema object that contains a cycle', () => {
    const schema: Record<string, unknown> = { type: 'object' };
    schema.properties = { self: schema };
    expect(compileError(() => validator.compile(schema)).reason).toBe('not-a-schema');
  });

  it('turns a schema nested beyond the stack into a recursion error, not a RangeError', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 20_000; level++) schema = { items: schema };
    const error = compileError(() => validator.compile(schema, { toolName: 'deep' }));
    expect(error.reason).toBe('recursion');
    expect(error.message).toContain("Tool 'deep'");
  });

  it('compiles the $dynamicRef schemas that overflow ajv through the interpreter', () => {
    const schema = {
      $id: 'https://test.json-schema.org/dynamic-ref-detached',
      $defs: {
        foo: { $dynamicAnchor: 'detached', type: 'integer' },
        bar: { $dynamicRef: '#detached' },
      },
      $ref: '#/$defs/bar',
    };
    const compiled = validator.compile(schema);
    expect(compiled.validate(1).valid).toBe(true);
    expect(issuesOf(compiled.validate('a'))[0]).toMatchObject({ keyword: 'type', schemaPath: '#/$defs/foo/type' });
  });

  it('accepts a schema whose recursion descends into the value', () => {
    const tree = { $defs: { node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } } } }, $ref: '#/$defs/node' };
    expect(validator.validate(tree, { children: [{ children: [] }] }).valid).toBe(true);
    const infiniteLoopLookalike = { allOf: [{ $ref: '#/$defs/int' }, { additionalProperties: { $ref: '#/$defs/int' } }], $defs: { int: { type: 'integer' } } };
    expect(validator.validate(infiniteLoopLookalike, 1).valid).toBe(true);
  });
});

describe('createSchemaValidator: values that are too deep or circular', () => {
  const validator = createSchemaValidator();
  const recursive = { $defs: { node: { type: 'array', items: { $ref: '#/$defs/node' } } }, $ref: '#/$defs/node' };
  const recursiveInterpreted = { ...recursive, unevaluatedItems: false };

  it.each([
    ['ajv', recursive],
    ['the interpreter', recursiveInterpreted],
  ])('returns a maxDepth issue through %s instead of overflowing the stack', (_engine, schema) => {
    const compiled = validator.compile(schema);
    expect(compiled.validate(nestedArray(10)).valid).toBe(true);
    const issues = issuesOf(compiled.validate(nestedArray(200_000)));
    expect(issues).toEqual([expect.objectContaining({ keyword: 'maxDepth', instancePath: '' })]);
    const circular: unknown[] = [];
    circular.push(circular);
    expect(issuesOf(compiled.validate(circular))[0].keyword).toBe('maxDepth');
  });

  it('validates a circular value against a schema that does not follow the cycle', () => {
    const value: Record<string, unknown> = { name: 'x' };
    value.self = value;
    expect(validator.validate({ type: 'object', properties: { name: { type: 'string' } } }, value).valid).toBe(true);
  });

  it.each([
    ['ajv', { uniqueItems: true }],
    ['the interpreter', { uniqueItems: true, unevaluatedItems: true }],
  ])('checks uniqueItems on a large array of objects in linear time through %s', (_engine, schema) => {
    // Every read of an item is counted: a pairwise comparison reads each item
    // once per other item (about n² / 2 reads), a linear check a few times in all.
    let reads = 0;
    const counted = <T extends object>(target: T): T =>
      new Proxy(target, {
        get: (object, key, receiver) => {
          reads++;
          return Reflect.get(object, key, receiver);
        },
        ownKeys: (object) => {
          reads++;
          return Reflect.ownKeys(object);
        },
        getOwnPropertyDescriptor: (object, key) => {
          reads++;
          return Reflect.getOwnPropertyDescriptor(object, key);
        },
      });
    const count = 2_000;
    const items = Array.from({ length: count }, (_, index) => counted({ index, tags: ['a', 'b'] }));
    expect(validator.validate(schema, items).valid).toBe(true);
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThanOrEqual(10 * count);
    reads = 0;
    expect(issuesOf(validator.validate(schema, [...items, counted({ tags: ['a', 'b'], index: 7 })]))[0]).toMatchObject({
      keyword: 'uniqueItems',
      params: { i: 7, j: count },
    });
    expect(reads).toBeLessThanOrEqual(10 * (count + 1));
  });

  it('validates through a detached validate function', () => {
    const { validate } = validator.compile({ type: 'string' });
    const { validate: interpreted } = validator.compile({ type: 'string', unevaluatedItems: false });
    expect(validate('x').valid).toBe(true);
    expect(interpreted(1).valid).toBe(false);
  });

  it('never throws for odd values', () => {
    const compiled = validator.compile({ type: 'object', properties: { a: { uniqueItems: true, const: 1 } } });
    for (const value of [undefined, Symbol('x'), () => 1, 10n, new Map(), Object.create(null), { a: [{}, {}] }]) {
      expect(() => compiled.validate(value)).not.toThrow();
    }
  });
});

describe('createSchemaValidator: untrusted schemas and values', () => {
  it('treats __proto__ and constructor as ordinary property names, without pollution', () => {
    const validator = createSchemaValidator();
    const schema = JSON.parse('{"properties":{"__proto__":{"type":"number"},"constructor":{"type":"number"}},"required":["__proto__"]}');
    expect(validator.validate(schema, JSON.parse('{"__proto__": 1}')).valid).toBe(true);
    expect(validator.validate(schema, JSON.parse('{"__proto__": {"polluted": true}}')).valid).toBe(false);
    expect(validator.validate(schema, {}).valid).toBe(false);
    expect(validator.validate({ required: ['toString'] }, {}).valid).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('keeps two schemas with the same $id apart', () => {
    const validator = createSchemaValidator();
    const first = { $id: 'https://example.com/tool.json', $defs: { v: { type: 'string' } }, $ref: '#/$defs/v' };
    const second = { $id: 'https://example.com/tool.json', $defs: { v: { type: 'number' } }, $ref: '#/$defs/v' };
    expect(validator.validate(first, 'a').valid).toBe(true);
    expect(validator.validate(second, 'a').valid).toBe(false);
    expect(validator.validate(second, 1).valid).toBe(true);
  });
});

describe('createSchemaValidator: formats', () => {
  const email = { type: 'string', format: 'email' };
  const emailInterpreted = { ...email, unevaluatedProperties: false };

  it('treats format as an annotation by default', () => {
    const validator = createSchemaValidator();
    expect(validator.validate(email, 'not an email').valid).toBe(true);
    expect(validator.validate(emailInterpreted, 'not an email').valid).toBe(true);
  });

  it('asserts format when asked, through ajv and through the interpreter', () => {
    const validator = createSchemaValidator({ formats: true });
    expect(validator.validate(email, 'a@example.com').valid).toBe(true);
    expect(issuesOf(validator.validate(email, 'not an email'))[0]).toMatchObject({ keyword: 'format' });
    expect(validator.validate(emailInterpreted, 'a@example.com').valid).toBe(true);
    expect(issuesOf(validator.validate(emailInterpreted, 'not an email'))[0]).toMatchObject({ keyword: 'format' });
    expect(validator.validate({ $schema: DRAFT_07, format: 'date' }, '2024-13-45').valid).toBe(false);
    expect(validator.validate({ format: 'no-such-format' }, 'x').valid).toBe(true);
  });
});

describe('createSchemaValidator: registered schemas', () => {
  const integer = { $id: 'https://schemas.example.com/integer.json', type: 'integer' };

  it('resolves $ref to a schema added by its $id or by an explicit id', () => {
    const validator = createSchemaValidator();
    validator.addSchema(integer);
    validator.addSchema({ type: 'string' }, 'https://schemas.example.com/string.json');
    const schema = {
      properties: { n: { $ref: 'https://schemas.example.com/integer.json' }, s: { $ref: 'https://schemas.example.com/string.json' } },
    };
    expect(validator.validate(schema, { n: 1, s: 'x' }).valid).toBe(true);
    expect(validator.validate(schema, { n: 1.5, s: 2 }).valid).toBe(false);
  });

  it('loads remotes given at creation, also for draft-07 schemas', () => {
    const validator = createSchemaValidator({ remotes: { 'http://localhost:1234/integer.json': { type: 'integer' } } });
    expect(validator.validate({ $ref: 'http://localhost:1234/integer.json' }, 2).valid).toBe(true);
    expect(validator.validate({ $schema: DRAFT_07, items: { $ref: 'http://localhost:1234/integer.json' } }, ['x']).valid).toBe(false);
  });

  it('accepts the same schema twice but refuses another one under a taken URI', () => {
    const validator = createSchemaValidator();
    validator.addSchema(integer);
    validator.addSchema({ ...integer });
    expect(compileError(() => validator.addSchema({ ...integer, type: 'string' })).reason).toBe('other');
    expect(compileError(() => validator.addSchema({ type: 'string' })).message).toContain('needs an absolute URI');
    expect(compileError(() => validator.addSchema({ type: 'strnig' }, 'https://x.example/s')).reason).toBe('invalid-keyword');
  });

  it('resolves references to the official metaschemas without fetching them', () => {
    const validator = createSchemaValidator();
    const schema = { $ref: 'https://json-schema.org/draft/2020-12/schema' };
    expect(validator.validate(schema, { type: 'string' }).valid).toBe(true);
    expect(validator.validate(schema, { type: 'strnig' }).valid).toBe(false);
  });
});

describe('createSchemaValidator: engines', () => {
  it('uses the draft-07 ajv class for draft-07 schemas', () => {
    const spy = jest.spyOn(Ajv.prototype, 'compile');
    try {
      createSchemaValidator().compile({ $schema: DRAFT_07, type: 'string' });
      expect(spy).toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });
});

describe('multipleOf on large numbers', () => {
  it('accepts 5e20 as a multiple of 0.5 and refuses a quotient that overflows, on every dialect', () => {
    const validator = createSchemaValidator();
    for (const $schema of [
      'https://json-schema.org/draft/2020-12/schema',
      'https://json-schema.org/draft/2019-09/schema',
      'http://json-schema.org/draft-07/schema#',
    ]) {
      const half = validator.compile({ $schema, type: 'number', multipleOf: 0.5 });
      expect(half.validate(5e20).valid).toBe(true);
      expect(half.validate(0.75).valid).toBe(false);
      const odd = validator.compile({ $schema, multipleOf: 0.123456789 });
      expect(odd.validate(1e308).valid).toBe(false);
      expect(validator.compile({ $schema, multipleOf: 0.01 }).validate(0.07).valid).toBe(true);
    }
    const result = validator.compile({ multipleOf: 3 }).validate(7);
    expect(result.valid).toBe(false);
    expect(!result.valid && result.issues[0]).toMatchObject({ keyword: 'multipleOf', instancePath: '', message: 'value must be multiple of 3' });
  });
});
