// Every TypeScript and JavaScript block of the root README and of every
// package README is type-checked against the built packages, and run when it
// is a complete program (every block not marked `typecheck-only`): an example
// that crashes as written, or no longer compiles, fails the tests. The
// packages are built first (the project's test target depends on ^build).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { exampleCompilerOptions, runBlock, typeCheckBlocks, writeBlocks, type BlockDiagnostic, type WrittenBlock } from './check-blocks';
import { extractBlocks, type CodeBlock } from './readme-blocks';

const workspaceRoot = join(__dirname, '..', '..', '..');
const readmes = [
  join(workspaceRoot, 'README.md'),
  ...readdirSync(join(workspaceRoot, 'packages'))
    .sort()
    .map((name) => join(workspaceRoot, 'packages', name, 'README.md'))
    .filter((file) => existsSync(file)),
];
const extracted = readmes.map((file) => ({ file, ...extractBlocks(readFileSync(file, 'utf8'), file) }));
const blocks = extracted.flatMap((entry) => entry.blocks);
const where = (block: { file: string; line: number }): string => `${relative(workspaceRoot, block.file)}:${block.line}`;

function describeDiagnostics(list: readonly BlockDiagnostic[]): string {
  return list.map((diagnostic) => `${relative(workspaceRoot, diagnostic.file)}:${diagnostic.line}: ${diagnostic.message}`).join('\n');
}

let folder: string;

beforeAll(() => {
  mkdirSync(join(workspaceRoot, 'tmp'), { recursive: true });
  folder = mkdtempSync(join(workspaceRoot, 'tmp', 'readme-check-'));
});

afterAll(() => {
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

describe('README code blocks', () => {
  let written: Map<CodeBlock, WrittenBlock>;
  let diagnostics: Map<string, BlockDiagnostic[]>;

  beforeAll(() => {
    const examples = join(folder, 'examples');
    mkdirSync(examples);
    const files = writeBlocks(blocks, examples, workspaceRoot);
    written = new Map(files.map((entry) => [entry.block, entry]));
    diagnostics = typeCheckBlocks(files, exampleCompilerOptions(workspaceRoot, examples));
  });

  it('every fence names its language, and a checked one only known options', () => {
    expect(extracted.flatMap((entry) => entry.problems.map((problem) => `${where(problem)}: ${problem.message}`))).toEqual([]);
  });

  it('finds the examples of the root README and of every package README that shows code', () => {
    const withBlocks = new Set(blocks.map((block) => relative(workspaceRoot, block.file)));
    expect([...withBlocks].sort()).toEqual(
      expect.arrayContaining([
        'README.md',
        'packages/adapters-builtin/README.md',
        'packages/adapters-custom/README.md',
        'packages/adapters-mcp/README.md',
        'packages/adapters-skills/README.md',
        'packages/adapters-wrapped/README.md',
        'packages/sandbox/README.md',
        'packages/schema/README.md',
        'packages/tool-context/README.md',
        'packages/tool-lifecycle/README.md',
      ]),
    );
  });

  it.each(blocks.map((block) => [where(block), block] as const))('%s type-checks', (_where, block) => {
    const found = diagnostics.get(written.get(block)!.source) ?? [];
    if (found.length > 0) throw new Error(`The example does not type-check:\n${describeDiagnostics(found)}`);
  });

  const runnable = blocks.filter((block) => block.mode === 'run');
  it.each(runnable.map((block) => [where(block), block] as const))('%s runs to the end and leaves no process behind', async (_where, block) => {
    const outcome = await runBlock(written.get(block)!, folder);
    if (outcome.hung) throw new Error(`The example did not end (killed):\n${outcome.stderr.slice(-4000)}`);
    if (outcome.code !== 0 || outcome.signal !== null) {
      throw new Error(
        `The example failed (${outcome.signal ?? `exit code ${outcome.code}`}). If it cannot run here (it needs a server at a made-up address), ` +
          `mark its fence \`\`\`ts typecheck-only.\n${outcome.stderr.slice(-4000)}`,
      );
    }
    expect(outcome.leftBehind).toBe(false);
  });
});

describe('the check itself', () => {
  const selfTest = (line: number, code: string): CodeBlock => ({ file: join(workspaceRoot, 'SELF-TEST.md'), line, language: 'ts', mode: 'run', code });
  let checks: string;

  beforeAll(() => {
    checks = join(folder, 'self-test');
    mkdirSync(checks);
  });

  it('refuses an example that imports tsyringe before @ca/tool-lifecycle: it type-checks, and crashes as written', async () => {
    const program = (first: string, second: string): string =>
      [first, second, 'const services = container.createChildContainer();', 'registerToolRuntime(services);', 'services.resolve(TOOL_RUNTIME);', ''].join('\n');
    const lifecycle = "import { registerToolRuntime, TOOL_RUNTIME } from '@ca/tool-lifecycle';";
    const tsyringe = "import { container } from 'tsyringe';";
    const [tsyringeFirst, lifecycleFirst] = writeBlocks(
      [selfTest(1, program(tsyringe, lifecycle)), selfTest(20, program(lifecycle, tsyringe))],
      checks,
      workspaceRoot,
    );
    const found = typeCheckBlocks([tsyringeFirst!, lifecycleFirst!], exampleCompilerOptions(workspaceRoot, checks));
    expect([...found.values()].flat()).toEqual([]);
    const crashed = await runBlock(tsyringeFirst!, folder);
    expect(crashed).toMatchObject({ code: 1, hung: false, leftBehind: false });
    expect(crashed.stderr).toContain('tsyringe requires a reflect polyfill');
    expect(await runBlock(lifecycleFirst!, folder)).toMatchObject({ code: 0, hung: false, leftBehind: false, stderr: '' });
  });

  it('reports a block that does not type-check on the README line it comes from', () => {
    const [entry] = writeBlocks([selfTest(40, "const count: number = 'three';\nconsole.log(count);\n")], checks, workspaceRoot);
    const found = typeCheckBlocks([entry!], exampleCompilerOptions(workspaceRoot, checks)).get(entry!.source);
    expect(found).toEqual([
      { file: join(workspaceRoot, 'SELF-TEST.md'), line: 41, message: expect.stringMatching(/^TS2322: Type 'string' is not assignable to type 'number'/) },
    ]);
  });

  it.each([
    ['in its process group', '{ stdio: "ignore" }'],
    ['in a process group of its own, as MCP servers are', '{ stdio: "ignore", detached: true }'],
  ])('reports a process the example left running %s, and kills it', async (_label, options) => {
    const [entry] = writeBlocks(
      [
        selfTest(
          60,
          `import { spawn } from 'node:child_process';\nimport { writeFileSync } from 'node:fs';\n` +
            `const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], ${options});\n` +
            `writeFileSync('leftover.pid', String(child.pid));\nchild.unref();\n`,
        ),
      ],
      checks,
      workspaceRoot,
    );
    typeCheckBlocks([entry!], exampleCompilerOptions(workspaceRoot, checks));
    const before = new Set(readdirSync(folder));
    // The process it leaves never exits, so a short grace decides as well as a long one.
    expect(await runBlock(entry!, folder, { leftoverGraceMs: 500 })).toMatchObject({ code: 0, leftBehind: true });
    const [runFolder] = readdirSync(folder).filter((name) => !before.has(name));
    const pid = Number(readFileSync(join(folder, runFolder!, 'leftover.pid'), 'utf8'));
    expect(pid).toBeGreaterThan(0);
    expect(await goneWithin(pid, 10_000)).toBe(true);
  });
});

/** Whether a killed process is gone (reaped) within `ms`: a hang guard, not a speed check. */
async function goneWithin(pid: number, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += 50) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}
