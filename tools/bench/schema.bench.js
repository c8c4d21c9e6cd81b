'use strict';
// Benchmark of @ca/schema: CompiledSchema.validate against the same schema
// compiled by ajv (Ajv2020, same options) and called directly, on a small
// valid object. Rounds are interleaved and the median ns/op of each side is
// compared; the service may add at most 20% (ratio <= 1.20).
//
// Second row: a pattern-heavy schema compiled as untrusted (its patterns run
// on the linear-time engine) against the same schema compiled by ajv with
// JavaScript's RegExp, called directly; the aim is at most 1.5x.
//
// Usage: node tools/bench/schema.bench.js  (needs `nx run @ca/schema:build` first)

const path = require('node:path');
const { scaled } = require('./harness');

const TARGET_RATIO = 1.2;
const PATTERN_TARGET_RATIO = 1.5;
const ROUNDS = scaled(15, 2);
const ITERATIONS = scaled(200_000, 30);

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1 },
    count: { type: 'integer', minimum: 0 },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['name', 'count'],
  additionalProperties: false,
};
const values = [
  { name: 'a', count: 3, tags: ['x'] },
  { name: 'bb', count: 0, tags: [] },
  { name: 'ccc', count: 12, tags: ['x', 'y'] },
];

// What tool schemas from MCP servers look like when they constrain strings: anchored identifiers, dates, codes, URLs, emails.
const patternSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: '^[a-z][a-z0-9_-]{2,31}$' },
    date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    email: { type: 'string', pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$' },
    url: { type: 'string', pattern: '^https?://[^\\s/$.?#][^\\s]*$' },
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+(?:-[0-9A-Za-z.-]+)?$' },
  },
  patternProperties: { '^x-[a-z]+$': { type: 'string' } },
  required: ['id', 'date'],
  additionalProperties: false,
};
const patternValues = [
  {
    id: 'order_1234',
    date: '2024-05-17',
    currency: 'EUR',
    email: 'someone@example.com',
    url: 'https://example.com/a/b?c=1',
    version: '1.2.3',
    'x-trace': 'abc',
  },
  { id: 'customer-42', date: '1999-12-31', currency: 'USD', email: 'a.b@c.io', url: 'http://localhost/x', version: '10.0.0-rc.1' },
  { id: 'abc', date: '2000-01-01', currency: 'JPY', email: 'z@z.zz', url: 'https://a.b', version: '0.0.1', 'x-tenant': 'acme' },
];

function loadSubjects() {
  let service;
  try {
    service = require(path.join(__dirname, '../../packages/schema/dist/index.js'));
  } catch (error) {
    throw new Error(`Build @ca/schema first (npx nx run @ca/schema:build): ${error.message}`);
  }
  const Ajv2020 = require('ajv/dist/2020').default;
  const ajv = new Ajv2020({ allErrors: true, strict: false, ownProperties: true, validateFormats: false, logger: false });
  const direct = ajv.compile(schema);
  const validator = service.createSchemaValidator();
  const compiled = validator.compile(schema, { trust: 'trusted' });
  for (const value of values) {
    if (direct(value) !== true || compiled.validate(value).valid !== true) throw new Error('benchmark values must be valid');
  }
  const directPatterns = ajv.compile(patternSchema);
  const untrusted = validator.compile(patternSchema, { trust: 'untrusted' });
  for (const value of patternValues) {
    if (directPatterns(value) !== true || untrusted.validate(value).valid !== true) throw new Error('pattern benchmark values must be valid');
  }
  for (const invalid of [
    { ...patternValues[0], id: 'A' },
    { ...patternValues[0], email: 'a b@c.d' },
  ]) {
    if (directPatterns(invalid) !== false || untrusted.validate(invalid).valid !== false)
      throw new Error('pattern benchmark schemas must refuse what RegExp refuses');
  }
  return { direct, compiled, directPatterns, untrusted };
}

function timeRound(check, inputs = values) {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let index = 0; index < ITERATIONS; index++) {
    if (check(inputs[index % inputs.length])) sink++;
  }
  const elapsed = Number(process.hrtime.bigint() - start);
  if (sink !== ITERATIONS) throw new Error('a value failed validation during the benchmark');
  return elapsed / ITERATIONS;
}

function median(numbers) {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * Runs the benchmark; returns `{ name, baselineNsPerOp, subjectNsPerOp, ratio, target }`
 * (plus `baseline`, `maxRatio` and `pass` for tools/scripts/bench.js).
 */
/** Interleaved rounds of baseline and subject (alternating which goes first, so drift hits both alike); medians. */
function compare(baseline, subject, inputs) {
  // Warm both paths up so the JIT has optimised them before measuring.
  timeRound(baseline, inputs);
  timeRound(subject, inputs);
  const baselineTimes = [];
  const subjectTimes = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      baselineTimes.push(timeRound(baseline, inputs));
      subjectTimes.push(timeRound(subject, inputs));
    } else {
      subjectTimes.push(timeRound(subject, inputs));
      baselineTimes.push(timeRound(baseline, inputs));
    }
  }
  const baselineNsPerOp = median(baselineTimes);
  const subjectNsPerOp = median(subjectTimes);
  return { baselineNsPerOp, subjectNsPerOp, ratio: subjectNsPerOp / baselineNsPerOp };
}

function row(name, baseline, measured, target) {
  return {
    name,
    baseline,
    baselineNsPerOp: Number(measured.baselineNsPerOp.toFixed(1)),
    subjectNsPerOp: Number(measured.subjectNsPerOp.toFixed(1)),
    ratio: Number(measured.ratio.toFixed(3)),
    target,
    maxRatio: target,
    pass: measured.ratio <= target,
  };
}

/**
 * Runs the benchmark; returns two rows `{ name, baselineNsPerOp, subjectNsPerOp, ratio, target }`
 * (plus `baseline`, `maxRatio` and `pass` for tools/scripts/bench.js).
 */
function run() {
  const { direct, compiled, directPatterns, untrusted } = loadSubjects();
  return [
    row(
      'schema: CompiledSchema.validate vs ajv (small valid object)',
      'the same schema compiled by Ajv2020, called directly',
      compare(
        (value) => direct(value),
        (value) => compiled.validate(value).valid,
        values,
      ),
      TARGET_RATIO,
    ),
    row(
      'schema: untrusted pattern-heavy schema (linear-time engine) vs ajv with RegExp',
      'the same schema compiled by Ajv2020 with RegExp, called directly',
      compare(
        (value) => directPatterns(value),
        (value) => untrusted.validate(value).valid,
        patternValues,
      ),
      PATTERN_TARGET_RATIO,
    ),
  ];
}

module.exports = { run };

if (require.main === module) {
  for (const result of run()) {
    console.log(
      `${result.name}: ajv ${result.baselineNsPerOp} ns/op, @ca/schema ${result.subjectNsPerOp} ns/op, ratio ${result.ratio} (target <= ${result.target})`,
    );
    console.log(JSON.stringify(result));
    if (!result.pass) {
      console.error(`${result.name}: ratio ${result.ratio} is above ${result.target}`);
      process.exitCode = 1;
    }
  }
}
