// Every benchmark, run as `npm run bench` runs it (its own process, with
// --expose-gc) but with BENCH_SMOKE=1: tiny counts, so that a benchmark that
// no longer runs fails the tests instead of going unnoticed until the next
// `npm run bench`. Nothing here looks at speed: figures from counts this small
// mean nothing, and targets are not checked. The benchmarks load the packages'
// dist/, which the project's test target builds first (dependsOn ^build).
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const benchDir = join(__dirname, '..');
const benchFiles = readdirSync(benchDir)
  .filter((file) => file.endsWith('.bench.js'))
  .sort();

/** The runner of tools/scripts/bench.js: run() of one file, its rows as JSON after a marker. */
const runner = `
const file = process.argv[1];
Promise.resolve(require(file).run()).then(
  (rows) => process.stdout.write('\\n@@BENCH@@' + JSON.stringify(Array.isArray(rows) ? rows : [rows]) + '\\n'),
  (error) => { console.error(error); process.exit(1); },
);`;

interface Outcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs one benchmark; a process that outlives its hang guard is killed and reported. */
function runBench(file: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '-e', runner, join(benchDir, file)], {
      cwd: join(benchDir, '..', '..'),
      env: { ...process.env, BENCH_SMOKE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // A benchmark that leaves a handle open (a server, a timer) never exits: that is a failure too.
    const guard = setTimeout(() => child.kill('SIGKILL'), 100_000);
    child.once('error', (error) => {
      clearTimeout(guard);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const NUMERIC_FIELDS = ['baselineNs', 'subjectNs', 'baselineNsPerOp', 'subjectNsPerOp', 'ratio', 'maxRatio'] as const;

describe('benchmarks, smoke run (BENCH_SMOKE=1)', () => {
  it('finds the benchmarks', () => {
    expect(benchFiles).toEqual(expect.arrayContaining(['context.bench.js', 'mcp.bench.js', 'runtime.bench.js', 'soak.bench.js']));
  });

  it.each(benchFiles)('%s runs to the end, exits, and returns well-formed rows', async (file) => {
    const outcome = await runBench(file);
    if (outcome.code !== 0 || outcome.signal !== null) {
      throw new Error(
        `${file} exited with ${outcome.signal ?? outcome.code} (killed when it does not exit: a handle left open):\n${outcome.stderr.slice(-4000)}`,
      );
    }
    const marker = outcome.stdout.lastIndexOf('@@BENCH@@');
    if (marker < 0) throw new Error(`${file} printed no rows:\n${outcome.stdout.slice(-2000)}`);
    const rows = JSON.parse(outcome.stdout.slice(marker + '@@BENCH@@'.length)) as Record<string, unknown>[];
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(typeof row['name']).toBe('string');
      expect(String(row['name']).length).toBeGreaterThan(0);
      // Each row carries its baseline and its subject, as figures or as text.
      expect(row['baselineNs'] ?? row['baselineNsPerOp'] ?? row['baselineValue']).toBeDefined();
      expect(row['subjectNs'] ?? row['subjectNsPerOp'] ?? row['subjectValue']).toBeDefined();
      for (const field of NUMERIC_FIELDS) {
        if (row[field] === undefined) continue;
        expect({ row: row['name'], field, finite: Number.isFinite(row[field]) && (row[field] as number) >= 0 }).toEqual({
          row: row['name'],
          field,
          finite: true,
        });
      }
      if (row['pass'] !== undefined) expect(typeof row['pass']).toBe('boolean');
    }
  });
});
