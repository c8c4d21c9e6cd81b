// Type-checks README blocks with the TypeScript compiler API and runs the
// complete ones with Node. The blocks are written to a folder inside the
// workspace, so `@ca/*` resolves as it does for a service that installed the
// packages: through node_modules to each package's exports, its built
// declarations (dist/*.d.ts) and its built code.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import ts from 'typescript';
import type { CodeBlock } from './readme-blocks';

/** A block written to disk. */
export interface WrittenBlock {
  readonly block: CodeBlock;
  /** Where the source was written (`.mts`, `.mjs` or `.cjs`). */
  readonly source: string;
  /** Where the compiled program is (`.mjs` or `.cjs`, under `out/`). */
  readonly program: string;
}

/** The compiler options of a service written in TypeScript that consumes the packages as ES modules. */
export function exampleCompilerOptions(workspaceRoot: string, folder: string): ts.CompilerOptions {
  return {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    typeRoots: [join(workspaceRoot, 'node_modules', '@types')],
    strict: true,
    // For class-based tools resolved through tsyringe; decorator metadata stays off, as in the workspace.
    experimentalDecorators: true,
    esModuleInterop: true,
    skipLibCheck: true,
    allowJs: true,
    checkJs: true,
    rootDir: folder,
    outDir: join(folder, 'out'),
    noEmitOnError: false,
    forceConsistentCasingInFileNames: true,
  };
}

/** Writes each block as its own module under `folder`, named after its file and line. */
export function writeBlocks(blocks: readonly CodeBlock[], folder: string, workspaceRoot: string): WrittenBlock[] {
  return blocks.map((block) => {
    const name = `${relative(workspaceRoot, block.file).replace(/[^A-Za-z0-9]+/g, '-')}-${block.line}`;
    const [sourceExtension, programExtension] = block.language === 'ts' ? ['.mts', '.mjs'] : block.language === 'js' ? ['.mjs', '.mjs'] : ['.cjs', '.cjs'];
    const source = join(folder, `${name}${sourceExtension}`);
    writeFileSync(source, block.code);
    return { block, source, program: join(folder, 'out', `${name}${programExtension}`) };
  });
}

/** One compiler diagnostic, placed on the README line it comes from. */
export interface BlockDiagnostic {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/**
 * Type-checks every block in one program and emits the compiled programs.
 * Returns the diagnostics of each block (by its source path), placed on the
 * lines of its README.
 */
export function typeCheckBlocks(written: readonly WrittenBlock[], options: ts.CompilerOptions): Map<string, BlockDiagnostic[]> {
  const program = ts.createProgram({ rootNames: written.map((entry) => entry.source), options });
  const bySource = new Map(written.map((entry) => [ts.sys.resolvePath(entry.source), { entry, found: [] as BlockDiagnostic[] }]));
  const emitted = program.emit();
  for (const diagnostic of [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics]) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    const target = diagnostic.file === undefined ? undefined : bySource.get(ts.sys.resolvePath(diagnostic.file.fileName));
    if (target === undefined || diagnostic.file === undefined || diagnostic.start === undefined) {
      // Not placed in a block (options, a declaration file): it concerns every block.
      for (const { found } of bySource.values())
        found.push({ file: diagnostic.file?.fileName ?? '(compiler)', line: 0, message: `TS${diagnostic.code}: ${message}` });
      continue;
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    target.found.push({ file: target.entry.block.file, line: target.entry.block.line + 1 + line, message: `TS${diagnostic.code}: ${message}` });
  }
  return new Map([...bySource.values()].map(({ entry, found }) => [entry.source, found]));
}

/** How a run ended. */
export interface RunOutcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** It did not end within the hang guard and was killed. */
  readonly hung: boolean;
  /**
   * Processes it started were still alive a while after it ended (killed
   * since): in its process group, or in another group (an MCP server, a
   * detached child) but still working in its folder.
   */
  readonly leftBehind: boolean;
}

/** Bounds of {@link runBlock}: hang guards, not expectations of speed. */
export interface RunLimits {
  /** A run still going after this long is killed and reported as hung. */
  readonly hangGuardMs?: number;
  /** A process of the run's group still alive this long after the run ended was left behind. */
  readonly leftoverGraceMs?: number;
}

/**
 * Runs a compiled block with Node in its own process group, in a fresh
 * working folder under `folder` (inside the workspace, so that `npx` finds the
 * workspace's packages instead of fetching them), which is also its TMPDIR. A run that outlives its
 * hang guard is killed; so is anything of its group that outlives it.
 */
export async function runBlock(entry: WrittenBlock, folder: string, { hangGuardMs = 120_000, leftoverGraceMs = 10_000 }: RunLimits = {}): Promise<RunOutcome> {
  const cwd = realpathSync(mkdtempSync(join(folder, 'run-')));
  // Temporary folders the example makes (os.tmpdir()) go in its working folder, removed with the check's.
  const env = { ...process.env, TMPDIR: cwd, TMP: cwd, TEMP: cwd };
  const child = spawn(process.execPath, [entry.program], { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let hung = false;
  const guard = setTimeout(() => {
    hung = true;
    if (child.pid !== undefined) kill(-child.pid);
  }, hangGuardMs);
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (exitCode, exitSignal) => resolve({ code: exitCode, signal: exitSignal }));
  }).finally(() => clearTimeout(guard));
  // Whatever the example started is stopped with it: a process of its group, or one still working in
  // its folder, that is still there a while later was left behind.
  const group = child.pid === undefined ? [] : [-child.pid];
  const survivors = (): number[] => [...group.filter(isAlive), ...processesWorkingIn(cwd)];
  let leftBehind = false;
  for (let attempt = 0; survivors().length > 0; attempt++) {
    if (attempt * 100 >= leftoverGraceMs) {
      leftBehind = true;
      for (const pid of survivors()) kill(pid);
      break;
    }
    await sleep(100);
  }
  return { code, signal, stdout, stderr, hung, leftBehind };
}

/** Processes whose working folder is `folder` or below it (Linux: /proc/<pid>/cwd); none elsewhere. */
function processesWorkingIn(folder: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cwd = readlinkSync(`/proc/${name}/cwd`);
      if (cwd === folder || cwd.startsWith(`${folder}${sep}`)) pids.push(Number(name));
    } catch {
      // gone since the listing, a zombie, or not ours to read
    }
  }
  return pids;
}

/** Whether a process, or a process group (negative id), still exists. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILL to a process, or to a process group (negative id). */
function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}
