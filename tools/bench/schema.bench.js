'use strict';
// Benchmark of @ca/schema: CompiledSchema.validate against the same schema
// compiled by ajv (Ajv2020, same options) and called directly, on a small
// valid object. Rounds are interleaved and the median ns/op of each side is
// compared; the service may add at most 20% (ratio <= 1.20).
//
// Usage: node tools/bench/schema.bench.js  (needs `nx run @ca/schema:build` first)

const path = require('node:path');
const { scaled } = require('./harness');

const TARGET_RATIO = 1.2;
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
  const compiled = service.createSchemaValidator().compile(schema);
  for (const value of values) {
    if (direct(value) !== true || compiled.validate(value).valid !== true) throw new Error('benchmark values must be valid');
  }
  return { direct, compiled };
}

function timeRound(check) {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let index = 0; index < ITERATIONS; index++) {
    if (check(values[index % values.length])) sink++;
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
function run() {
  const { direct, compiled } = loadSubjects();
  const baseline = (value) => direct(value);
  const subject = (value) => compiled.validate(value).valid;
  // Warm both paths up so the JIT has optimised them before measuring.
  timeRound(baseline);
  timeRound(subject);
  const baselineTimes = [];
  const subjectTimes = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which side goes first so drift (thermal, GC) hits both alike.
    if (round % 2 === 0) {
      baselineTimes.push(timeRound(baseline));
      subjectTimes.push(timeRound(subject));
    } else {
      subjectTimes.push(timeRound(subject));
      baselineTimes.push(timeRound(baseline));
    }
  }
  const baselineNsPerOp = median(baselineTimes);
  const subjectNsPerOp = median(subjectTimes);
  const ratio = subjectNsPerOp / baselineNsPerOp;
  return {
    name: 'schema: CompiledSchema.validate vs ajv (small valid object)',
    baseline: 'the same schema compiled by Ajv2020, called directly',
    baselineNsPerOp: Number(baselineNsPerOp.toFixed(1)),
    subjectNsPerOp: Number(subjectNsPerOp.toFixed(1)),
    ratio: Number(ratio.toFixed(3)),
    target: TARGET_RATIO,
    maxRatio: TARGET_RATIO,
    pass: ratio <= TARGET_RATIO,
  };
}

module.exports = { run };

if (require.main === module) {
  const result = run();
  console.log(
    `${result.name}: ajv ${result.baselineNsPerOp} ns/op, @ca/schema ${result.subjectNsPerOp} ns/op, ratio ${result.ratio} (target <= ${result.target})`,
  );
  console.log(JSON.stringify(result));
  if (result.ratio > result.target) {
    console.error(`@ca/schema adds more than ${Math.round((result.target - 1) * 100)}% over ajv`);
    process.exitCode = 1;
  }
}
