import * as fs from 'node:fs';
import * as path from 'node:path';
import type { JsonSchema } from '@ca/domain';
import type { EngineChoice } from './schema-validator';
import { DefaultSchemaValidator } from './schema-validator';
import type { SchemaTrust } from './schema-trust';

/**
 * Runs the required draft 2020-12 tests of the official JSON Schema Test
 * Suite (kept in __fixtures__/json-schema-test-suite, MIT, see its SOURCE.md),
 * once as trusted schemas (RegExp) and once as untrusted ones (the linear-time
 * engine), and holds each result to its checked-in baseline of known
 * failures: a new failure fails, and so does a baseline entry that now passes.
 */

interface SuiteTest {
  readonly description: string;
  readonly data: unknown;
  readonly valid: boolean;
}
interface SuiteCase {
  readonly description: string;
  readonly schema: JsonSchema;
  readonly tests: readonly SuiteTest[];
}
interface BaselineEntry {
  readonly test: string;
  readonly reason: string;
}

const REQUIRED_PASS_RATE = 0.99;
const BASELINE_FILES: Readonly<Record<SchemaTrust, string>> = {
  trusted: path.join(__dirname, '__fixtures__', 'test-suite-baseline.json'),
  untrusted: path.join(__dirname, '__fixtures__', 'test-suite-baseline.untrusted.json'),
};
/** The optional tests of ECMAScript regular expressions, which show what the linear-time engine changes. */
const REGEX_OPTIONAL_FILES = ['optional/ecmascript-regex.json', 'optional/non-bmp-regex.json', 'optional/format/regex.json'];
const REMOTES_BASE = 'http://localhost:1234/';

function findSuite(): string {
  const suite = path.join(__dirname, '__fixtures__', 'json-schema-test-suite');
  if (!fs.existsSync(path.join(suite, 'tests', 'draft2020-12'))) {
    throw new Error(`JSON Schema Test Suite not found at ${suite}: it is part of the repository; restore it with git checkout -- ${suite}.`);
  }
  return suite;
}

function listJsonFiles(directory: string): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return listJsonFiles(full);
    return entry.name.endsWith('.json') ? [full] : [];
  });
}

function loadRemotes(suite: string): Record<string, JsonSchema> {
  const folder = path.join(suite, 'remotes');
  const remotes: Record<string, JsonSchema> = {};
  for (const file of listJsonFiles(folder)) {
    const relative = path.relative(folder, file).split(path.sep).join('/');
    remotes[REMOTES_BASE + relative] = JSON.parse(fs.readFileSync(file, 'utf8')) as JsonSchema;
  }
  return remotes;
}

interface SuiteRun {
  readonly engine: EngineChoice;
  readonly trust: SchemaTrust;
  /** Files under tests/draft2020-12; default every required file. */
  readonly files?: readonly string[];
  /** Assert formats (the optional format tests expect it). */
  readonly formats?: boolean;
}

function runSuite(suite: string, run: SuiteRun): { total: number; failures: Map<string, string> } {
  const validator = new DefaultSchemaValidator({ remotes: loadRemotes(suite), formats: run.formats === true }, run.engine);
  const directory = path.join(suite, 'tests', 'draft2020-12');
  const failures = new Map<string, string>();
  let total = 0;
  const files =
    run.files ??
    fs
      .readdirSync(directory)
      .filter((name) => name.endsWith('.json'))
      .sort();
  for (const file of files) {
    const cases = JSON.parse(fs.readFileSync(path.join(directory, file), 'utf8')) as SuiteCase[];
    for (const suiteCase of cases) {
      let compiled: ReturnType<typeof validator.compile> | undefined;
      let compileFailure = '';
      try {
        compiled = validator.compile(suiteCase.schema, { trust: run.trust });
      } catch (error) {
        compileFailure = `does not compile: ${(error as Error).message}`;
      }
      for (const test of suiteCase.tests) {
        total++;
        const name = `${file} / ${suiteCase.description} / ${test.description}`;
        if (compiled === undefined) {
          failures.set(name, compileFailure);
          continue;
        }
        const result = compiled.validate(test.data);
        if (!result.valid && result.issues.some((issue) => issue.keyword === 'exception' || issue.keyword === 'maxDepth')) {
          failures.set(name, `crashed: ${result.issues[0].message}`);
        } else if (result.valid !== test.valid) {
          failures.set(name, `wrong answer: ${test.valid ? 'valid' : 'invalid'} expected`);
        }
      }
    }
  }
  return { total, failures };
}

describe.each<SchemaTrust>(['trusted', 'untrusted'])('JSON Schema Test Suite, draft 2020-12 (required tests), %s schemas', (trust) => {
  const suite = findSuite();
  const { total, failures } = runSuite(suite, { engine: 'auto', trust });
  const baselineFile = BASELINE_FILES[trust];
  const baseline = JSON.parse(fs.readFileSync(baselineFile, 'utf8')) as BaselineEntry[];
  const passed = total - failures.size;

  beforeAll(() => {
    const percent = ((passed / total) * 100).toFixed(1);
    console.log(`JSON Schema Test Suite draft2020-12, ${trust} schemas: ${passed}/${total} passed (${percent}%)`);
    if (process.env.UPDATE_TEST_SUITE_BASELINE === '1') {
      const entries = [...failures].map(([test, reason]) => ({ test, reason }));
      fs.writeFileSync(baselineFile, JSON.stringify(entries, null, 2) + '\n');
    }
  });

  it('finds the whole suite', () => {
    expect(total).toBeGreaterThan(1200);
  });

  it(`passes at least ${REQUIRED_PASS_RATE * 100}% of the cases`, () => {
    expect(passed / total).toBeGreaterThanOrEqual(REQUIRED_PASS_RATE);
  });

  it('never crashes: no case throws, overflows the stack or hangs', () => {
    expect([...failures].filter(([, reason]) => reason.startsWith('crashed'))).toEqual([]);
  });

  it('fails no case outside the baseline', () => {
    const known = new Set(baseline.map((entry) => entry.test));
    expect([...failures.keys()].filter((test) => !known.has(test))).toEqual([]);
  });

  it('has no stale baseline entry (an entry that now passes must be removed)', () => {
    expect(baseline.map((entry) => entry.test).filter((test) => !failures.has(test))).toEqual([]);
  });
});

describe.each<SchemaTrust>(['trusted', 'untrusted'])('JSON Schema Test Suite, draft 2020-12, through the fallback interpreter alone, %s schemas', (trust) => {
  it('passes every required case, so that any schema routed to it is validated to the specification', () => {
    const { total, failures } = runSuite(findSuite(), { engine: 'interpreter', trust });
    expect(total).toBeGreaterThan(1200);
    expect([...failures]).toEqual([]);
  });
});

describe('JSON Schema Test Suite, optional ECMAScript regular expression tests', () => {
  const suite = findSuite();
  const trusted = runSuite(suite, { engine: 'auto', trust: 'trusted', files: REGEX_OPTIONAL_FILES, formats: true });
  const untrusted = runSuite(suite, { engine: 'auto', trust: 'untrusted', files: REGEX_OPTIONAL_FILES, formats: true });
  const interpreted = runSuite(suite, { engine: 'interpreter', trust: 'untrusted', files: REGEX_OPTIONAL_FILES, formats: true });

  beforeAll(() => {
    for (const [name, run] of [
      ['trusted', trusted],
      ['untrusted', untrusted],
    ] as const) {
      console.log(`JSON Schema Test Suite draft2020-12 optional regex tests, ${name} schemas: ${run.total - run.failures.size}/${run.total} passed`);
    }
  });

  it('the linear-time engine gives the same answers as RegExp, except where a schema uses lookaround or backreferences', () => {
    const lost = [...untrusted.failures].filter(([test]) => !trusted.failures.has(test));
    // Every case the untrusted path loses is a schema refused for a construct RE2 cannot run, never a wrong answer.
    expect(lost.filter(([, reason]) => !/does not compile: .*(?:lookahead|lookbehind|backreference)/.test(reason))).toEqual([]);
    expect(untrusted.total).toBeGreaterThan(50);
  });

  it('ajv and the interpreter agree on untrusted schemas', () => {
    expect([...interpreted.failures.keys()].sort()).toEqual([...untrusted.failures.keys()].sort());
  });
});
