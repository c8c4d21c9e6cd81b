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
    [
      'pattern (interpreter, through unevaluatedProperties)',
      { properties: { a: { pattern: ATTACK_PATTERN } }, unevaluatedProperties: false },
      { a: ATTACK_TEXT },
      false,
    ],
    ['patternProperties (interpreter)', { patternProperties: { [ATTACK_PATTERN]: true }, unevaluatedProperties: false }, { [ATTACK_TEXT]: 1 }, false],
    [
      'propertyNames (draft-07)',
      { $schema: 'http://json-schema.org/draft-07/schema#', propertyNames: { pattern: ATTACK_PATTERN } },
      { [ATTACK_TEXT]: 1 },
      false,
    ],
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
      validator.compile(
        { type: 'object', properties: { code: { type: 'string', pattern: '^(?!admin$)[a-z]+$' } } },
        { toolName: 'mcp.srv.lookup', direction: 'input' },
      ),
    );
    expect(error).toMatchObject({ code: 'SCHEMA_INVALID', reason: 'unsupported-pattern', location: '#/properties/code/pattern', toolName: 'mcp.srv.lookup' });
    expect(error.message).toMatch(
      /^Tool 'mcp\.srv\.lookup' input: .*"\^\(\?!admin\$\)\[a-z\]\+\$" uses lookahead .*linear-time engine.*Rewrite the pattern without lookahead/,
    );
    expect(PatternCompileError.isInstance(error.cause)).toBe(true);
    expect(compileError(() => validator.compile({ patternProperties: { '(a)\\1': true } }))).toMatchObject({
      reason: 'unsupported-pattern',
      location: '#/patternProperties/(a)\\1',
    });
    expect(compileError(() => validator.compile({ $defs: { x: { pattern: '(?<=a)b' } } }))).toMatchObject({
      reason: 'unsupported-pattern',
      location: '#/$defs/x/pattern',
    });
    expect(compileError(() => validator.compile({ pattern: 'a{2000}' })).message).toMatch(/repeat count/);
  });

  it('compiles the patterns schema generators emit (zod 4: e-mail, date-time, UUID) and answers like RegExp', () => {
    const patterns: [string, string[]][] = [
      [
        "^(?:[A-Za-z0-9_'+\\-]+\\.)*[A-Za-z0-9_'+\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$",
        ['someone@example.com', 'first.last+tag@sub.example.org', 'a..b@example.com', '@example.com', `${'a.'.repeat(40)}@`],
      ],
      [
        '^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z))$',
        ['2024-02-29T12:00:00Z', '2023-02-29T12:00:00Z', '2024-04-31T00:00:00.5Z', '2024-12-31T23:59:59.123Z'],
      ],
      [
        '^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$',
        ['123e4567-e89b-12d3-a456-426614174000', '123e4567-e89b-92d3-a456-426614174000', '00000000-0000-0000-0000-000000000000'],
      ],
    ];
    for (const [pattern, values] of patterns) {
      const untrusted = validator.compile({ type: 'string', pattern });
      const trusted = validator.compile({ type: 'string', pattern }, { trust: 'trusted' });
      for (const value of values) expect([value, untrusted.validate(value).valid]).toEqual([value, trusted.validate(value).valid]);
    }
    // zod 4's emoji pattern starts with a lookahead: refused, with the reason.
    const emoji = '^(?=[\\s\\S]*[\\p{Extended_Pictographic}\\p{Regional_Indicator}\\u20E3])[\\p{Extended_Pictographic}\\p{Emoji_Component}]+$';
    expect(compileError(() => validator.compile({ type: 'string', pattern: emoji }))).toMatchObject({ reason: 'unsupported-pattern' });
  });

  it('keeps an invalid pattern an invalid-keyword error, as for trusted schemas', () => {
    expect(compileError(() => validator.compile({ pattern: '(' }))).toMatchObject({ reason: 'invalid-keyword', location: '#/pattern' });
  });

  it('checks the patterns of registered documents the schema refers to, and names where they stand', () => {
    const withRemote = createSchemaValidator({ remotes: { 'https://example.test/name.json': { type: 'string', pattern: '^(?=.)\\w+$' } } });
    const error = compileError(() => withRemote.compile({ properties: { name: { $ref: 'https://example.test/name.json' } } }));
    expect(error).toMatchObject({ reason: 'unsupported-pattern', location: 'https://example.test/name.json#/pattern' });
    // The same document is fine for a trusted schema.
    expect(withRemote.compile({ properties: { name: { $ref: 'https://example.test/name.json' } } }, { trust: 'trusted' }).validate({ name: 'x' }).valid).toBe(
      true,
    );
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
