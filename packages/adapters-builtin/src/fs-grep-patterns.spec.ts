import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createExecutionContext, type PlanContext } from '@ca/tool-context';
import type { ToolRuntime } from '@ca/tool-lifecycle';
import { codeOf, folderResource, makeTemporaryFolder, removeTemporaryFolders, strictRuntime } from './workspace.test-helper';

/** RegExp needs about 37 s to refuse `^(a+)+$` on 30 `a` and a `!`; this file holds many such lines. */
const ATTACK_LINE = `${'a'.repeat(30)}!`;
/** The error of a failed result. */
function errorOf(
  result: { readonly ok: true } | { readonly ok: false; readonly error: Error & { readonly code?: string } },
): Error & { readonly code?: string } {
  if (result.ok) throw new Error('expected a failed result');
  return result.error;
}

/** Longest the event loop may stall: far below one backtracking match, far above any scheduling hiccup. */
const MAX_STALL_MS = 5_000;

describe('builtin.fs.grep: the model’s pattern runs on the linear-time engine', () => {
  let work: string;
  let runtime: ToolRuntime;
  let ctx: PlanContext;
  const grep = (input: Record<string, unknown>) => runtime.execute<any>('builtin.fs.grep', input, ctx);

  beforeEach(async () => {
    work = await makeTemporaryFolder();
    ({ runtime } = strictRuntime());
    ctx = createExecutionContext({ planId: 'plan-grep', resources: [folderResource('work', work, 'read')] });
  });

  afterEach(removeTemporaryFolders);

  it('searches a real file of attack lines with ^(a+)+$, returns the one real match, and never stalls the process', async () => {
    const lines = Array.from({ length: 2_000 }, () => ATTACK_LINE);
    lines.splice(1_000, 0, 'a'.repeat(30));
    await writeFile(join(work, 'attack.txt'), `${lines.join('\n')}\n`);
    // A long line (under grep's 64 KB line cap), where `(a|aa)+$` makes RegExp retry from every position.
    await writeFile(join(work, 'long.txt'), `${'a'.repeat(50_000)}!\n`);
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    let ticks = 0;
    const heartbeat = setInterval(() => ticks++, 1);
    stalls.enable();
    let results;
    try {
      results = await Promise.all([
        grep({ pattern: '^(a+)+$', path: 'attack.txt' }),
        grep({ pattern: '(a|aa)+$', path: 'long.txt' }),
        grep({ pattern: '(a*)*b' }),
      ]);
    } finally {
      stalls.disable();
      clearInterval(heartbeat);
    }
    const [attack, long, tree] = results;
    expect(attack).toMatchObject({ ok: true, output: { matches: [{ line: 1_001, text: 'a'.repeat(30) }], filesSearched: 1, truncated: false } });
    expect(long).toMatchObject({ ok: true, output: { matches: [], filesSearched: 1 } });
    expect(tree).toMatchObject({ ok: true, output: { matches: [], filesSearched: 2 } });
    expect(ticks).toBeGreaterThan(0);
    expect(stalls.max / 1e6).toBeLessThan(MAX_STALL_MS);
  });

  it.each([
    ['lookahead', 'foo(?=bar)', /lookahead/],
    ['lookbehind', '(?<!x)foo', /lookbehind/],
    ['a backreference', '(a)\\1', /backreference/],
  ])('refuses %s with BUILTIN_INVALID_INPUT, saying the dialect', async (_, pattern, construct) => {
    await writeFile(join(work, 'a.txt'), 'foobar\n');
    const result = await grep({ pattern });
    expect(codeOf(result)).toBe('BUILTIN_INVALID_INPUT');
    expect(errorOf(result).message).toMatch(construct);
    expect(errorOf(result).message).toMatch(/RE2 syntax, without lookaround or backreferences/);
    expect(errorOf(result).cause).toMatchObject({ code: 'PATTERN_INVALID', problem: 'unsupported' });
  });

  it('refuses an invalid pattern with BUILTIN_INVALID_INPUT and the parser’s reason', async () => {
    const result = await grep({ pattern: 'a(b' });
    expect(codeOf(result)).toBe('BUILTIN_INVALID_INPUT');
    expect(errorOf(result).message).toMatch(/not valid RE2 syntax \(missing closing \): `a\(b`\).*literal: true/);
  });

  it('reads RE2 syntax: flags, Unicode classes, case folding; literal text is searched as is', async () => {
    await writeFile(join(work, 'notes.md'), 'TODO: café\nsee a.b(c)\nnothing\n');
    expect((await grep({ pattern: '(?i)todo' })).output.matches.map((match: { line: number }) => match.line)).toEqual([1]);
    expect((await grep({ pattern: 'caf\\pL$' })).output.matches.map((match: { line: number }) => match.line)).toEqual([1]);
    expect((await grep({ pattern: 'CAFÉ', ignoreCase: true })).output.matches.map((match: { line: number }) => match.line)).toEqual([1]);
    expect((await grep({ pattern: 'a.b(c)', literal: true })).output.matches.map((match: { line: number }) => match.line)).toEqual([2]);
    expect((await grep({ pattern: 'a.b(?=c)', literal: true })).output.matches).toEqual([]);
  });
});
