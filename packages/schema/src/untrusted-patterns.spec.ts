import type { JsonSchema } from '@ca/domain';
import { PatternCompileError } from './pattern-compile-error';
import { SchemaCompileError } from './schema-compile-error';
import type { SchemaValidationResult } from './schema-issue';
import { createSchemaValidator } from './schema-validator';

/** The classic exponential case: RegExp needs about 37 s for `^(a+)+$` on 30 `a` and a `!`. */
const ATTACK_PATTERN = '^(a+)+$';
const ATTACK_TEXT = `${'a'.repeat(30)}!`;

function compileError(run: () => unknown): SchemaCompileError {
  try {
    run();
  } catch (error) {
    if (SchemaCompileError.isInstance(error)) return error;
    throw new Error(`expected a SchemaCompileError, got ${String(error)}`);
  }
  throw new Error('expected a SchemaCompileError, nothing was thrown');
}

function keywordsOf(result: SchemaValidationResult): string[] {
  return result.valid ? [] : result.issues.map((issue) => issue.keyword);
}

describe('untrusted schemas: patterns run on the linear-time engine', () => {
  const validator = createSchemaValidator({ formats: true });

  // The expected answers are RegExp's (which takes about 37 s to give each of them).
  it.each<[string, JsonSchema, unknown, boolean]>([
    ['pattern (ajv)', { type: 'string', pattern: ATTACK_PATTERN }, ATTACK_TEXT, false],
    ['patternProperties (ajv)', { type: 'object', patternProperties: { [ATTACK_PATTERN]: false } }, { [ATTACK_TEXT]: 1, aaa: 1 }, false],
    ['patternProperties, no key matching (ajv)', { type: 'object', patternProperties: { [ATTACK_PATTERN]: false } }, { [ATTACK_TEXT]: 1 }, true],
    ['pattern (interpreter, through unevaluatedProperties)', { properties: { a: { pattern: ATTACK_PATTERN } }, unevaluatedProperties: false }, { a: ATTACK_TEXT }, false],
    ['patternProperties (interpreter)', { patternProperties: { [ATTACK_PATTERN]: true }, unevaluatedProperties: false }, { [ATTACK_TEXT]: 1 }, false],
    ['propertyNames (draft-07)', { $schema: 'http://json-schema.org/draft-07/schema#', propertyNames: { pattern: ATTACK_PATTERN } }, { [ATTACK_TEXT]: 1 }, false],
  ])('checks a backtracking %s against the attack text by default (untrusted), with RegExp’s answer', (_, schema, value, valid) => {
    expect(validator.compile(schema).validate(value).valid).toBe(valid);
    // The same pattern still matches what it should.
    expect(validator.compile({ type: 'string', pattern: ATTACK_PATTERN }).validate('a'.repeat(30)).valid).toBe(true);
  });

  it('answers many attack values in a row, each in linear time', () => {
    const compiled = validator.compile({ type: 'array', items: { type: 'string', pattern: '^(a|aa)+$' } });
    const values = Array.from({ length: 200 }, (_, index) => `${'a'.repeat(1000 + index)}!`);
    expect(keywordsOf(compiled.validate(values)).filter((keyword) => keyword === 'pattern')).toHaveLength(200);
  });

  it('refuses a pattern the engine cannot run as a SchemaCompileError with reason unsupported-pattern, where it stands', () => {
    const error = compileError(() =>
      validator.compile({ type: 'object', properties: { code: { type: 'string', pattern: '^(?!admin$)[a-z]+$' } } }, { toolName: 'mcp.srv.lookup', direction: 'input' }),
    );
    expect(error).toMatchObject({ code: 'SCHEMA_INVALID', reason: 'unsupported-pattern', location: '#/properties/code/pattern', toolName: 'mcp.srv.lookup' });
    expect(error.message).toMatch(/^Tool 'mcp\.srv\.lookup' input: .*"\^\(\?!admin\$\)\[a-z\]\+\$" uses lookahead .*linear-time engine.*Rewrite the pattern without lookahead/);
    expect(PatternCompileError.isInstance(error.cause)).toBe(true);
    expect(compileError(() => validator.compile({ patternProperties: { '(a)\\1': true } }))).toMatchObject({
      reason: 'unsupported-pattern',
      location: '#/patternProperties/(a)\\1',
    });
    expect(compileError(() => validator.compile({ $defs: { x: { pattern: '(?<=a)b' } } }))).toMatchObject({ reason: 'unsupported-pattern', location: '#/$defs/x/pattern' });
    expect(compileError(() => validator.compile({ pattern: 'a{2000}' })).message).toMatch(/repeat count/);
  });

  it('keeps an invalid pattern an invalid-keyword error, as for trusted schemas', () => {
    expect(compileError(() => validator.compile({ pattern: '(' }))).toMatchObject({ reason: 'invalid-keyword', location: '#/pattern' });
  });

  it('checks the patterns of registered documents the schema refers to, and names where they stand', () => {
    const withRemote = createSchemaValidator({ remotes: { 'https://example.test/name.json': { type: 'string', pattern: '^(?=.)\\w+$' } } });
    const error = compileError(() => withRemote.compile({ properties: { name: { $ref: 'https://example.test/name.json' } } }));
    expect(error).toMatchObject({ reason: 'unsupported-pattern', location: 'https://example.test/name.json#/pattern' });
    // The same document is fine for a trusted schema.
    expect(withRemote.compile({ properties: { name: { $ref: 'https://example.test/name.json' } } }, { trust: 'trusted' }).validate({ name: 'x' }).valid).toBe(true);
  });

  it("accepts format 'regex' only for a pattern the linear-time engine runs", () => {
    const schema = { type: 'string', format: 'regex' };
    expect(validator.compile(schema).validate('^[a-z]+$').valid).toBe(true);
    expect(keywordsOf(validator.compile(schema).validate('(?=a)'))).toEqual(['format']);
    expect(keywordsOf(validator.compile(schema).validate('('))).toEqual(['format']);
    expect(validator.compile(schema, { trust: 'trusted' }).validate('(?=a)').valid).toBe(true);
    // Through the interpreter too.
    const interpreted = { properties: { p: schema }, unevaluatedProperties: false };
    expect(keywordsOf(validator.compile(interpreted).validate({ p: '(?<=a)' }))).toEqual(['format']);
    expect(validator.compile(interpreted, { trust: 'trusted' }).validate({ p: '(?<=a)' }).valid).toBe(true);
  });
});

describe('trusted schemas: patterns run on RegExp', () => {
  const validator = createSchemaValidator();

  it('accepts lookaround and backreferences, which RegExp runs', () => {
    const compiled = validator.compile({ type: 'string', pattern: '^(?!admin$)([a-z])\\1?[a-z]*$' }, { trust: 'trusted' });
    expect(compiled.validate('aab').valid).toBe(true);
    expect(compiled.validate('admin').valid).toBe(false);
    expect(validator.compile({ patternProperties: { '(?<=x)y': false } }, { trust: 'trusted' }).validate({ xy: 1 }).valid).toBe(false);
  });

  it('compiles one schema object apart for each trust, and caches each', () => {
    const schema = { type: 'string', pattern: '^[a-z]+$' };
    const trusted = validator.compile(schema, { trust: 'trusted' });
    const untrusted = validator.compile(schema);
    expect(trusted).not.toBe(untrusted);
    expect(validator.compile(schema, { trust: 'trusted' })).toBe(trusted);
    expect(validator.compile({ ...schema }, { trust: 'untrusted' })).toBe(untrusted);
    // A lookahead schema that failed untrusted still compiles trusted, and the other way round nothing leaks.
    const lookahead = { pattern: '(?=a)' };
    expect(() => validator.compile(lookahead)).toThrow(SchemaCompileError);
    expect(validator.compile(lookahead, { trust: 'trusted' }).validate('a').valid).toBe(true);
    expect(() => validator.compile(lookahead)).toThrow(SchemaCompileError);
  });

  it('refuses an unknown trust with a TypeError', () => {
    expect(() => validator.compile({}, { trust: 'maybe' as never })).toThrow(/Unknown schema trust 'maybe'/);
  });
});
